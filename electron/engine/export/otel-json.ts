import {
  ATTR_ERROR_TYPE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_SERVICE_NAME,
} from '@opentelemetry/semantic-conventions';
import {
  ATTR_GEN_AI_AGENT_ID,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_REQUEST_SEED,
  ATTR_GEN_AI_REQUEST_TEMPERATURE,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_ID,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
} from '@opentelemetry/semantic-conventions/incubating';
import type { TraceEvent, TraceEventOf } from '../../../shared/trace-events.js';
import { driverOf } from '../agents/agent-driver.js';
import { specKind } from '../agents/agent-spec.js';
import { sha256Hex } from '../sha256.js';

/** An OTLP attribute value. */
export type OtlpValue =
  | { stringValue: string }
  | { intValue: string }
  | { doubleValue: number }
  | { boolValue: boolean }
  | { arrayValue: { values: OtlpValue[] } };

/** An OTLP key/value attribute. */
export interface OtlpAttribute {
  readonly key: string;
  readonly value: OtlpValue;
}

/** An OTLP span in JSON encoding (ids hex, times nanoseconds as strings). */
export interface OtlpSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind: number;
  readonly startTimeUnixNano: string;
  readonly endTimeUnixNano: string;
  readonly attributes: OtlpAttribute[];
  readonly events: { timeUnixNano: string; name: string; attributes: OtlpAttribute[] }[];
  readonly status: { code: number; message?: string };
}

/** An OTLP/JSON traces document. */
export interface OtlpTraces {
  readonly resourceSpans: {
    resource: { attributes: OtlpAttribute[] };
    scopeSpans: { scope: { name: string; version: string }; spans: OtlpSpan[] }[];
  }[];
}

/** Span kinds (OTLP enum). */
const KIND = { internal: 1, client: 3 } as const;
/** Status codes (OTLP enum). */
const STATUS = { unset: 0, ok: 1, error: 2 } as const;

/** An attribute from a JS value (integers as intValue strings, as OTLP/JSON wants; string arrays as arrayValue). */
export function attr(key: string, value: string | number | boolean | readonly string[]): OtlpAttribute {
  if (typeof value === 'string') return { key, value: { stringValue: value } };
  if (typeof value === 'boolean') return { key, value: { boolValue: value } };
  if (typeof value !== 'number')
    return { key, value: { arrayValue: { values: value.map((v) => ({ stringValue: v })) } } };
  return Number.isInteger(value)
    ? { key, value: { intValue: String(value) } }
    : { key, value: { doubleValue: value } };
}

/** Epoch ms (possibly fractional) as nanoseconds in a decimal string, without float overflow. */
export function nanos(ms: number): string {
  const whole = Math.floor(ms);
  return (BigInt(whole) * 1_000_000n + BigInt(Math.round((ms - whole) * 1e6))).toString();
}

function hexId(seed: string, length: 32 | 16): string {
  return sha256Hex(seed).slice(0, length);
}

function tokens(usage: unknown): { input?: number; output?: number } {
  if (!usage || typeof usage !== 'object') return {};
  const u = usage as Record<string, unknown>;
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  return {
    input: n(u.prompt_tokens) ?? n(u.input_tokens),
    output: n(u.completion_tokens) ?? n(u.output_tokens),
  };
}

/**
 * The `gen_ai.provider.name` of a recorded agent: the model API it speaks (`openai`,
 * `anthropic`, `gcp.gemini`: an agent of that kind, or a program — `exec:`, `sandbox:` —
 * answered by such a source), whatever endpoint serves it — the endpoint itself goes in
 * `server.address` / `server.port` ({@link serverOf}); `stepbox.<kind>` for agents that
 * call no model.
 */
export function providerName(agent: { kind: string; model_source?: unknown }): string {
  const provider = driverOf(agent.kind).provider;
  const named =
    provider === 'via_source'
      ? typeof agent.model_source === 'string'
        ? driverOf(specKind(agent.model_source)).provider
        : null
      : provider;
  return named === null || named === 'via_source' ? `stepbox.${agent.kind}` : named;
}

/** The semantic conventions' `server.address` / `server.port` of the model endpoint a recorded agent called, when known. */
export function serverOf(agent: Record<string, unknown>): OtlpAttribute[] {
  const fromSource =
    typeof agent.model_source === 'string'
      ? /^(?:openai|anthropic|gemini):[^@]*@(.+)$/.exec(agent.model_source)?.[1]
      : undefined;
  const url = typeof agent.base_url === 'string' ? agent.base_url : fromSource;
  if (url === undefined) return [];
  try {
    const u = new URL(url);
    const port = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
    return [attr(ATTR_SERVER_ADDRESS, u.hostname), attr(ATTR_SERVER_PORT, port)];
  } catch {
    return [];
  }
}

