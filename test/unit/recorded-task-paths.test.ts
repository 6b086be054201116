import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Item 1 of issue 31 as a class: every path that rebuilds a sandbox from a recorded task
 * (a trace header's, a bundle's) goes through `stateAt`/`sandboxAt` (harness/state-at.ts),
 * where the recorded-task policy asks for consent. `replay --verify` of an inside agent
 * once read the header's task with a bare `parseTask` and made its own sandbox, so an
 * imported bundle widened the network without consent. This test lists the files that make
 * a sandbox and the files that read a recorded task, and fails when a new one appears: add
 * it to a list below only with the reason it does not rebuild a sandbox from a recorded task.
 */

const ROOT = join(import.meta.dirname, '..', '..');

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((d) => d.isFile() && d.name.endsWith('.ts'))
    .map((d) => relative(ROOT, join(d.parentPath, d.name)));
}

/** Making a sandbox: a supply or pool lease, a provider's create, a warm pool's prewarm. */
const MAKES_SANDBOX =
  /\b(?:supply|pool|Pool|provider|this\.supply|this\.provider)\??\.(?:acquire|create|prewarm)\(/;
/** Reading a recorded task: a trace header's task parsed, or a lineage/trace header read next to a task parse. */
const READS_RECORDED_TASK =
  /(?:parseTask|recordedTask|consentedTask|Task\.(?:safeParse|parse))\([^)]*(?:header|recorded)/;

/** The one place both happen: the state at step K, read through the recorded-task policy. */
const STATE_AT = 'electron/engine/harness/state-at.ts';

/** Files that make a sandbox, each from something other than a recorded task. */
const SANDBOX_MAKERS: Record<string, string> = {
  [STATE_AT]: 'sandboxAt: the one maker for a recorded task',
  'electron/engine/harness/episode-factory.ts': 'a new episode, from a task file the user named',
  'electron/engine/sandbox/docker-provider.ts': 'the provider itself (its doc comment shows create)',
  'electron/engine/sandbox/warm-pool.ts': 'the pool itself (leases what callers ask for)',
  'electron/engine/sandbox/sandbox-supply.ts': 'the supplies themselves (lease what callers ask for)',
  'electron/engine/candidates/staged-sandboxes.ts': 'wraps a supply around sandboxes made by sandboxAt',
  'electron/engine/sandbox/selftest.ts': 'the default sandbox, for the selftest',
  'electron/engine/doctor.ts': 'the default sandbox, for the doctor',
  'electron/engine/open-engine.ts': 'prewarm on behalf of callers with a task file',
  'electron/services/engine-ports.ts': 'prewarm for task files the window names',
  'electron/cli/sandbox-exec.ts': '`sandbox exec/shell`: default limits and flags, no recorded task',
};

/** Files that read a recorded task, each without making a sandbox from it. */
const RECORDED_TASK_READERS: Record<string, string> = {
  [STATE_AT]: 'stateAt: the recorded-task policy, then sandboxAt',
  'electron/engine/harness/recorded-task.ts': 'the policy itself',
  'electron/engine/trace/bundle.ts': 'bundle import lists what the task asks (no sandbox)',
  'electron/engine/qa/episode-set.ts': 'QA over a trace (no sandbox)',
  'shared/qa/check-episode.ts': 'QA rules over a trace (pure, no sandbox)',
  'electron/engine/cases/case-runner.ts': 'a library case: consentedTask before any episode starts',
};

const files = [...sources('electron'), ...sources('shared')].filter((f) => !f.endsWith('.d.ts'));
const text = new Map(files.map((f) => [f, readFileSync(join(ROOT, f), 'utf8')] as const));

describe('every sandbox rebuilt from a recorded task goes through stateAt/sandboxAt', () => {
  it('the scan finds the known makers and readers (the patterns still match the code)', () => {
    expect(MAKES_SANDBOX.test(text.get(STATE_AT) ?? '')).toBe(true);
    expect(READS_RECORDED_TASK.test(text.get(STATE_AT) ?? '')).toBe(true);
    expect(READS_RECORDED_TASK.test(text.get('electron/engine/trace/bundle.ts') ?? '')).toBe(true);
    expect(MAKES_SANDBOX.test(text.get('electron/engine/harness/episode-factory.ts') ?? '')).toBe(true);
  });

  it('only the listed files make a sandbox', () => {
    const found = files.filter(
      (f) => !f.startsWith('electron/bench/') && MAKES_SANDBOX.test(text.get(f) ?? ''),
    );
    expect(found.filter((f) => !(f in SANDBOX_MAKERS))).toEqual([]);
  });

  it('only the listed files read a recorded task', () => {
    const found = files.filter((f) => READS_RECORDED_TASK.test(text.get(f) ?? ''));
    expect(found.filter((f) => !(f in RECORDED_TASK_READERS))).toEqual([]);
  });

  it('no file but state-at.ts both reads a recorded trace and makes a sandbox without stateAt', () => {
    const offenders = files.filter((f) => {
      if (f === STATE_AT || f.startsWith('electron/bench/')) return false;
      const src = text.get(f) ?? '';
      const readsTrace = /\b(?:readLineage|readTrace|readTraceHeader)\(|\.header\.task\b/.test(src);
      const makes = MAKES_SANDBOX.test(src) || /\bagentSandboxConfig\(|\bsandboxConfig\(/.test(src);
      return readsTrace && makes && !/\bsandboxAt\(/.test(src);
    });
    expect(offenders).toEqual([]);
  });

  it('the replays, branches, candidates and what-if take their sandbox from sandboxAt', () => {
    for (const f of [
      'electron/engine/harness/replay-verify.ts',
      'electron/engine/harness/what-if.ts',
      'electron/engine/harness/episode-factory.ts',
      'electron/engine/candidates/staged-sandboxes.ts',
    ]) {
      const src = text.get(f) ?? '';
      expect(src, f).toMatch(/\bstateAt\(/);
      expect(src, f).toMatch(/\bsandboxAt\(/);
    }
  });
});
