import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileTraceWriter } from '../../electron/engine/trace/trace-writer.js';
import { readTraceFile } from '../../electron/engine/trace/trace-reader.js';
import { sampleHeader } from '../support/traces.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'stepbox-trace-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function newWriter(name = 'ep-1.jsonl', secrets?: { name: string; value: string }[]) {
  return FileTraceWriter.create(join(dir, name), sampleHeader('ep-1', 'ep-1'), secrets ? { secrets } : {});
}

describe('FileTraceWriter', () => {
  it('commits a step off the event loop: resolves once durable, refuses on a closed trace, and a close meanwhile keeps it whole', async () => {
    const w = newWriter();
    const snapshot = (step: number) =>
      w.append({
        type: 'snapshot',
        step,
        source: 'harness',
        tree_hash: 'h',
        manifest: 'm',
        changed: [],
        bytes: 0,
      });
    snapshot(0);
    // A promise, not the fsync in place: the harness awaits it, the window's calls run meanwhile.
    const committing = w.commit();
    expect(committing).toBeInstanceOf(Promise);
    await expect(committing).resolves.toBeGreaterThanOrEqual(0);
    snapshot(1);
    // Closed while the step's fsync is on the thread pool: the close's own fsync holds it.
    const racing = w.commit();
    await w.close({
      steps: 1,
      return: 0,
      status: 'succeeded',
      end_reason: 'final_answer',
      verifier: null,
      step: 1,
    });
    await expect(racing).resolves.toBeGreaterThanOrEqual(0);
    await expect(w.commit()).rejects.toThrow(/is closed/);
    expect(readTraceFile(`${w.path}.gz`).events.map((e) => e.type)).toEqual([
      'header',
      'snapshot',
      'snapshot',
      'end',
    ]);
  });

  it('appends numbered, stamped events, fsyncs per step and reads them back', () => {
    const w = newWriter();
    w.append({
      type: 'snapshot',
      step: 0,
      source: 'harness',
      tree_hash: 'h0',
      manifest: 'm0',
      changed: [],
      bytes: 0,
    });
    const fsyncMs = w.commitStep();
    expect(fsyncMs).toBeGreaterThanOrEqual(0);
    const call = w.append({
      type: 'tool_call',
      step: 1,
      source: 'agent',
      call_id: 'c1',
      name: 'execute_shell',
      arguments: { command: 'ls' },
    });
    w.append({
      type: 'tool_result',
      step: 1,
      source: 'environment',
      cause: call.seq,
      call_id: 'c1',
      name: 'execute_shell',
      result: { ok: true, exit_code: 0, stdout: 'a\n', duration_ms: 3, bytes: 2 },
    });
    w.append({
      type: 'snapshot',
      step: 1,
      source: 'harness',
      tree_hash: 'h1',
      manifest: 'm1',
      changed: [],
      bytes: 0,
    });
    w.commitStep();

    // Read while still open: every line is already on disk, whole.
    const text = readFileSync(w.path, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    const trace = readTraceFile(w.path);
    expect(trace.events.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4]);
    expect(trace.events.map((e) => e.type)).toEqual([
      'header',
      'snapshot',
      'tool_call',
      'tool_result',
      'snapshot',
    ]);
    expect(trace.events[3].cause).toBe(2);
    expect(trace.events.every((e) => typeof e.t === 'number' && e.t > 1.7e12)).toBe(true);
    expect(trace.end).toBeNull();
    expect(trace.lastCompleteStep).toBe(1);
    expect(trace.torn).toBe(false);
    w.abandon();
  });

  it('rejects an event that does not match the schema, naming the field', () => {
    const w = newWriter();
    expect(() =>
      w.append({ type: 'tool_call', step: 1, source: 'agent', call_id: 'c1', name: 'x' } as never),
    ).toThrow(/arguments/);
    w.abandon();
  });

  it('close appends end, fsyncs and gzips atomically to <branch>.jsonl.gz', async () => {
    const w = newWriter();
    w.append({
      type: 'snapshot',
      step: 0,
      source: 'harness',
      tree_hash: 'h0',
      manifest: 'm0',
      changed: [],
      bytes: 0,
    });
    await w.close({ step: 0, status: 'failed', end_reason: 'no_verifier', verifier: null });
    const gz = join(dir, 'ep-1.jsonl.gz');
    expect(existsSync(w.path)).toBe(false);
    expect(existsSync(gz)).toBe(true);
    const lines = gunzipSync(readFileSync(gz)).toString('utf8').trimEnd().split('\n');
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({
      type: 'end',
      seq: 2,
      status: 'failed',
      source: 'harness',
    });
    const trace = readTraceFile(gz);
    expect(trace.end?.status).toBe('failed');
    expect(trace.events).toHaveLength(3);
    expect(() => w.append({ type: 'warning', step: 0, source: 'harness', code: 'x', message: 'y' })).toThrow(
      /closed/,
    );
  });

  it('redacts OPENAI_API_KEY and STEPBOX_TOKEN values from every string, keys included', () => {
    const key = 'sk-test-0123456789abcdef';
    const token = 'tok-feedfacecafebeef';
    const w = newWriter('ep-s.jsonl', [
      { name: 'OPENAI_API_KEY', value: key },
      { name: 'STEPBOX_TOKEN', value: token },
    ]);
    const written = w.append({
      type: 'model_request',
      step: 1,
      source: 'harness',
      request: { headers: { Authorization: `Bearer ${key}` }, [token]: [`url?token=${token}`] },
    });
    w.commitStep();
    w.abandon();
    const text = readFileSync(join(dir, 'ep-s.jsonl'), 'utf8');
    expect(text).not.toContain(key);
    expect(text).not.toContain(token);
    expect(text).toContain('Bearer [redacted:OPENAI_API_KEY]');
    expect(JSON.stringify(written)).toContain('[redacted:STEPBOX_TOKEN]');
  });

  it('takes its secrets from the environment by default', () => {
    const key = 'sk-from-env-0123456789';
    const before = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = key;
    try {
      const w = newWriter('ep-e.jsonl');
      w.append({ type: 'warning', step: 0, source: 'harness', code: 'x', message: `key is ${key}` });
      w.abandon();
      expect(readFileSync(join(dir, 'ep-e.jsonl'), 'utf8')).not.toContain(key);
    } finally {
      if (before === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = before;
    }
  });
});

describe('registered secrets', () => {
  it('redacts a secret registered in memory (a token not in the environment)', async () => {
    const { registerSecret } = await import('../../electron/engine/trace/secrets.js');
    const token = 'web-token-5f5f5f5f5f5f';
    registerSecret('STEPBOX_TOKEN', token);
    const w = newWriter('ep-r.jsonl');
    w.append({ type: 'human_command', step: 1, source: 'human', command: `curl -H 'x: ${token}' 127.0.0.1` });
    w.abandon();
    const text = readFileSync(join(dir, 'ep-r.jsonl'), 'utf8');
    expect(text).not.toContain(token);
    expect(text).toContain('[redacted:STEPBOX_TOKEN]');
  });
});
