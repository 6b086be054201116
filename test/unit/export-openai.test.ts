import { describe, expect, it } from 'vitest';
import { checkEpisode } from '../../shared/qa/check-episode.js';
import type { BranchCheck } from '../../electron/engine/qa/check-branches.js';
import {
  fineTuneRecord,
  validateFineTuneRecord,
  type FineTuneRecord,
} from '../../electron/engine/export/openai-jsonl.js';
import { buildExport } from '../../electron/engine/export/run-export.js';
import { parseRedactions } from '../../electron/engine/export/redact.js';
import { loadedBranch, QaTrace, qaTask, sh } from '../support/qa-traces.js';

const none = parseRedactions([]);
const checkOf = (t: QaTrace): BranchCheck => {
  const b = loadedBranch(t);
  return { episode: b.episode, branch: b.branch, ...checkEpisode({ events: b.trace.events, torn: false }) };
};

describe('openai-jsonl export', () => {
  const clean = new QaTrace(undefined, { episode: 'good' })
    .step({ calls: [sh('cat test_x.py'), { name: 'read_file', args: { path: 'x.py' } }] })
    .step({ calls: [sh('python3 test_x.py')] })
    .step({ final: 'ok' })
    .end();
  it('writes tool calls with string arguments, each answered by a tool message', () => {
    const built = fineTuneRecord(qaTask(), clean.events(), [])!;
    const { messages, tools } = built.record;
    expect(validateFineTuneRecord(built.record)).toEqual([]);
    expect(messages.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'tool',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(typeof messages[2].tool_calls![0].function.arguments).toBe('string');
    expect(JSON.parse(messages[2].tool_calls![0].function.arguments)).toEqual({ command: 'cat test_x.py' });
    expect(messages[3].tool_call_id).toBe(messages[2].tool_calls![0].id);
    expect(messages.filter((m) => m.role === 'assistant').every((m) => m.weight === 1)).toBe(true);
    expect(tools.map((t) => t.function.name)).toContain('execute_shell');
  });
  it('weights flagged steps 0 and labels injected messages', () => {
    const t = new QaTrace().repeat(3, { calls: [sh('python3 test_x.py', { exit_code: 1 })] });
    t.push({ type: 'injected', step: 3, source: 'injected', role: 'user', content: 'the config is missing' });
    t.step({ final: 'I could not fix it' }).end('failed', { success: false, exit_code: 1 });
    const flags = checkEpisode({ events: t.events(), torn: false }).flags;
    const { record } = fineTuneRecord(qaTask(), t.events(), flags)!;
    const weights = record.messages.filter((m) => m.role === 'assistant').map((m) => m.weight);
    expect(weights).toEqual([1, 1, 0, 1]);
    expect(record.messages.find((m) => m.content === 'the config is missing')).toMatchObject({
      role: 'user',
      name: 'injected',
    });
    expect(validateFineTuneRecord(record)).toEqual([]);
  });
  it('drops an unanswered trailing call (a branch cut off mid-step)', () => {
    const t = new QaTrace().step({ calls: [sh('ls')] });
    t.push({
      type: 'model_output',
      step: 2,
      source: 'agent',
      raw: 'x',
      message: {
        content: null,
        tool_calls: [
          { id: 'c9', type: 'function', function: { name: 'execute_shell', arguments: '{"command":"ls"}' } },
        ],
      },
    });
    const { record } = fineTuneRecord(qaTask(), t.events(), [])!;
    expect(validateFineTuneRecord(record)).toEqual([]);
    expect(record.messages[record.messages.length - 1].role).toBe('tool');
  });
  it('the validator catches the rules it promises', () => {
    const bad: FineTuneRecord = {
      tools: [],
      parallel_tool_calls: false,
      messages: [
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'a', type: 'function', function: { name: 'x', arguments: '{' } }],
        },
        { role: 'user', content: 'hi', weight: 1 },
        { role: 'tool', tool_call_id: 'zz', content: 'r' },
      ],
    };
    const problems = validateFineTuneRecord(bad).join('\n');
    expect(problems).toMatch(/not JSON/);
    expect(problems).toMatch(/weight/);
    expect(problems).toMatch(/answers no call/);
    expect(problems).toMatch(/unanswered/);
  });
  it('filters by --min-quality, excludes injected on request, writes quality to the sidecar and redacts', () => {
    const injected = new QaTrace(undefined, { episode: 'inj' }).step({ calls: [sh('cat test_x.py')] });
    injected.push({ type: 'injected', step: 1, source: 'injected', role: 'user', content: 'key sk-abc123' });
    injected
      .step({ calls: [sh('python3 test_x.py')] })
      .step({ final: 'ok' })
      .end();
    const bad = new QaTrace(undefined, { episode: 'bad' })
      .repeat(3, { calls: [sh('x')] })
      .step({ final: 'done!' })
      .end('failed', { success: false, exit_code: 1 });
    const traces = [clean, injected, bad];
    const branches = traces.map(loadedBranch);
    const checks = new Map(traces.map((t) => [loadedBranch(t).branch, checkOf(t)]));
    const out = buildExport(branches, checks, {
      format: 'openai-jsonl',
      minQuality: 0.5,
      excludeInjected: false,
      redaction: parseRedactions(['/sk-[a-z0-9]+/', 'command']),
    });
    expect(out.count).toBe(2);
    expect(out.skipped.map((s) => s.branch)).toEqual(['bad']);
    expect(out.meta.map((m) => [m.branch, m.quality])).toEqual([
      ['good', 1],
      ['inj', 1],
    ]);
    expect(out.text).not.toMatch(/sk-abc123/);
    expect(out.text).not.toMatch(/cat test_x\.py/);
    for (const line of out.text.trim().split('\n'))
      expect(validateFineTuneRecord(JSON.parse(line))).toEqual([]);
    const excluded = buildExport(branches, checks, {
      format: 'openai-jsonl',
      excludeInjected: true,
      redaction: none,
    });
    // A failed episode is left out by default, and kept (its turns weighted by QA) with --include-failed.
    expect(excluded.meta.map((m) => m.branch)).toEqual(['good']);
    expect(excluded.skipped).toContainEqual({
      branch: 'bad',
      reason: 'it ended failed, not succeeded (--include-failed keeps it)',
    });
    const all = buildExport(branches, checks, {
      format: 'openai-jsonl',
      excludeInjected: true,
      includeFailed: true,
      redaction: none,
    });
    expect(all.meta.map((m) => m.branch)).toEqual(['good', 'bad']);
  });

  it('leaves out failed, timed-out, error, interrupted and unfinished episodes by default', () => {
    const ended = (status: string | null) => {
      const t = new QaTrace(undefined, { episode: `ep-${status ?? 'running'}` })
        .step({ calls: [sh('python3 test_x.py')] })
        .step({ final: 'ok' });
      return status === null
        ? t
        : t.end(status as 'failed', { success: status === 'succeeded', exit_code: 0 });
    };
    const traces = ['succeeded', 'failed', 'timeout', 'error', 'interrupted', null].map(ended);
    const branches = traces.map(loadedBranch);
    const checks = new Map(traces.map((t) => [loadedBranch(t).branch, checkOf(t)]));
    const out = buildExport(branches, checks, {
      format: 'openai-jsonl',
      excludeInjected: false,
      redaction: none,
    });
    expect(out.meta.map((m) => m.branch)).toEqual(['ep-succeeded']);
    expect(out.skipped.map((s) => s.branch)).toEqual([
      'ep-failed',
      'ep-timeout',
      'ep-error',
      'ep-interrupted',
      'ep-running',
    ]);
  });
  it("exports a fork with its parent's steps 1..K through the one lineage reader, even when a chain loops", () => {
    const parent = new QaTrace(undefined, { episode: 'p' })
      .step({ calls: [sh('cat test_x.py')] })
      .step({ calls: [sh('echo parent-only')] })
      .step({ final: 'parent done' })
      .end();
    const fork = new QaTrace(undefined, { episode: 'p', branch: 'f', parent: 'p', forkStep: 1 })
      .step({ calls: [sh('echo fork-2')] })
      .step({ final: 'fork done' })
      .end();
    const checks = new Map([parent, fork].map((t) => [loadedBranch(t).branch, checkOf(t)]));
    const options = { format: 'openai-jsonl', excludeInjected: false, redaction: none } as const;
    const commands = (text: string) =>
      text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as FineTuneRecord)
        .find((r) => r.messages.some((m) => JSON.stringify(m).includes('fork-2')))!
        .messages.flatMap((m) => m.tool_calls ?? [])
        .map((c) => (JSON.parse(c.function.arguments) as { command: string }).command);
    const out = buildExport([loadedBranch(parent), loadedBranch(fork)], checks, options);
    expect(commands(out.text)).toEqual(['cat test_x.py', 'echo fork-2']);
    // A recorded chain is untrusted input: a parent naming its own fork as parent stops there.
    const looped = { ...loadedBranch(parent), parentBranch: 'f', forkStep: 1 };
    const again = buildExport([looped, loadedBranch(fork)], checks, options);
    expect(commands(again.text)).toEqual(['cat test_x.py', 'echo fork-2']);
  });
});
