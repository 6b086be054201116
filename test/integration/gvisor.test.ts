import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { afterAll, describe, expect, it } from 'vitest';
import { DockerEngine } from '../../electron/engine/docker/client.js';
import { ownedContainers } from '../../electron/engine/docker/owner.js';
import { GVISOR_RUNTIME } from '../../electron/engine/docker/runtime.js';
import { openTerminal } from '../../electron/engine/docker/terminal.js';
import { DiskSnapshotStore } from '../../electron/engine/sandbox/disk-snapshot-store.js';
import {
  createDockerProvider,
  type DockerSandboxProvider,
} from '../../electron/engine/sandbox/docker-provider.js';
import { SANDBOX_IMAGE } from '../../shared/constants.js';
import { parseJsonOutput, runCli } from '../support/cli.js';
import { CONFORMANCE_CONFIG, sandboxConformance } from '../support/sandbox-conformance.js';

/**
 * The sandbox on gVisor (`runsc`): the conformance suite, `sandbox selftest --runtime runsc`,
 * doctor naming the runtimes, an unknown runtime refused, and one episode + rollback + fork,
 * against a second dockerd at STEPBOX_GVISOR_HOST that offers runsc (.ci/gvisor.sh starts it
 * on a private socket beside the main engine and loads the image). Without it a local run
 * skips this file; under CI=true it fails.
 */
const GVISOR_HOST = process.env.STEPBOX_GVISOR_HOST;

const engine = GVISOR_HOST?.startsWith('unix://')
  ? new DockerEngine(new Docker({ socketPath: GVISOR_HOST.slice('unix://'.length) }))
  : null;

async function gvisorProblem(): Promise<string | null> {
  if (!engine)
    return 'STEPBOX_GVISOR_HOST is not set to a unix:// engine (run .ci/gvisor.sh: it starts one and prints it)';
  try {
    await engine.ping();
    const info = await engine.info();
    if (!info.runtimes?.names.includes(GVISOR_RUNTIME))
      return `the engine at ${GVISOR_HOST} offers no runtime ${GVISOR_RUNTIME} (it offers ${info.runtimes?.names.join(', ') ?? 'none it names'})`;
  } catch (e) {
    return `the gVisor engine at ${GVISOR_HOST} does not answer: ${(e as Error).message}`;
  }
  if (!(await engine.hasImage(SANDBOX_IMAGE)))
    return `${SANDBOX_IMAGE} is not in the gVisor engine: docker save ${SANDBOX_IMAGE} | docker -H ${GVISOR_HOST} load`;
  return null;
}

const gvisorMissing = await (async () => {
  const problem = await gvisorProblem();
  if (problem && process.env.CI === 'true')
    throw new Error(`gVisor integration tests cannot run: ${problem}`);
  return problem;
})();

const describeGvisor = gvisorMissing === null ? describe : describe.skip;

