import { z } from 'zod';
import type { RawFrame } from './frames.js';
import { fieldsOf, issues, protocolFields } from './helper-protocol.js';
import { reportMisfit, VerifierReport, VerifierRequest } from './verifier-schema.js';

export { VerifierReport, VerifierRequest } from './verifier-schema.js';

/**
 * The channels between the host and the programs stepbox runs as root in the sandbox, typed
 * once (the Debug Adapter Protocol's way: one schema, both sides checked against it). All
 * three carry the prelude's frames (frames.ts); what their headers hold:
 *  - the helper's requests and replies: helper-protocol.ts (HELPER_OPS), against
 *    resources/sandbox/helper.py `OPS`;
 *  - the agent bridge's frames: {@link BRIDGE_FRAMES}, against resources/sandbox/bridge.py `FRAMES`;
 *  - the verifier runner's request and report: {@link VerifierRequest} and
 *    {@link VerifierReport}, against resources/sandbox/verifier.py `REQUEST` and `REPORT`.
 * Whatever comes from the sandbox holds hostile code's reach, so it is parsed here before it
 * is read ({@link parseBridgeFrame}, {@link parseVerifierReport}); `channelFields()` lists
 * every field, and test/unit/sandbox-channels.test.ts holds the Python tables to it.
 */

const count = z.int().nonnegative();
/** A connection's number on the bridge's channel (the bridge counts from 1). */
const chan = z
  .int()
  .min(1)
  .max(2 ** 32 - 1);
/** A message from the sandbox, bounded: it runs into logs, traces and errors. */
const message = z.string().transform((m) => (m.length > 2000 ? `${m.slice(0, 2000)}…` : m));
const empty = z.object({});

/** Who writes a bridge frame: the host, the bridge, or either (a connection's bytes and close). */
type Sender = 'host' | 'bridge' | 'both';

/** One kind of bridge frame: its sender, its header's fields (besides `kind`), whether a payload rides with it. */
interface FrameSpec<H extends z.ZodObject> {
  readonly sender: Sender;
  readonly header: H;
  readonly payload: boolean;
}

function frameSpec<H extends z.ZodObject>(sender: Sender, header: H, payload: boolean): FrameSpec<H> {
  return { sender, header, payload };
}

/** Every frame of the agent bridge's channel by kind (the order of bridge.py's `FRAMES`). */
export const BRIDGE_FRAMES = {
  start: frameSpec(
    'host',
    z.object({
      uid: count,
      gid: count,
      cwd: z.string(),
      command: z.string(),
      env: z.record(z.string(), z.string()),
      home_files: z.record(z.string(), z.string()),
      clear_home: z.boolean(),
      agent_dir_hash: z.string().nullable(),
      port: count,
    }),
    false,
  ),
  data: frameSpec('both', z.object({ chan }), true),
  close: frameSpec('both', z.object({ chan }), false),
  stop: frameSpec('host', empty, false),
  ready: frameSpec('bridge', z.object({ port: z.int().min(1).max(65535), pid: count }), false),
  open: frameSpec('bridge', z.object({ chan }), false),
  stdout: frameSpec('bridge', empty, true),
  stderr: frameSpec('bridge', empty, true),
  exit: frameSpec(
    'bridge',
    z.object({ code: z.int().min(0).max(255).nullable(), signal: z.int().min(1).max(127).nullable() }),
    false,
  ),
  error: frameSpec('bridge', z.object({ message }), false),
} as const;

type BridgeFrames = typeof BRIDGE_FRAMES;
/** A kind of bridge frame. */
export type BridgeKind = keyof BridgeFrames;
/** A kind of frame the host sends the bridge. */
export type HostKind = {
  [K in BridgeKind]: BridgeFrames[K]['sender'] extends 'bridge' ? never : K;
}[BridgeKind];
/** What the host sends the bridge, by kind (its header besides `kind`). */
export type BridgeHeader<K extends BridgeKind> = z.input<BridgeFrames[K]['header']>;

