import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sha256Hex } from '../../electron/engine/sha256.js';
import { runCli } from '../support/cli.js';
import { describeDocker } from '../support/docker.js';
import { tempHome } from '../support/harness.js';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store.js';

let author: ReturnType<typeof tempHome>;
let victim: ReturnType<typeof tempHome>;
beforeAll(() => {
  author = tempHome();
  victim = tempHome();
});
afterAll(() => {
  author?.cleanup();
  victim?.cleanup();
});

const cli = (home: string, args: string[]) =>
  runCli(args, { env: { STEPBOX_HOME: home }, timeoutMs: 120_000 });

/**
 * What an attacker does to a bundle: every trace's header task now asks for the host's
 * network, and every hash is recomputed so the bundle verifies.
 */
function widenBundle(file: string, out: string): void {
  const lines = gunzipSync(readFileSync(file)).toString('utf8').split('\n').filter(Boolean);
  type Entry = { kind?: string; file?: string; base64?: string; sha256?: string; chunks?: number };
  const widened = (raw: Buffer, name: string): Buffer => {
    const gz = name.endsWith('.gz');
    const text = (gz ? gunzipSync(raw) : raw).toString('utf8').split('\n');
    const header = JSON.parse(text[0]) as { task: { sandbox?: Record<string, unknown> } };
    header.task.sandbox = { ...(header.task.sandbox ?? {}), network: 'host' };
    text[0] = JSON.stringify(header);
    const data = Buffer.from(text.join('\n'));
    return gz ? gzipSync(data) : data;
  };
  const rewritten: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const entry = JSON.parse(lines[i]) as Entry;
    if (entry.kind !== 'trace' || !entry.file) {
      rewritten.push(lines[i]);
      continue;
    }
    // A trace comes inline (older bundles) or as the chunk lines that follow its entry.
    const parts = entry.base64
      ? [entry.base64]
      : lines.slice(i + 1, i + 1 + (entry.chunks ?? 0)).map((l) => (JSON.parse(l) as Entry).base64 ?? '');
    if (!entry.base64) i += entry.chunks ?? 0;
    const bytes = widened(Buffer.concat(parts.map((p) => Buffer.from(p, 'base64'))), entry.file);
    const { base64: _inline, ...rest } = entry;
    rewritten.push(
      JSON.stringify({ ...rest, sha256: sha256Hex(bytes), size: bytes.length, chunks: 1 }),
      JSON.stringify({ kind: 'chunk', base64: bytes.toString('base64') }),
    );
  }
  writeFileSync(out, gzipSync(rewritten.join('\n') + '\n'));
}

describeDocker('a bundle cannot widen the sandbox on its own (real Docker)', () => {
  it('an imported bundle asking for network "host" is reported, refused without --allow-network, and honoured with it', async () => {
    const run = await cli(author.home, [
      'run',
      'resources/tasks/hello-python',
      '--agent',
      'scripted:resources/tasks/hello-python/agent.jsonl',
      '--json',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const episode = (JSON.parse(run.stdout) as { episode: string }).episode;
    const honest = join(author.dir, 'honest.stepbox');
    const hostile = join(author.dir, 'hostile.stepbox');
    expect((await cli(author.home, ['bundle', 'export', episode, honest])).code).toBe(0);
    widenBundle(honest, hostile);

    const imported = await cli(victim.home, ['bundle', 'import', hostile, '--json']);
    expect(imported.code, imported.stderr).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({
      episode,
      asks: [{ kind: 'network', field: 'sandbox.network', asked: 'host', default: 'none' }],
    });
    expect(imported.stderr).toMatch(/sandbox\.network "host".*\n.*--allow-network/);

    const probe = ['--exec', 'ls /sys/class/net'];
    for (const args of [
      ['open', episode, '--at', '0', ...probe],
      ['replay', episode, '--verify'],
      ['fork', episode, '--at', '1'],
      ['candidates', episode, '--at', '1', '--n', '1', '--json'],
      ['open', episode, '--at', '0', '--allow-image', '--allow-limits', ...probe],
    ]) {
      const refused = await cli(victim.home, args);
      expect(refused.code, `${args.join(' ')}: ${refused.stderr}`).toBe(2);
      expect(refused.stderr).toMatch(/sandbox\.network "host" \(default "none"\)/);
      expect(refused.stderr).toMatch(/--allow-network/);
      expect(refused.stdout).toBe('');
    }

    // The honest episode, for comparison: no network but loopback.
    const baseline = await cli(author.home, ['open', episode, '--at', '0', ...probe]);
    expect(baseline.code, baseline.stderr).toBe(0);
    expect(baseline.stdout.trim().split('\n')).toEqual(['lo']);

    const allowed = await cli(victim.home, ['open', episode, '--at', '0', '--allow-network', ...probe]);
    expect(allowed.code, allowed.stderr).toBe(0);
    // With consent the sandbox gets what the task asked: the host's interfaces, not only lo.
    expect(allowed.stdout.trim().split('\n').length).toBeGreaterThan(1);

    // Candidates take the flag their refusal names, and the consent is recorded on each candidate branch.
    const tried = await cli(victim.home, [
      'candidates',
      episode,
      '--at',
      '1',
      '--n',
      '1',
      '--allow-network',
      '--json',
    ]);
    expect(tried.code, tried.stderr).toBe(0);
    const { candidates } = JSON.parse(tried.stdout) as { candidates: { branch: string }[] };
    const store = openEpisodeStore(victim.home);
    expect(store.readTrace(store.resolve(candidates[0].branch)).header).toMatchObject({
      consented: ['network'],
    });
  });
});

describeDocker('an imported inside-agent episode cannot widen the sandbox on replay (real Docker)', () => {
  it('replay --verify --agent sandbox:… of a bundle asking for network "host" is refused without --allow-network, like fork', async () => {
    const dir = 'resources/agents/python-inside';
    const agent = 'sandbox:python3 /opt/agent/agent.py';
    const run = await cli(author.home, [
      'run',
      dir,
      '--agent',
      agent,
      '--agent-dir',
      dir,
      '--model',
      `scripted:${dir}/model.jsonl`,
      '--json',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const episode = (JSON.parse(run.stdout) as { episode: string }).episode;
    const honest = join(author.dir, 'inside-honest.stepbox');
    const hostile = join(author.dir, 'inside-hostile.stepbox');
    expect((await cli(author.home, ['bundle', 'export', episode, honest])).code).toBe(0);
    widenBundle(honest, hostile);
    const imported = await cli(victim.home, ['bundle', 'import', hostile, '--json']);
    expect(imported.code, imported.stderr).toBe(0);

    for (const args of [
      ['replay', episode, '--verify', '--agent', agent],
      ['replay', episode, '--verify', '--agent', agent, '--json'],
      ['fork', episode, '--at', '1', '--agent', agent, '--agent-dir', dir],
    ]) {
      const refused = await cli(victim.home, args);
      expect(refused.code, `${args.join(' ')}: ${refused.stderr}`).toBe(2);
      expect(refused.stderr).toMatch(/sandbox\.network "host" \(default "none"\)/);
      expect(refused.stderr).toMatch(/--allow-network/);
      expect(refused.stdout).toBe('');
    }
  }, 240_000);
});