describeGvisor('gVisor runtime', () => {
  let provider: DockerSandboxProvider | undefined;
  const storeRoot = mkdtempSync(join(tmpdir(), 'stepbox-gvisor-'));
  let stores = 0;
  const gvisor = async () => (provider ??= await createDockerProvider({ engine: engine!, sweep: false }));
  const store = () => new DiskSnapshotStore(join(storeRoot, String(stores++)));
  const home = mkdtempSync(join(tmpdir(), 'stepbox-gvisor-home-'));
  const cli = { env: { DOCKER_HOST: GVISOR_HOST, STEPBOX_HOME: home }, timeoutMs: 300_000 };
  const config = { ...CONFORMANCE_CONFIG, runtime: GVISOR_RUNTIME };

  afterAll(async () => {
    await provider?.close();
    rmSync(storeRoot, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
    expect(await ownedContainers(engine!)).toEqual([]);
  });

  sandboxConformance('gvisor', gvisor, store, { config });

  it('really runs on gVisor: its kernel is not the host one, and the runtime is recorded on the sandbox', async () => {
    const box = await (await gvisor()).create(config);
    try {
      expect(box.runtime).toBe(GVISOR_RUNTIME);
      // gVisor's Sentry answers /proc/version itself (a fixed 4.4.0), never the host's kernel.
      const r = await box.exec({
        command: 'cat /proc/version; cat /proc/sys/kernel/osrelease 2>&1',
        timeoutMs: 30_000,
      });
      const host = await import('node:os').then((os) => os.release());
      expect(r.stdout).not.toContain(host);
    } finally {
      await box.destroy();
    }
  }, 120_000);

  it("the terminal's seal is void here: a process of the agent's reads the history hook's key, so the sandbox says it is not sealed", async () => {
    const box = await (await gvisor()).create(config);
    try {
      // What every command the person types is then recorded with (terminal-service.ts).
      expect(box.sealed).toBe(false);
      const term = await openTerminal(box.id, { cols: 80, rows: 24, docker: engine!.docker });
      try {
        let out = '';
        term.onData((d) => (out += d));
        term.write('echo ready-$((6*7))\r');
        await new Promise<void>((resolve, reject) => {
          const t = setTimeout(() => reject(new Error(`no prompt: ${out}`)), 30_000);
          term.onData(() => out.includes('ready-42') && (clearTimeout(t), resolve()));
        });
        // The agent's side: every environ is readable on gVisor, the shell's with its hook's key.
        const r = await box.exec({
          command:
            "for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f 2>/dev/null; done | grep -o '6973;[0-9a-f]\\{32\\}' | head -n1",
          timeoutMs: 30_000,
        });
        expect(r.stdout).toMatch(/^6973;[0-9a-f]{32}$/m);
      } finally {
        await term.close();
      }
    } finally {
      await box.destroy();
    }
  }, 120_000);

  it('sandbox selftest --runtime runsc: every containment check holds', async () => {
    const run = await runCli(['sandbox', 'selftest', '--runtime', GVISOR_RUNTIME, '--json'], cli);
    const report = parseJsonOutput<{
      ok: boolean;
      runtime: string;
      checks: { id: string; ok: boolean; detail: string }[];
    }>(run);
    expect(report.checks.filter((c) => !c.ok)).toEqual([]);
    expect(report.runtime).toBe(GVISOR_RUNTIME);
    expect(run.code).toBe(0);
  }, 600_000);

  it('doctor names the runtimes the engine offers', async () => {
    const run = await runCli(['doctor', '--json'], cli);
    const report = parseJsonOutput<{ ok: boolean; checks: { id: string; detail: string }[] }>(run);
    expect(report.checks.find((c) => c.id === 'docker')?.detail).toMatch(/runtimes runc \(default\), runsc/);
  }, 300_000);

  it('an unknown runtime is refused naming the ones the engine offers, never run on another', async () => {
    const run = await runCli(['sandbox', 'exec', '--runtime', 'kata', '--', 'true'], cli);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(
      /runtime "kata", which Docker does not offer \(it offers runc \(default\), runsc\)/,
    );
    expect(await ownedContainers(engine!)).toEqual([]);
  }, 120_000);

  it('runs an episode on runsc to succeeded, rolls it back and forks it', async () => {
    const task = 'resources/tasks/hello-python';
    const ran = await runCli(
      ['run', task, '--agent', `scripted:${task}/agent.jsonl`, '--runtime', GVISOR_RUNTIME, '--json'],
      cli,
    );
    const episode = parseJsonOutput<{ episode: string; status: string; trace: string }>(ran);
    expect(episode.status).toBe('succeeded');
    // The runtime is recorded as the task's own: the fork (snapshot 3 restored, then the
    // recorded agent again) runs on runsc too, with no consent asked (it only narrows).
    const raw = readFileSync(episode.trace);
    const header = JSON.parse(
      (episode.trace.endsWith('.gz') ? gunzipSync(raw) : raw).toString('utf8').split('\n')[0],
    ) as { task: { sandbox: { runtime?: string } } };
    expect(header.task.sandbox.runtime).toBe(GVISOR_RUNTIME);
    const forked = await runCli(['fork', episode.episode, '--at', '3', '--json'], cli);
    const branch = parseJsonOutput<{ branch: string; status: string }>(forked);
    expect(branch.branch).not.toBe(episode.episode);
    expect(branch.status).toBe('succeeded');
    // On an engine without runsc (the main one, in CI) the recorded runtime is refused,
    // never replaced by runc.
    const main = new DockerEngine();
    if (!(await main.info()).runtimes?.names.includes(GVISOR_RUNTIME)) {
      const elsewhere = await runCli(['fork', episode.episode, '--at', '3', '--json'], {
        ...cli,
        env: { ...cli.env, DOCKER_HOST: undefined },
      });
      expect(elsewhere.code).toBe(3);
      expect(elsewhere.stderr).toMatch(/container runtime "runsc", which Docker does not offer/);
    }
  }, 600_000);
});
