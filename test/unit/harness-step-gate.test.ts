import { afterEach, describe, expect, it } from 'vitest';
import { Breakpoint } from '../../shared/breakpoints.js';
import { parseBreakFlags } from '../../electron/cli/breakpoint-flags.js';
import { UsageError } from '../../electron/cli/command.js';
import { summarizeSteps } from '../../shared/step-summary.js';
import { personCorrected } from '../../electron/engine/export/person-correction.js';
import { atifTrajectory } from '../../electron/engine/export/atif.js';
import { branchSpans } from '../../electron/engine/export/otel-json.js';
import { stepRowsOf } from '../../shared/contract/step-rows.js';
import { replayVerify, type EpisodeRunner } from '../../electron/engine/harness/index.js';
import {
  call,
  final,
  memorySupply,
  memoryTask,
  ofType,
  startScripted,
  tempHome,
} from '../support/harness.js';

let env: ReturnType<typeof tempHome>;
let runner: EpisodeRunner | null = null;
afterEach(async () => {
  await runner?.dispose();
  runner = null;
  env?.cleanup();
});

async function fileText(c: EpisodeRunner, path: string): Promise<string | null> {
  const r = await c.sandbox()!.readFile(path);
  return r.ok ? new TextDecoder().decode(r.value) : null;
}

function traceOf(c: EpisodeRunner) {
  return env.store.readTrace(env.store.resolve(c.branch)).events;
}

