import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../electron/cli.js';
import { openIndex } from '../../electron/engine/trace/episode-index.js';
import { tempHome } from '../support/harness.js';
import { writeSampleEpisode } from '../support/traces.js';

let env: ReturnType<typeof tempHome>;
beforeAll(() => {
  env = tempHome();
});
afterAll(() => env?.cleanup());

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await main(args, {
    stdout,
    stderr,
    stdin: new PassThrough(),
    env: { ...process.env, STEPBOX_HOME: env.home },
  });
  return { code, stdout: out, stderr: err };
}

/** Every key named `rule` anywhere in a JSON value, with its path. */
function ruleKeys(value: unknown, path = '$'): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => ruleKeys(v, `${path}[${i}]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => [
    ...(k === 'rule' ? [path] : []),
    ...ruleKeys(v, `${path}.${k}`),
  ]);
}

describe('stepbox check', () => {
  it('prints {episodes: [{episode, quality, flags}]}, rule keys only on flags, and indexes the flags', async () => {
    const looped = await writeSampleEpisode(env.store, {
      script: [
        { args: { command: 'make', rule: 'all' }, files: {} },
        { args: { rule: 'all', command: 'make' }, files: {} },
        { args: { command: 'make', rule: 'all' }, files: {} },
        { final: 'I could not build it' },
      ],
      end: { status: 'failed', end_reason: 'final_answer', verifier: { success: false, exit_code: 2 } },
    });
    const run = await cli(['check', looped.episode, '--json']);
    expect(run.code, run.stderr).toBe(1);
    const doc = JSON.parse(run.stdout) as {
      episodes: { episode: string; quality: number; flags: { rule: string; step: number }[] }[];
    };
    expect(Object.keys(doc)).toEqual(['episodes']);
    expect(doc.episodes).toHaveLength(1);
    const [ep] = doc.episodes;
    expect(ep.episode).toBe(looped.episode);
    expect(ep.quality).toBeGreaterThanOrEqual(0);
    expect(ep.quality).toBeLessThan(1);
    expect(ep.flags.find((f) => f.rule === 'loop')).toMatchObject({ step: 3 });
    // The recorded arguments had a `rule` key of their own: it must not look like a flag.
    expect(ruleKeys(doc).every((p) => /^\$\.episodes\[0\]\.flags\[\d+\]$/.test(p))).toBe(true);
    const index = openIndex(env.home);
    try {
      expect(index.flagsOf(looped.branch).map((f) => f.rule)).toContain('loop');
    } finally {
      index.close();
    }
  });
  it('says what is wrong for an unknown episode, as a usage error (not a flagged episode)', async () => {
    const run = await cli(['check', 'ep-nope']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/no episode or branch matches/);
  });
});
