import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Task } from '../../shared/task.js';
import { openBranchController, startEpisode } from '../../electron/engine/harness/episode-factory.js';
import { runVerifier } from '../../electron/engine/harness/verifier.js';
import type { DockerSandbox } from '../../electron/engine/sandbox/docker-sandbox.js';
import { defaultSandboxConfig } from '../../electron/engine/sandbox/limits.js';
import { WarmPool } from '../../electron/engine/sandbox/warm-pool.js';
import { useTestProvider, describeDocker } from '../support/docker.js';
import { script, task, tempHome } from '../support/harness.js';

const execFileAsync = promisify(execFile);

/** A shell loop printing the pids of waiting verifier runners (`# stepbox verifier runner` is the first line of their program). */
/** A shell loop printing the pids of the helper's idle shells (`# zygote` ends their bash's command). */
const ZYGOTE_PIDS =
  'for d in /proc/[0-9]*; do tr "\\0" " " < $d/cmdline 2>/dev/null | grep -q "^/[^ ]*bash -c .*# zygote " && echo ${d#/proc/}; done';
const RUNNER_PIDS =
  'for d in /proc/[0-9]*; do tr "\\0" " " < $d/cmdline 2>/dev/null | grep -q "^/opt/stepbox/runtime/lib/ld.so .*/python3 -I -S -c # stepbox verifier runner" && echo ${d#/proc/}; done';