describe('stops inside a step (memory sandbox)', () => {
  it('stops before the tool runs; edited arguments are what runs, the trace keeps both', async () => {
    env = tempHome();
    const c = (runner = await startScripted(env, { task: memoryTask() }, [
      call('write_file', { path: 'a.txt', content: 'agent' }, 'c1'),
      final('done'),
    ]));
    c.setStopPoints({ before_tool: true });
    const stop = await c.step();
    expect(stop.kind).toBe('before_tool');
    expect(c.state()).toBe('paused');
    expect(stop.held?.calls).toEqual([
      { id: 'c1', name: 'write_file', arguments: { path: 'a.txt', content: 'agent' } },
    ]);
    // Nothing ran yet: the file is not there and step 1 is not complete.
    expect(await fileText(c, 'a.txt')).toBeNull();
    expect(c.currentStep()).toBe(0);

    expect(stop.held?.original).toBeUndefined();
    const held = c.editArguments('c1', { path: 'b.txt', content: 'person' });
    expect(held.edited).toBe(true);
    // The model's answer as it came stays in the held view: the window shows it beside the edit.
    expect(JSON.stringify(held.original)).toContain('a.txt');
    expect(held.calls[0].arguments).toEqual({ path: 'b.txt', content: 'person' });
    expect((await c.step()).kind).toBe('step');
    expect(c.currentStep()).toBe(1);
    expect(await fileText(c, 'b.txt')).toBe('person');
    expect(await fileText(c, 'a.txt')).toBeNull();

    const events = traceOf(c);
    const output = ofType(events, 'model_output')[0];
    expect(JSON.stringify(output.message)).toContain('a.txt');
    const edit = ofType(events, 'edit')[0];
    expect(edit).toMatchObject({ step: 1, source: 'human', stage: 'before_tool', call_id: 'c1' });
    expect(JSON.stringify(edit.original)).toContain('a.txt');
    expect(JSON.stringify(edit.edited)).toContain('b.txt');
    expect(ofType(events, 'tool_call')[0].arguments).toEqual({ path: 'b.txt', content: 'person' });
    // `stepbox show` and the timeline name the person's change.
    const [, one] = summarizeSteps(events);
    expect(one.injected).toContainEqual({
      type: 'edit',
      source: 'human',
      summary: 'arguments of write_file edited by a person before it ran (c1)',
    });
    expect(stepRowsOf(events)[1]).toMatchObject({ edited: true, tools: ['write_file'] });
    // Every reader counts it as a person's change: the DPO corrected fork, ATIF and OTel exports.
    const afterEdit = ofType(events, 'tool_call')[0].seq;
    expect(personCorrected(events, afterEdit)).toBe(true);
    expect(personCorrected(events, edit.seq)).toBe(false);
    const atifStep = atifTrajectory(events).steps.find((x) => x.source === 'agent');
    expect(atifStep?.tool_calls?.[0].arguments).toEqual({ path: 'b.txt', content: 'person' });
    expect(JSON.stringify(atifStep?.extra)).toContain('"edited_by":"human"');
    const spanEvents = branchSpans(events).flatMap((x) => x.events.map((ev) => ev.name));
    expect(spanEvents).toContain('stepbox.edit');
    // The agent's own turn in its conversation is the call that ran.
    const assistant = c.messages().find((m) => m.role === 'assistant');
    expect(assistant?.tool_calls?.[0].function.arguments).toContain('b.txt');
  });

  it('rejects arguments the tool schema refuses, with the validator message, and keeps the held step', async () => {
    env = tempHome();
    const c = (runner = await startScripted(env, { task: memoryTask() }, [
      call('write_file', { path: 'a.txt', content: 'x' }, 'c1'),
    ]));
    c.setStopPoints({ before_tool: true });
    await c.step();
    expect(() => c.editArguments('c1', { path: 'a.txt' })).toThrow(
      /write_file cannot take these arguments: "content" is missing: give it a string/,
    );
    expect(() => c.editArguments('nope', { path: 'a.txt', content: 'y' })).toThrow(/no call nope.*c1/);
    expect(c.held()?.edited).toBe(false);
    expect(ofType(traceOf(c), 'edit')).toHaveLength(0);
  });

  it('replaces a result: the tool does not run and the agent sees the given result', async () => {
    env = tempHome();
    const c = (runner = await startScripted(env, { task: memoryTask() }, [
      call('execute_shell', { command: 'echo real > r.txt' }, 'c1'),
      final('done'),
    ]));
    c.setStopPoints({ before_tool: true });
    await c.step();
    c.replaceResult('c1', { ok: true, exit_code: 0, stdout: 'given by a person', duration_ms: 0, bytes: 17 });
    expect((await c.step()).kind).toBe('step');
    expect(await fileText(c, 'r.txt')).toBeNull();
    const result = ofType(traceOf(c), 'tool_result')[0];
    expect(result).toMatchObject({
      source: 'human',
      replaced: true,
      result: { stdout: 'given by a person' },
    });
    const tool = c.messages().find((m) => m.role === 'tool');
    expect(tool?.content).toContain('given by a person');
    const [, one] = summarizeSteps(traceOf(c));
    expect(one.injected.map((i) => i.type)).toEqual(['replaced']);
    expect(stepRowsOf(traceOf(c))[1].overridden).toBe(true);
    // Re-execution gives the result again instead of running the call: same results, same workspace.
    await c.run();
    const report = await replayVerify({
      id: c.branch,
      store: env.store,
      parts: env.parts,
      supply: memorySupply,
    });
    expect(report.diverged_at).toBeNull();
    expect(report.workspace_diverged_at).toBeNull();
  });

  it('a request breakpoint stops before the answer; an edited answer is what the step does', async () => {
    env = tempHome();
    const c = (runner = await startScripted(env, { task: memoryTask({ goal: 'Write done.txt please' }) }, [
      call('execute_shell', { command: 'echo agent > x.txt' }, 'c1'),
      final('done'),
    ]));
    c.setBreakpoints([{ kind: 'request_match', pattern: 'done\\.txt' }]);
    const stop = await c.run();
    expect(stop.kind).toBe('before_answer');
    expect(stop.breakpoint).toEqual({ kind: 'request_match', pattern: 'done\\.txt' });
    expect(stop.message).toMatch(/the 2nd message the model is about to read \(the user's message\) matches/);
    c.setBreakpoints([]);
    c.editAnswer({
      content: null,
      tool_calls: [{ function: { name: 'write_file', arguments: { path: 'done.txt', content: 'ok' } } }],
    });
    expect(c.held()?.calls[0]).toMatchObject({ id: 'c1', name: 'write_file' });
    expect((await c.run()).kind).toBe('ended');
    expect(c.ended()?.status).toBe('succeeded');
    const edit = ofType(traceOf(c), 'edit')[0];
    expect(edit).toMatchObject({ stage: 'before_answer', source: 'human' });
    expect(await fileText(c, 'x.txt')).toBeNull();
  });

  it('an edited answer must be usable: an unknown tool is refused with why', async () => {
    env = tempHome();
    const c = (runner = await startScripted(env, { task: memoryTask() }, [final('done')]));
    c.setStopPoints({ before_answer: true });
    expect((await c.step()).kind).toBe('before_answer');
    expect(() =>
      c.editAnswer({ content: null, tool_calls: [{ function: { name: 'execute_shel', arguments: '{}' } }] }),
    ).toThrow(/cannot be used: .*execute_shel/);
  });

  it('with both stops on, F10 goes answer → tools → step done', async () => {
    env = tempHome();
    const c = (runner = await startScripted(env, { task: memoryTask() }, [
      call('execute_shell', { command: 'echo 1' }, 'c1'),
      final('done'),
    ]));
    c.setStopPoints({ before_answer: true, before_tool: true });
    expect((await c.step()).kind).toBe('before_answer');
    expect((await c.step()).kind).toBe('before_tool');
    expect((await c.step()).kind).toBe('step');
    expect(c.currentStep()).toBe(1);
  });

  it('"before each tool runs" does not stop before a final answer (no tool runs there); "before answers" does', async () => {
    env = tempHome();
    const c = (runner = await startScripted(env, { task: memoryTask() }, [
      call('execute_shell', { command: 'echo 1' }, 'c1'),
      final('done'),
    ]));
    c.setStopPoints({ before_tool: true });
    expect((await c.step()).kind).toBe('before_tool');
    expect((await c.step()).kind).toBe('step');
    // Step 2 is the final answer: it was held as "paused before step 2 ends the episode".
    const last = await c.step();
    expect(last.kind).toBe('ended');
    expect(c.held()).toBeNull();
    await runner.dispose();
    env.cleanup();
    env = tempHome();
    const d = (runner = await startScripted(env, { task: memoryTask() }, [final('done')]));
    d.setStopPoints({ before_tool: true, before_answer: true });
    const held = await d.step();
    expect(held.kind).toBe('before_answer');
    expect(held.held?.final).toBe('done');
    // Past the answer stop, no stop before tools: the answer ends the episode.
    expect((await d.step()).kind).toBe('ended');
  });

  it('stop while held ends the episode at once without running the tool', async () => {
    env = tempHome();
    const c = (runner = await startScripted(env, { task: memoryTask() }, [
      call('execute_shell', { command: 'echo x > s.txt' }, 'c1'),
    ]));
    c.setStopPoints({ before_tool: true });
    await c.step();
    expect(() => c.inject('user', 'hi')).toThrow(/waiting before its tools/);
    const end = await c.stop();
    expect(end).toMatchObject({ status: 'interrupted', end_reason: 'stopped' });
    expect(c.held()).toBeNull();
    expect(ofType(traceOf(c), 'tool_call')).toHaveLength(0);
  });

  it('rollback while held drops the decision: the agent decides that step again', async () => {
    env = tempHome();
    const c = (runner = await startScripted(env, { task: memoryTask() }, [
      call('execute_shell', { command: 'echo one' }, 'c1'),
      call('execute_shell', { command: 'echo two' }, 'c2'),
      final('done'),
    ]));
    await c.step();
    c.setStopPoints({ before_tool: true });
    const held = await c.step();
    expect(held.held?.calls[0].id).toBe('c2');
    await c.rollbackTo(1);
    expect(c.held()).toBeNull();
    const again = await c.step();
    expect(again.kind).toBe('before_tool');
    expect(again.held?.calls[0]).toMatchObject({ id: 'c2', arguments: { command: 'echo two' } });
  });
});

describe('request breakpoints', () => {
  it('refuses a pattern that is not a regular expression, saying why', () => {
    const r = Breakpoint.safeParse({ kind: 'request_match', pattern: 'a(' });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0].message).toMatch(/"a\(" is not a regular expression/);
  });

  it('stops when a tool is missing from the request', async () => {
    env = tempHome();
    const c = (runner = await startScripted(env, { task: memoryTask() }, [final('done')]));
    c.setBreakpoints([
      { kind: 'request_tool', name: 'lookup' },
      { kind: 'request_no_tool', name: 'lookup' },
    ]);
    const stop = await c.step();
    expect(stop).toMatchObject({
      kind: 'before_answer',
      message: expect.stringMatching(/does not offer the tool lookup/),
    });
  });
});

describe('--break for request breakpoints', () => {
  it('parses request_tool, request_no_tool and request_match (a pattern may hold "=")', () => {
    expect(parseBreakFlags(['request_tool=lookup', 'request_no_tool=bash', 'request_match=a=b|c'])).toEqual([
      { kind: 'request_tool', name: 'lookup' },
      { kind: 'request_no_tool', name: 'bash' },
      { kind: 'request_match', pattern: 'a=b|c' },
    ]);
  });

  it('says what is wrong: a bad pattern, a misspelt kind', () => {
    expect(() => parseBreakFlags(['request_match=('])).toThrow(/"\(" is not a regular expression/);
    expect(() => parseBreakFlags(['request_mach=x'])).toThrow(/did you mean request_match\?/);
    expect(() => parseBreakFlags(['request_tool'])).toThrow(UsageError);
  });
});