/** A request parameter: from the recorded request body, else the agent's recorded setting. */
function requestNumber(request: unknown, agent: Record<string, unknown>, key: string): number | undefined {
  const fromRequest = (request as Record<string, unknown> | null | undefined)?.[key];
  if (typeof fromRequest === 'number') return fromRequest;
  return typeof agent[key] === 'number' ? (agent[key] as number) : undefined;
}

/**
 * One branch as OTel GenAI spans: an `invoke_agent` root for the episode, a `chat` span
 * per model decision (with token usage), and an `execute_tool` span per tool call under
 * its step's `chat`. Ids derive from the branch id, so re-exports are stable. Injected
 * messages, overrides, terminal commands, faults and errors become span events labelled
 * with their source.
 */
export function branchSpans(
  events: readonly TraceEvent[],
  options: { redactContent?: boolean } = {},
): OtlpSpan[] {
  const header = events[0];
  if (!header || header.type !== 'header') return [];
  const end = events.find((e): e is TraceEventOf<'end'> => e.type === 'end') ?? null;
  const last = events[events.length - 1];
  const traceId = hexId(`trace:${header.branch}`, 32);
  const rootId = hexId(`span:${header.branch}:root`, 16);
  const agentName = header.agent.spec;
  const agent = header.agent as Record<string, unknown> & { kind: string };
  const provider = providerName(agent);
  const server = serverOf(agent);
  const spans: OtlpSpan[] = [];
  const root: OtlpSpan = {
    traceId,
    spanId: rootId,
    name: `invoke_agent ${String(header.task.name ?? 'task')}`,
    kind: KIND.internal,
    startTimeUnixNano: nanos(header.t),
    endTimeUnixNano: nanos((end ?? last).t),
    attributes: [
      attr(ATTR_GEN_AI_OPERATION_NAME, 'invoke_agent'),
      attr(ATTR_GEN_AI_PROVIDER_NAME, provider),
      attr(ATTR_GEN_AI_AGENT_NAME, agentName),
      attr(ATTR_GEN_AI_AGENT_ID, header.branch),
      attr('stepbox.episode', header.episode),
      attr('stepbox.branch', header.branch),
      attr('stepbox.task', String(header.task.name ?? '')),
      attr('stepbox.status', end?.status ?? 'open'),
      ...(end ? [attr('stepbox.end_reason', end.end_reason)] : []),
      ...(header.fork_step !== null ? [attr('stepbox.fork_step', header.fork_step)] : []),
      ...(end && end.status !== 'succeeded' ? [attr(ATTR_ERROR_TYPE, end.end_reason)] : []),
    ],
    events: [],
    status:
      end && end.status !== 'succeeded'
        ? { code: STATUS.error, message: end.end_reason }
        : { code: end ? STATUS.ok : STATUS.unset },
  };
  spans.push(root);
  const chatOf = new Map<number, string>();
  const requestAt = new Map<number, number>();
  const requestOf = new Map<number, unknown>();
  const calls = new Map<string, TraceEventOf<'tool_call'>>();
  for (const e of events) {
    if (e.type === 'model_request') {
      requestAt.set(e.step, e.t);
      requestOf.set(e.step, e.request);
    } else if (e.type === 'model_output') {
      const id = hexId(`span:${header.branch}:chat:${e.step}:${e.seq}`, 16);
      chatOf.set(e.step, id);
      const t = tokens(e.usage);
      const start = requestAt.get(e.step) ?? e.t - (e.latency_ms ?? 0);
      const temperature = requestNumber(requestOf.get(e.step), agent, 'temperature');
      const seed = requestNumber(requestOf.get(e.step), agent, 'seed');
      spans.push({
        traceId,
        spanId: id,
        parentSpanId: rootId,
        name: `chat ${String(header.agent.model ?? header.agent.kind)}`,
        kind: KIND.client,
        startTimeUnixNano: nanos(start),
        endTimeUnixNano: nanos(e.t),
        attributes: [
          attr(ATTR_GEN_AI_OPERATION_NAME, 'chat'),
          attr(ATTR_GEN_AI_PROVIDER_NAME, provider),
          ...server,
          ...(typeof header.agent.model === 'string'
            ? [attr(ATTR_GEN_AI_REQUEST_MODEL, header.agent.model)]
            : []),
          ...(temperature !== undefined ? [attr(ATTR_GEN_AI_REQUEST_TEMPERATURE, temperature)] : []),
          ...(seed !== undefined ? [attr(ATTR_GEN_AI_REQUEST_SEED, seed)] : []),
          ...(e.response?.id !== undefined ? [attr(ATTR_GEN_AI_RESPONSE_ID, e.response.id)] : []),
          ...(e.response?.model !== undefined ? [attr(ATTR_GEN_AI_RESPONSE_MODEL, e.response.model)] : []),
          ...(e.response?.finish_reasons?.length
            ? [attr(ATTR_GEN_AI_RESPONSE_FINISH_REASONS, e.response.finish_reasons)]
            : []),
          ...(t.input !== undefined ? [attr(ATTR_GEN_AI_USAGE_INPUT_TOKENS, t.input)] : []),
          ...(t.output !== undefined ? [attr(ATTR_GEN_AI_USAGE_OUTPUT_TOKENS, t.output)] : []),
          attr('stepbox.step', e.step),
          attr('stepbox.source', e.source),
          ...(options.redactContent ? [] : [attr('stepbox.output', e.raw.slice(0, 4000))]),
        ],
        events: [],
        status: { code: STATUS.unset },
      });
    } else if (e.type === 'tool_call') calls.set(e.call_id, e);
    else if (e.type === 'tool_result') {
      const call = calls.get(e.call_id);
      const parent = chatOf.get(e.step) ?? rootId;
      const r = e.result;
      spans.push({
        traceId,
        spanId: hexId(`span:${header.branch}:tool:${e.call_id}:${e.seq}`, 16),
        parentSpanId: parent,
        name: `execute_tool ${e.name}`,
        kind: KIND.internal,
        startTimeUnixNano: nanos(call?.t ?? e.t - (r.duration_ms ?? 0)),
        endTimeUnixNano: nanos(e.t),
        attributes: [
          attr(ATTR_GEN_AI_OPERATION_NAME, 'execute_tool'),
          attr(ATTR_GEN_AI_TOOL_NAME, e.name),
          attr(ATTR_GEN_AI_TOOL_CALL_ID, e.call_id),
          attr(ATTR_GEN_AI_TOOL_TYPE, 'function'),
          ...(!r.ok && r.error ? [attr(ATTR_ERROR_TYPE, r.error.code)] : []),
          attr('stepbox.step', e.step),
          ...(call && !options.redactContent
            ? [attr('stepbox.tool.arguments', JSON.stringify(call.arguments))]
            : []),
          ...(r.exit_code !== undefined ? [attr('stepbox.tool.exit_code', r.exit_code)] : []),
          ...(r.fallback ? [attr('stepbox.tool.fallback', true)] : []),
          // Not known for a call the agent ran itself: left out rather than said as 0.
          ...(r.duration_ms !== null ? [attr('stepbox.tool.duration_ms', r.duration_ms)] : []),
        ],
        events: [],
        status: r.ok
          ? { code: STATUS.unset }
          : { code: STATUS.error, message: `${r.error?.code}: ${r.error?.message}` },
      });
    } else if (
      e.type === 'injected' ||
      e.type === 'override' ||
      e.type === 'edit' ||
      e.type === 'human_command' ||
      e.type === 'fault' ||
      e.type === 'error'
    ) {
      const target = spans.find((s) => s.spanId === (chatOf.get(e.step) ?? rootId)) ?? root;
      const detail =
        e.type === 'injected'
          ? [
              attr('stepbox.role', e.role),
              ...(options.redactContent ? [] : [attr('stepbox.content', e.content)]),
            ]
          : e.type === 'override'
            ? [attr(ATTR_GEN_AI_TOOL_CALL_ID, e.call_id)]
            : e.type === 'edit'
              ? [
                  attr('stepbox.edit.stage', e.stage),
                  ...(e.call_id ? [attr(ATTR_GEN_AI_TOOL_CALL_ID, e.call_id)] : []),
                ]
              : e.type === 'human_command'
                ? options.redactContent
                  ? []
                  : [attr('stepbox.command', e.command)]
                : e.type === 'fault'
                  ? [attr('stepbox.fault.kind', e.kind)]
                  : [
                      attr('stepbox.error.code', e.code),
                      attr('stepbox.error.fatal', e.fatal),
                      attr('stepbox.error.message', e.message),
                    ];
      target.events.push({
        timeUnixNano: nanos(e.t),
        name: `stepbox.${e.type}`,
        attributes: [attr('stepbox.source', e.source), attr('stepbox.step', e.step), ...detail],
      });
    }
  }
  return spans;
}

/** Wraps spans of several branches in one OTLP/JSON document. */
export function otlpDocument(spans: readonly OtlpSpan[]): OtlpTraces {
  return {
    resourceSpans: [
      {
        resource: { attributes: [attr(ATTR_SERVICE_NAME, 'stepbox')] },
        scopeSpans: [{ scope: { name: 'stepbox', version: '0.1.0' }, spans: [...spans] }],
      },
    ],
  };
}