describeDocker('warm pool on docker', () => {
  const provider = useTestProvider();
  let pool: WarmPool;
  const config = defaultSandboxConfig({ memory: '256m' });

  beforeAll(async () => {
    pool = new WarmPool(provider(), { size: 2 });
  });

  afterAll(async () => {
    await pool.close();
  });

  it('hands over a sandbox it started ahead: its container existed before the acquire, and its first call runs', async () => {
    // How much faster that is than a cold start is the bench's (`warm_acquire_ms`,
    // `warm_vs_cold_ratio`, `warm_target_met`): timed here, a loaded machine failed it (a warm
    // acquire of 654 ms beside a cold start of 971 ms while dockerd served other tests).
    await pool.prewarm(config);
    expect(pool.stats()).toEqual([expect.objectContaining({ ready: 2 })]);
    const asked = Date.now();
    const sb = (await pool.acquire(config)) as DockerSandbox;
    const r = await sb.exec({ command: 'true', timeoutMs: 5_000 });
    expect(r.ok).toBe(true);
    const { stdout } = await execFileAsync('docker', ['inspect', '-f', '{{.Created}}', sb.id]);
    expect(Date.parse(stdout.trim())).toBeLessThan(asked);
    // The pool started another in its place, not in the acquire's way.
    expect(pool.stats()[0].ready + pool.stats()[0].starting).toBeGreaterThanOrEqual(1);
    await pool.release(sb);
  });

  it('resets a released sandbox: empty workspace, /tmp, $HOME and /dev/shm, fresh session, no strays', async () => {
    const sb = await pool.acquire(config);
    await sb.exec({
      command:
        'echo dirty > /workspace/x && mkdir -p /workspace/d/ro && chmod 555 /workspace/d/ro && touch /tmp/t ~/.profile-x /dev/shm/s && ' +
        'cd /workspace/d && export DIRTY=1 && (setsid sleep 999 &)',
      timeoutMs: 5_000,
    });
    await sb.reset();
    const r = await sb.exec({
      command:
        'pwd; echo "[$DIRTY]"; ls -A /workspace /tmp ~ /dev/shm | grep -v stepbox-helper; pgrep -c sleep',
      timeoutMs: 5_000,
    });
    expect(r.stdout).toBe('/workspace\n[]\n/dev/shm:\n\n/home/agent:\n\n/tmp:\n\n/workspace:\n1\n');
    await pool.release(sb);
  });

  it("a recycled sandbox whose verifier took the runner's exec (files) has its next runner waiting (root, out of reach, used by the next verification, started beside the last one); a plain verifier (the helper's) starts none; an episode without a verifier lets one go before its setup", async () => {
    const sb = (await pool.acquire(config)) as DockerSandbox;
    /** A verification that needs the runner's own exec (files only the verifier may see). */
    const viaRunner = (command: string) => sb.runVerifier({ command, timeoutMs: 30_000, files: {} });
    const home = tempHome(provider());
    /** Pids of waiting verifier runners, seen as root from outside the helper; async, so the host's own exec of one can proceed. */
    const runners = async () =>
      (
        await execFileAsync(
          'docker',
          ['exec', '-u', '0:0', '-w', '/', sb.id, '/bin/sh', '-c', `${RUNNER_PIDS}; true`],
          { encoding: 'utf8' },
        )
      ).stdout
        .split('\n')
        .filter(Boolean);
    const waitForRunner = async () => {
      for (let i = 0; i < 200; i++) {
        const found = await runners();
        if (found.length) return found;
      }
      throw new Error('no verifier runner came up after the reset');
    };
    try {
      // No verification yet: a reset starts nothing.
      await sb.reset();
      expect(await runners()).toEqual([]);
      // A plain verifier is the helper's own: nothing waits for the next one either.
      const plain = await runVerifier({ verifier: { command: 'true', timeout: 30 } } as unknown as Task, sb);
      expect(plain).toMatchObject({ success: true, exit_code: 0, ran: { channel: 'helper' } });
      await sb.reset();
      expect(await runners()).toEqual([]);
      const passes = await viaRunner('true');
      expect(passes).toMatchObject({ exitCode: 0, channel: 'exec' });
      await sb.reset();
      const [runner] = await waitForRunner();
      // The next episode's agent goes for it: its stdin, a signal, every process.
      await sb.exec({
        command: `echo '["true","30000","1024","1000"]' > /proc/${runner}/fd/0; kill -STOP ${runner}; kill -9 ${runner}; kill -9 -1`,
        timeoutMs: 30_000,
      });
      expect(await runners()).toEqual([runner]);
      const fails = await viaRunner("python3 -c 'import sys; sys.exit(1)'");
      expect(fails).toMatchObject({ exitCode: 1, channel: 'exec', uid: 1000 });
      // Used once: gone. A recycled sandbox's next runner started beside that verification,
      // outlived its kill of the agent's processes, and outlives the reset.
      const next = await waitForRunner();
      expect(next).not.toContain(runner);
      expect(next).toHaveLength(1);
      // Recycled again into an episode of a task without a verifier: its setup (and every
      // step after) finds no runner, as in a fresh sandbox.
      await sb.reset();
      expect(await runners()).toEqual(next);
      const noVerifier = task({
        name: 'no-verifier',
        goal: 'look around',
        workspace: { setup: [`(${RUNNER_PIDS}) > seen.txt; true`] },
      });
      const episode = await startEpisode({
        task: noVerifier,
        agentSpec: `scripted:${script(home.dir, 'agent.jsonl', [{ content: 'done' }])}`,
        store: home.store,
        parts: home.parts,
        supply: { acquire: async () => sb, release: async () => undefined },
      });
      try {
        const seen = await sb.readFile('seen.txt');
        expect(seen.ok && Buffer.from(seen.value).toString('utf8')).toBe('');
        expect(await runners()).toEqual([]);
      } finally {
        await episode.dispose();
      }
      // A branch of that episode opened in the sandbox recycled once more, after another
      // verification: it lets the waiting runner go too.
      await viaRunner('true');
      await sb.reset();
      await waitForRunner();
      const branch = await openBranchController({
        id: episode.episode,
        at: 0,
        branchNow: true,
        store: home.store,
        parts: home.parts,
        supply: { acquire: async () => sb, release: async () => undefined },
      });
      try {
        expect(await runners()).toEqual([]);
      } finally {
        await branch.dispose();
      }
    } finally {
      await pool.release(sb);
      home.cleanup();
    }
  });

  it("a verifier's kill of the agent's processes starts no idle shells until the host asks for something; the next call runs", async () => {
    const sb = (await pool.acquire(config)) as DockerSandbox;
    /** The helper's idle shells (bash waiting for a call, `# zygote` in its command line). */
    const idleShells = async () =>
      (
        await execFileAsync(
          'docker',
          ['exec', '-u', '0:0', '-w', '/', sb.id, '/bin/sh', '-c', `${ZYGOTE_PIDS}; true`],
          { encoding: 'utf8' },
        )
      ).stdout
        .split('\n')
        .filter(Boolean);
    try {
      await sb.exec({ command: 'echo ok > out.txt', timeoutMs: 30_000 });
      await sb.sessionState();
      expect(await idleShells()).toHaveLength(2);
      const verdict = await runVerifier(
        { verifier: { command: 'grep -qx ok out.txt', timeout: 30 } } as unknown as Task,
        sb,
      );
      // Both idle shells were the agent's: killed before the verifier ran (and none started
      // in their place to be killed again after it, or by the reset that follows).
      expect(verdict).toMatchObject({ success: true, ran: { killed: 2 } });
      expect(await idleShells()).toEqual([]);
      const r = await sb.exec({ command: 'cat out.txt', timeoutMs: 30_000 });
      expect(r).toMatchObject({ ok: true, exit_code: 0, stdout: 'ok\n' });
      // The host asked: the pool is filled again.
      await sb.sessionState();
      for (let i = 0; i < 200 && (await idleShells()).length < 2; i++);
      expect(await idleShells()).toHaveLength(2);
    } finally {
      await pool.release(sb);
    }
  });
});
