import { mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  parseTraceText,
  readTraceFile,
  TraceCorruptError,
} from '../../electron/engine/trace/trace-reader.js';
import { UnsupportedSchemaError, type TraceUpgrade } from '../../electron/engine/trace/trace-upgrade.js';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { summarizeSteps } from '../../shared/step-summary.js';
import { exited, runTraceChild, waitForLine } from '../support/traces-process.js';

const fixtures = fileURLToPath(new URL('../fixtures/traces/', import.meta.url));
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'stepbox-reader-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const v1 = () => readFileSync(join(fixtures, 'v1/every-event.jsonl'), 'utf8');

describe('trace reader', () => {
  it('reads the v1 fixture: every event type, validated, complete', () => {
    const trace = readTraceFile(join(fixtures, 'v1/every-event.jsonl'));
    expect(trace.writtenSchema).toBe('stepbox.trace/1');
    expect(new Set(trace.events.map((e) => e.type)).size).toBe(18);
    expect(trace.end).toMatchObject({ status: 'succeeded', end_reason: 'final_answer', steps: 4 });
    expect(trace.lastCompleteStep).toBe(4);
    expect(trace.partial).toEqual([]);
    expect(trace.torn).toBe(false);
    expect(trace.warnings).toEqual([]);
    const steps = summarizeSteps(trace.events);
    expect(steps.map((s) => s.kind)).toEqual(['setup', 'tool', 'parse_error', 'tool', 'final']);
    expect(steps[1].results[0]).toMatchObject({ ok: false, error_code: 'timeout', fallback: true });
    expect(steps[3].results[0]).toMatchObject({ overridden: true, exit_code: 1 });
    expect(steps[3].injected.map((i) => i.type)).toEqual(['override', 'human_command']);
  });

  it('reads the v1 killed-mid-step fixture up to its last complete step', () => {
    const trace = readTraceFile(join(fixtures, 'v1/killed-mid-step.jsonl'));
    expect(trace.torn).toBe(true);
    expect(trace.end).toBeNull();
    expect(trace.lastCompleteStep).toBe(3);
    expect(trace.partial.map((e) => e.type)).toEqual(['model_request', 'model_output']);
    expect(trace.warnings.join('\n')).toMatch(/line 32 is torn/);
  });

  it('applies an upgrade path keyed by the header schema (the v2 mechanism)', () => {
    // Pretend the fixture was written by an older "stepbox.trace/0" that called `final` `answer`.
    const old = v1()
      .replace('"schema":"stepbox.trace/1"', '"schema":"stepbox.trace/0"')
      .replace('"final":"Take an umbrella."', '"answer":"Take an umbrella."');
    const upgrades: TraceUpgrade[] = [
      {
        from: 'stepbox.trace/0',
        to: 'stepbox.trace/1',
        upgrade: (e) => {
          if (e.type !== 'action' || !('answer' in e)) return e;
          const { answer, ...rest } = e;
          return { ...rest, final: answer };
        },
      },
    ];
    const trace = parseTraceText(old, 'v0.jsonl', { upgrades });
    expect(trace.writtenSchema).toBe('stepbox.trace/0');
    expect(trace.header.schema).toBe('stepbox.trace/1');
    expect(trace.events.find((e) => e.type === 'action' && e.step === 4)).toMatchObject({
      final: 'Take an umbrella.',
    });
    expect(() => parseTraceText(old, 'v0.jsonl')).toThrow(UnsupportedSchemaError);
  });

  it('refuses an unknown (newer) schema with a message saying to upgrade', () => {
    const text = v1().replace('"schema":"stepbox.trace/1"', '"schema":"stepbox.trace/9"');
    expect(() => parseTraceText(text, 'x.jsonl')).toThrow(/stepbox\.trace\/9.*upgrade stepbox/);
  });

  it('ignores a torn last line with a warning and keeps the complete steps', () => {
    const text = v1();
    const lines = text.split('\n');
    // Cut inside line 30 (step 4's model_request): lines 1..29 whole, line 30 torn.
    const torn = lines.slice(0, 29).join('\n') + '\n' + lines[29].slice(0, 25);
    const trace = parseTraceText(torn, 'torn.jsonl');
    expect(trace.torn).toBe(true);
    expect(trace.warnings[0]).toMatch(/line 30 is torn/);
    expect(trace.lastCompleteStep).toBe(3);
    expect(trace.events.at(-1)).toMatchObject({ type: 'snapshot', step: 3 });
    expect(trace.end).toBeNull();
  });

  it('treats an unparsable last line that has its newline as torn too', () => {
    const lines = v1().split('\n');
    const trace = parseTraceText(lines.slice(0, 5).join('\n') + '\n{"seq":5,"t\n', 'x.jsonl');
    expect(trace.torn).toBe(true);
    // Header and snapshot 0 complete; step 1 (request, output, action) has no snapshot.
    expect(trace.events).toHaveLength(2);
    expect(trace.partial).toHaveLength(3);
  });

  it('reports an unparsable line in the middle as trace_corrupt naming the line', () => {
    const lines = v1().split('\n');
    lines[6] = '{"seq": 6, oops';
    const run = () => parseTraceText(lines.join('\n'), 'mid.jsonl');
    expect(run).toThrow(TraceCorruptError);
    expect(run).toThrow(/mid\.jsonl: line 7 is not JSON/);
    try {
      run();
    } catch (e) {
      expect((e as TraceCorruptError).code).toBe('trace_corrupt');
    }
  });

  it('reports a schema-invalid event as trace_corrupt naming the line and field', () => {
    const text = v1().replace('"name":"lookup","result"', '"name":"lookup","result_":"x","result_x"');
    expect(() => parseTraceText(text, 'bad.jsonl')).toThrow(/line 8 \(tool_result\).*result/);
  });

  it('keeps the events of an incomplete trailing step apart as partial', () => {
    const lines = v1().trimEnd().split('\n');
    // Up to step 4's action, no snapshot 4.
    const trace = parseTraceText(lines.slice(0, 32).join('\n') + '\n', 'partial.jsonl');
    expect(trace.lastCompleteStep).toBe(3);
    expect(trace.partial.map((e) => e.type)).toEqual(['model_request', 'model_output', 'action']);
    expect(trace.events.every((e) => e.step <= 3)).toBe(true);
    expect(trace.warnings.join()).toMatch(/step 4 has no snapshot/);
  });

  it('gives trace_corrupt for a file that is not a trace', () => {
    writeFileSync(join(dir, 'x.jsonl'), '{"type":"tool_call"}\n');
    expect(() => readTraceFile(join(dir, 'x.jsonl'))).toThrow(/line 1 is not a trace header/);
    writeFileSync(join(dir, 'y.jsonl.gz'), 'not gzip');
    expect(() => readTraceFile(join(dir, 'y.jsonl.gz'))).toThrow(/not valid gzip/);
  });
});