/** The frames the bridge may send, as one union checked by `kind`. */
const FromBridge = z.discriminatedUnion('kind', [
  BRIDGE_FRAMES.ready.header.extend({ kind: z.literal('ready') }),
  BRIDGE_FRAMES.open.header.extend({ kind: z.literal('open') }),
  BRIDGE_FRAMES.data.header.extend({ kind: z.literal('data') }),
  BRIDGE_FRAMES.close.header.extend({ kind: z.literal('close') }),
  BRIDGE_FRAMES.stdout.header.extend({ kind: z.literal('stdout') }),
  BRIDGE_FRAMES.stderr.header.extend({ kind: z.literal('stderr') }),
  BRIDGE_FRAMES.exit.header.extend({ kind: z.literal('exit') }),
  BRIDGE_FRAMES.error.header.extend({ kind: z.literal('error') }),
]);

/** A frame that is not the protocol: the channel is not to be trusted after it. */
export interface ChannelViolation {
  readonly code: 'protocol_error';
  readonly message: string;
}

/** What the engine answers a frame from the sandbox that does not fit its schema: `what` (why); `then`. */
function notTheProtocol(
  what: string,
  why: string | undefined,
  then: string,
): { ok: false; error: ChannelViolation } {
  return {
    ok: false,
    error: {
      code: 'protocol_error',
      message: `${what} is not the protocol (${why ?? 'unreadable'}); ${then}`,
    },
  };
}

/** A frame from the bridge, checked: its kind and its header's fields. */
export type BridgeFrame = z.output<typeof FromBridge>;

/** Checks a frame from the bridge against its kind's header and payload rule. */
export function parseBridgeFrame(
  raw: RawFrame,
): { ok: true; frame: BridgeFrame; payload: Buffer } | { ok: false; error: ChannelViolation } {
  const r = FromBridge.safeParse(raw.header);
  const why = !r.success
    ? issues(r.error)
    : !BRIDGE_FRAMES[r.data.kind].payload && raw.payload.length
      ? `a ${r.data.kind} frame carries a payload`
      : undefined;
  if (why !== undefined || !r.success)
    return notTheProtocol("the agent bridge's frame", why, 'the agent was stopped');
  return { ok: true, frame: r.data, payload: raw.payload };
}

/** Checks the runner's report frame against the schema and its payload (at most `cap` bytes of each stream). */
export function parseVerifierReport(
  raw: RawFrame,
  cap: number,
):
  | { ok: true; report: VerifierReport; stdout: Buffer; stderr: Buffer }
  | { ok: false; error: ChannelViolation } {
  const r = VerifierReport.safeParse(raw.header);
  const why = !r.success ? issues(r.error) : reportMisfit(r.data, raw.payload.length, cap);
  if (why !== undefined || !r.success)
    return notTheProtocol("the verifier runner's report", why, 'the verification is void');
  return {
    ok: true,
    report: r.data,
    stdout: raw.payload.subarray(0, r.data.stdout_len),
    stderr: raw.payload.subarray(r.data.stdout_len),
  };
}

/** Field names (optional ones marked `?`) of an object schema. */
function names(schema: z.ZodObject): string[] {
  return fieldsOf(schema).map((f) => f.name + (f.optional ? '?' : ''));
}

/** Every channel's frames as lists of field names, as the Python tables list them. */
export function channelFields(): {
  helper: ReturnType<typeof protocolFields>;
  bridge: Record<string, { sender: Sender; fields: string[]; payload: boolean }>;
  verifier: { request: string[]; report: string[] };
} {
  const bridge: Record<string, { sender: Sender; fields: string[]; payload: boolean }> = {};
  for (const [kind, spec] of Object.entries(BRIDGE_FRAMES))
    bridge[kind] = { sender: spec.sender, fields: names(spec.header), payload: spec.payload };
  return {
    helper: protocolFields(),
    bridge,
    verifier: { request: names(VerifierRequest), report: names(VerifierReport) },
  };
}
