import { describe, expect, it } from 'vitest';
import { checkEpisode } from '../../shared/qa/check-episode.js';
import type { BranchCheck } from '../../electron/engine/qa/check-branches.js';
import { branchSpans, nanos, type OtlpTraces } from '../../electron/engine/export/otel-json.js';
import { buildExport } from '../../electron/engine/export/run-export.js';
import { parseRedactions, redactValue } from '../../electron/engine/export/redact.js';
import { loadedBranch, QaTrace, sh } from '../support/qa-traces.js';

const none = parseRedactions([]);
const checksOf = (ts: QaTrace[]) =>
  new Map<string, BranchCheck>(
    ts.map((t) => {
      const b = loadedBranch(t);
      return [
        b.branch,
        { episode: b.episode, branch: b.branch, ...checkEpisode({ events: b.trace.events, torn: false }) },
      ];
    }),
  );

describe('otel-json export', () => {
  const t = new QaTrace(undefined, { episode: 'e1' })
    .step({
      calls: [sh('ls'), sh('false', { ok: false, error: { code: 'timeout', message: 'slow' } } as never)],
    })
    .step({ final: 'done' })
    .end();
  it('builds invoke_agent → chat → execute_tool with GenAI attributes', () => {
    const spans = branchSpans(t.events());
    const op = (s: (typeof spans)[number]) =>
      s.attributes.find((a) => a.key === 'gen_ai.operation.name')!.value;
    expect(spans.map((s) => (op(s) as { stringValue: string }).stringValue)).toEqual([
      'invoke_agent',
      'chat',
      'execute_tool',
      'execute_tool',
      'chat',
    ]);
    const [root, chat1, tool1, tool2] = spans;
    expect(root.parentSpanId).toBeUndefined();
    expect(chat1.parentSpanId).toBe(root.spanId);
    expect(tool1.parentSpanId).toBe(chat1.spanId);
    expect(tool2.status.code).toBe(2);
    expect(tool1.attributes).toEqual(
      expect.arrayContaining([
        { key: 'gen_ai.tool.name', value: { stringValue: 'execute_shell' } },
        { key: 'gen_ai.tool.call.id', value: { stringValue: 'c1_0' } },
      ]),
    );
    expect(chat1.attributes).toEqual(
      expect.arrayContaining([{ key: 'gen_ai.usage.input_tokens', value: { intValue: '10' } }]),
    );
    for (const s of spans) {
      expect(s.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(s.spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(s.startTimeUnixNano).toMatch(/^\d+$/);
      expect(BigInt(s.endTimeUnixNano) >= BigInt(s.startTimeUnixNano)).toBe(true);
    }
    expect(new Set(spans.map((s) => s.spanId)).size).toBe(spans.length);
  });
  it('carries the semantic-convention attributes: provider, request temperature/seed, response, error.type', () => {
    let outputs = 0;
    const events = t.events().map((e) => {
      if (e.type === 'header')
        return {
          ...e,
          agent: {
            spec: 'openai:qwen@http://127.0.0.1:11434/v1',
            kind: 'openai',
            model: 'qwen',
            base_url: 'http://127.0.0.1:11434/v1',
            temperature: 0.2,
            seed: 7,
          },
        };
      if (e.type === 'model_output' && outputs++ === 0)
        return { ...e, response: { id: 'chatcmpl-1', model: 'qwen:7b', finish_reasons: ['tool_calls'] } };
      return e;
    }) as typeof t.events extends () => infer R ? R : never;
    const spans = branchSpans(events);
    const get = (s: (typeof spans)[number], key: string) => s.attributes.find((a) => a.key === key)?.value;
    const [root, chat1, , tool2, chat2] = spans;
    // The provider is the API spoken (openai), not the endpoint; the endpoint is server.address/port.
    expect(get(root, 'gen_ai.provider.name')).toEqual({ stringValue: 'openai' });
    expect(get(chat1, 'gen_ai.provider.name')).toEqual({ stringValue: 'openai' });
    expect(get(chat1, 'server.address')).toEqual({ stringValue: '127.0.0.1' });
    expect(get(chat1, 'server.port')).toEqual({ intValue: '11434' });
    expect(get(chat1, 'gen_ai.request.temperature')).toEqual({ doubleValue: 0.2 });
    expect(get(chat1, 'gen_ai.request.seed')).toEqual({ intValue: '7' });
    expect(get(chat1, 'gen_ai.response.id')).toEqual({ stringValue: 'chatcmpl-1' });
    expect(get(chat1, 'gen_ai.response.model')).toEqual({ stringValue: 'qwen:7b' });
    expect(get(chat1, 'gen_ai.response.finish_reasons')).toEqual({
      arrayValue: { values: [{ stringValue: 'tool_calls' }] },
    });
    expect(get(chat2, 'gen_ai.response.id')).toBeUndefined();
    expect(get(tool2, 'error.type')).toEqual({ stringValue: 'timeout' });
    expect(spans.filter((s) => get(s, 'error.type') !== undefined)).toEqual([tool2]);
    // An exec: agent answered by an OpenAI-compatible endpoint speaks openai too.
    const exec = t.events().map((e) =>
      e.type === 'header'
        ? {
            ...e,
            agent: {
              spec: 'exec:python3 a.py',
              kind: 'exec',
              model_source: 'openai:qwen@http://127.0.0.1:18081/v1',
            },
          }
        : e,
    ) as typeof events;
    const [execRoot, execChat] = branchSpans(exec);
    expect(get(execRoot, 'gen_ai.provider.name')).toEqual({ stringValue: 'openai' });
    expect(get(execChat, 'server.port')).toEqual({ intValue: '18081' });
    // A scripted agent calls no model: its provider says so.
    expect(get(branchSpans(t.events())[0], 'gen_ai.provider.name')).toEqual({
      stringValue: 'stepbox.scripted',
    });
  });
  it('writes nanoseconds exactly, beyond float precision', () => {
    expect(nanos(1_700_000_000_123)).toBe('1700000000123000000');
    expect(nanos(1_700_000_000_123.5)).toBe('1700000000123500000');
  });
  it('wraps branches in one OTLP document that parses back', () => {
    const out = buildExport([loadedBranch(t)], checksOf([t]), {
      format: 'otel-json',
      excludeInjected: false,
      redaction: none,
    });
    const doc = JSON.parse(out.text) as OtlpTraces;
    expect(doc.resourceSpans[0].scopeSpans[0].spans).toHaveLength(5);
  });
});

describe('dpo-jsonl export', () => {
  const parent = new QaTrace(undefined, { episode: 'p' })
    .step({ calls: [sh('cat test_x.py')] })
    .step({
      calls: [sh("sed -i 's/assert/pass/' test_x.py")],
      changed: [{ path: 'test_x.py', change: 'modified' }],
    })
    .step({ final: 'done' })
    .end();
  const fork = new QaTrace(undefined, {
    episode: 'p',
    branch: 'f',
    parent: 'p',
    forkStep: 1,
    agentKind: 'manual',
  })
    .step({ calls: [{ name: 'write_file', args: { path: 'x.py', content: 'fixed' } }] })
    .step({ final: 'fixed x.py' })
    .end();
  it('pairs the fork a person corrected with its parent at step K+1', () => {
    const out = buildExport([loadedBranch(parent), loadedBranch(fork)], checksOf([parent, fork]), {
      format: 'dpo-jsonl',
      excludeInjected: false,
      redaction: none,
    });
    expect(out.count).toBe(1);
    const rec = JSON.parse(out.text);
    expect(Object.keys(rec).sort()).toEqual(['input', 'non_preferred_output', 'preferred_output']);
    expect(rec.input.messages.map((m: { role: string }) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
    ]);
    expect(rec.preferred_output[0].tool_calls[0].function.name).toBe('write_file');
    expect(rec.non_preferred_output[0].tool_calls[0].function.arguments).toMatch(/sed -i/);
    expect(out.meta[0]).toMatchObject({ step: 2, reason: 'corrected', preferred: 'fork' });
  });
});

describe('redaction', () => {
  it('redacts named fields (also inside JSON argument strings) and patterns', () => {
    const r = parseRedactions(['password', '/tok_[0-9]+/']);
    expect(
      redactValue({ a: { password: 'x' }, s: 'use tok_123 now', args: '{"password":"p","u":1}' }, r),
    ).toEqual({
      a: { password: '[REDACTED]' },
      s: 'use [REDACTED] now',
      args: '{"password":"[REDACTED]","u":1}',
    });
    expect(() => parseRedactions(['/(/'])).toThrow(/not a valid regular expression/);
  });
});