describe('SIGKILL safety', () => {
  it('a writer killed mid-episode leaves a trace readable up to its last complete step; the next process marks it interrupted', async () => {
    const home = join(dir, 'home');
    const child = runTraceChild(['write', home]);
    const [, , path] = await waitForLine(child, /^step (\d+) (.+)$/);
    await waitForLine(child, /^step 6 /);
    child.kill('SIGKILL');
    expect(await exited(child)).toBe('SIGKILL');

    const trace = readTraceFile(path);
    expect(trace.lastCompleteStep).toBeGreaterThanOrEqual(6);
    expect(trace.events.filter((e) => e.type === 'snapshot').at(-1)?.step).toBe(trace.lastCompleteStep);
    expect(trace.end).toBeNull();
    // Whatever the kill cut, only whole steps are in `events`.
    expect(trace.events.every((e) => e.step <= trace.lastCompleteStep)).toBe(true);

    // Also cut the file mid-line ourselves, as a kill inside write() would: inside the last snapshot line.
    // (Start from the whole lines up to the last snapshot: the kill itself may have torn a line.)
    const copy = join(dir, 'cut.jsonl');
    const raw = readFileSync(path, 'utf8');
    const whole = raw.slice(0, raw.lastIndexOf('\n') + 1);
    writeFileSync(copy, whole.slice(0, whole.indexOf('\n', whole.lastIndexOf('"type":"snapshot"')) + 1));
    truncateSync(copy, statSync(copy).size - 50);
    const cut = readTraceFile(copy);
    expect(cut.torn).toBe(true);
    expect(cut.warnings.join()).toMatch(/torn/);
    expect(cut.lastCompleteStep).toBe(trace.lastCompleteStep - 1);
    expect(cut.partial.map((e) => e.type)).toEqual(['model_output']);

    // Give the real trace a torn tail too, then let a new "process" open the store.
    truncateSync(path, statSync(path).size - 10);
    const store = openEpisodeStore(home);
    const [episode] = store.listEpisodes();
    const b = store.resolve(episode);
    expect(b.closed).toBe(true);
    const closed = store.readTrace(b);
    expect(closed.end).toMatchObject({ status: 'interrupted', end_reason: 'process_killed' });
    expect(closed.end?.step).toBe(closed.lastCompleteStep);
    expect(closed.torn).toBe(false);
    expect(closed.events.some((e) => e.type === 'warning' && e.code === 'torn_tail')).toBe(true);
  }, 90_000);
});
