import { z } from 'zod';
import { reportMisfit, VerifierReport, VerifierRequest } from './verifier-schema.js';

/**
 * The helper protocol (resources/sandbox/helper.py, table `OPS`), named and typed once: per
 * operation its request, its reply header and what rides in the payloads. Replies come from
 * inside a sandbox that holds hostile code, so every reply is checked against its op's
 * schema before anyone reads it ({@link parseReply}); one that does not match is a
 * {@link ProtocolViolation}, never a cast. `test/integration/helper-protocol.test.ts` asks
 * the helper (`describe`) for its table and compares ops and field names with this one;
 * `test/unit/sandbox-channels.test.ts` does the same without Docker, beside the bridge and
 * verifier channels (sandbox-channels.ts).
 */

const count = z.int().nonnegative();
const SHA256 = /^[0-9a-f]{64}$/;
const sha256 = z.string().regex(SHA256, 'expected a sha256 hex digest');
/** What the helper answers for a call that went wrong: a short code and a bounded message. */
const ErrorBody = z.object({
  code: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'expected an error code such as not_found'),
  // Bounded: a message runs into logs and traces, and a huge one is not the helper's.
  message: z.string().transform((m) => (m.length > 4000 ? `${m.slice(0, 4000)}…` : m)),
});
const Session = z.object({ cwd: z.string(), env: z.record(z.string(), z.string()) });

/** One entry of a tree on the wire: `[path, type, mode, size, hash | link target | null]`. */
export const WireEntry = z
  .tuple([
    z.string(),
    z.enum(['file', 'dir', 'symlink']),
    z.int().min(0).max(0o7777),
    count,
    z.string().nullable(),
  ])
  .refine(
    (w) => (w[1] === 'file' ? SHA256.test(w[4] ?? '') : w[1] === 'symlink' ? w[4] !== null : true),
    'a file needs its sha256, a symlink its target',
  );
/** One entry of a tree as the helper and the host exchange it. */
export type WireEntry = z.infer<typeof WireEntry>;

/** `[hash, size]` of a blob that rides in a payload or was staged. */
const BlobSize = z.tuple([sha256, count]);
/** `[hash, offset, length]` of one part of a stage payload. */
const StagePart = z.tuple([sha256, count, count]);

/** Whether an op's request or reply carries a payload, and which way. */
type PayloadUse = 'none' | 'request' | 'reply';

/** One operation: request and reply header schemas, payload use and what the reply must add up to. */
interface OpSpec<Req extends z.ZodType, Rep extends z.ZodType> {
  readonly request: Req;
  readonly reply: Rep;
  readonly payload: PayloadUse;
  /** Why a well-formed reply still does not fit its payload or request (undefined when it does). */
  readonly fits?: (reply: z.output<Rep>, payload: Buffer, request: z.input<Req>) => string | undefined;
  /**
   * The op's usual reply checked by hand, for a tool call's path (zod's parse of the exec
   * reply was ~80 us of a call after the model's pause): what `reply` gives for a header it
   * recognises (a test holds the two together), undefined for anything else, which `reply`
   * then decides.
   */
  readonly usual?: (header: Record<string, unknown>) => z.output<Rep> | undefined;
}

function op<Req extends z.ZodType, Rep extends z.ZodType>(spec: OpSpec<Req, Rep>): OpSpec<Req, Rep> {
  return spec;
}

const empty = z.object({});

/** What `count` accepts. */
function isCount(v: unknown): v is number {
  return Number.isSafeInteger(v) && (v as number) >= 0;
}

function sum(ns: readonly number[]): number {
  let s = 0;
  for (const n of ns) s += n;
  return s;
}

/** How much a restore or a fill reads back to verify: 'touched' (the default), what it wrote; 'full', everything. */
const VerifyMode = z.enum(['touched', 'full']);

/**
 * What a restore or a fill that is done answers: the tree now in the workspace, what changed,
 * its phases in ms (a restore's plan / apply / verify, a fill's transfer / close directories /
 * verify), the base the helper knows from now on, and how many files were read back to verify
 * (null when everything was: a full verification, or a fill during which something else ran).
 */
const Restored = z.object({
  tree_hash: sha256,
  written: count,
  removed: count,
  phases_ms: z.array(z.number()),
  base: z.string(),
  reread: count.nullable(),
});

/** Every operation the helper dispatches, by name (the order of helper.py's table). */
const OPS = {
  exec: op({
    request: z.object({ command: z.string(), timeout_ms: count, fresh: z.boolean(), cap: count }),
    reply: z.object({
      exit_code: count.nullable(),
      signal: count.nullable(),
      /** stdout's kept bytes; the payload is stdout's then stderr's. */
      stdout_len: count,
      stdout_total: count,
      stderr_total: count,
      oom: z.boolean(),
      /** Whether the helper could read the cgroup's oom_kill counter (then it decided `oom` itself). */
      oom_counter: z.boolean(),
      /** The command's own time in the sandbox (the helper's clock). */
      duration_ms: z.number().nonnegative(),
      error: ErrorBody.optional(),
      session: Session.optional(),
    }),
    payload: 'reply',
    // A command that ended with no error to report and left the session as it was.
    usual: (h) => {
      const { exit_code, signal, stdout_len, stdout_total, stderr_total, oom, oom_counter, duration_ms } = h;
      return 'error' in h ||
        'session' in h ||
        !(exit_code === null || isCount(exit_code)) ||
        !(signal === null || isCount(signal)) ||
        !isCount(stdout_len) ||
        !isCount(stdout_total) ||
        !isCount(stderr_total) ||
        typeof oom !== 'boolean' ||
        typeof oom_counter !== 'boolean' ||
        typeof duration_ms !== 'number' ||
        !Number.isFinite(duration_ms) ||
        duration_ms < 0
        ? undefined
        : { exit_code, signal, stdout_len, stdout_total, stderr_total, oom, oom_counter, duration_ms };
    },
    fits: (r, payload) =>
      r.stdout_len > payload.length
        ? `stdout_len ${r.stdout_len} is more than the ${payload.length}-byte payload`
        : r.stdout_total < r.stdout_len || r.stderr_total < payload.length - r.stdout_len
          ? 'the totals are less than the output kept'
          : undefined,
  }),
  read: op({ request: z.object({ path: z.string() }), reply: empty, payload: 'reply' }),
  write: op({
    request: z.object({ path: z.string(), mode: count.optional() }),
    reply: z.object({ bytes: count }),
    payload: 'request',
  }),
  list: op({
    request: z.object({ path: z.string() }),
    reply: z.object({
      entries: z.array(
        z.object({ name: z.string(), type: z.enum(['file', 'dir', 'symlink', 'other']), size: count }),
      ),
    }),
    payload: 'none',
  }),
  get_session: op({ request: empty, reply: Session, payload: 'none' }),
  set_session: op({ request: Session, reply: empty, payload: 'none' }),
  kill_strays: op({ request: empty, reply: empty, payload: 'none' }),
  reset: op({ request: empty, reply: empty, payload: 'none' }),
  scan: op({
    request: z.object({
      file_cap: count.optional(),
      since: z.string().optional(),
      inline_max: count.optional(),
      rehash_all: z.boolean().optional(),
    }),
    // Whole (`entries`) or a delta against the tree `since` names (`changed`, `removed`).
    reply: z.object({
      tree_hash: sha256,
      skipped: z.array(z.tuple([z.string(), count])),
      walk: z.enum(['full', 'pruned']),
      base: z.string(),
      entries: z.array(WireEntry).optional(),
      since: z.string().optional(),
      changed: z.array(WireEntry).optional(),
      removed: z.array(z.string()).optional(),
      inline: z.array(BlobSize).optional(),
    }),
    payload: 'reply',
    fits: (r, payload) =>
      r.entries === undefined && (r.since === undefined || !r.changed || !r.removed)
        ? 'it has neither entries nor a whole delta (since, changed, removed)'
        : sum((r.inline ?? []).map((b) => b[1])) > payload.length
          ? 'its inline blobs are more than its payload'
          : undefined,
  }),
  blobs: op({
    request: z.object({ hashes: z.array(sha256) }),
    reply: z.object({ sizes: z.array(count) }),
    payload: 'reply',
    fits: (r, payload, req) =>
      r.sizes.length !== req.hashes.length
        ? `${r.sizes.length} sizes for ${req.hashes.length} blobs`
        : sum(r.sizes) !== payload.length
          ? `the sizes add up to ${sum(r.sizes)}, the payload has ${payload.length} bytes`
          : undefined,
  }),
  blob_read: op({
    request: z.object({ hash: sha256, offset: count, length: count }),
    reply: empty,
    payload: 'reply',
  }),
  stage: op({
    // `named`: the host hashed the payload from its own reads; the helper takes the names (see Sandbox.stageAhead).
    request: z.object({ parts: z.array(StagePart), named: z.boolean().optional() }),
    reply: empty,
    payload: 'request',
  }),
  restore: op({
    // The target whole (`entries`) or as a delta against the tree `base` names.
    request: z.object({
      entries: z.array(WireEntry).optional(),
      base: z.string().optional(),
      changed: z.array(WireEntry).optional(),
      removed: z.array(z.string()).optional(),
      staged: z.array(BlobSize),
      /** Blobs in the payload, in order (none when left out). */
      inline: z.array(BlobSize).optional(),
      tree_hash: sha256,
      verify: VerifyMode.optional(),
    }),
    // Done, or the content the workspace lacks now (it changed since the plan): send it, ask again.
    reply: z.union([z.object({ need: z.array(sha256) }), Restored]),
    payload: 'request',
  }),
  fill: op({
    // The first request names the tree (`entries`, `tree_hash`, `verify`); every one carries
    // blob parts in its payload, as `stage` does; the one marked `last` answers as a restore.
    request: z.object({
      parts: z.array(StagePart),
      entries: z.array(WireEntry).optional(),
      tree_hash: sha256.optional(),
      verify: VerifyMode.optional(),
      last: z.boolean().optional(),
      // The host hashed every blob whole in this payload itself (snapshot-wire.ts wholeBlobsCheck).
      named: z.boolean().optional(),
    }),
    reply: z.union([
      Restored,
      // Not the last request: nothing to say yet.
      empty,
    ]),
    payload: 'request',
  }),
  ping: op({ request: empty, reply: z.object({ pid: count }), payload: 'none' }),
  // Who besides a person's terminal command could write files (helper.py op_writers). Names are
  // the processes' own (`comm`, which they may set): bounded here, shown as the agent's.
  writers: op({
    request: z.object({ exclude: count.optional() }),
    reply: z.object({
      changes: count,
      running: z.array(z.tuple([count, z.string().max(64), count])).max(64),
      more: count,
    }),
    payload: 'none',
  }),
  describe: op({
    request: empty,
    reply: z.object({
      ops: z.record(
        z.string(),
        z.object({ request: z.array(z.string()), reply: z.array(z.string()), doc: z.string() }),
      ),
      hello: z.array(z.string()),
    }),
    payload: 'none',
  }),
  // A plain verifier run by an isolated helper itself: the runner's request and report
  // (verifier-schema.ts) without what only the runner's own exec does (files, a reward folder).
  verify: op({
    request: VerifierRequest.pick({ command: true, timeout_ms: true, cap: true, uid: true, workdir: true }),
    reply: VerifierReport.omit({ reward_files: true, staging_error: true }),
    payload: 'reply',
    fits: (r, payload, req) => reportMisfit(r, payload.length, req.cap),
  }),
} as const;

type Ops = typeof OPS;
/** The name of a helper operation. */
export type HelperOp = keyof Ops;
/** The request fields of an op (`id` and `op` are the client's). */
export type HelperRequest<Op extends HelperOp> = { [K in HelperOp]: z.input<Ops[K]['request']> }[Op];
/** The reply header of an op, checked. */
export type HelperReply<Op extends HelperOp> = { [K in HelperOp]: z.output<Ops[K]['reply']> }[Op];

/** An op's spec as its reply is checked: typed per op, so a generic `op` keeps its reply type. */
interface ReplyCheck<Op extends HelperOp> {
  readonly reply: { safeParse(header: unknown): z.ZodSafeParseResult<HelperReply<Op>> };
  readonly payload: PayloadUse;
  readonly fits?: (reply: HelperReply<Op>, payload: Buffer, request: HelperRequest<Op>) => string | undefined;
  readonly usual?: (header: Record<string, unknown>) => HelperReply<Op> | undefined;
}

/** Every operation the helper dispatches: request and reply schemas, payload use, checks. */
export const HELPER_OPS: { readonly [K in HelperOp]: Ops[K] & ReplyCheck<K> } = OPS;

/** A checked helper response: its header and the raw payload that followed it. */
export interface HelperResponse<Op extends HelperOp = HelperOp> {
  readonly header: HelperReply<Op>;
  readonly payload: Buffer;
}

/** The helper's first frame: who it is and how it is isolated. */
export const HelperHello = z.object({
  event: z.literal('hello'),
  pid: count,
  /** The container's main command; null when it is gone (the container is stopping). */
  main: count.nullable(),
  oom_kills: count.nullable(),
  /** Whether the helper runs as another user than the commands (its channel out of their reach). */
  isolated: z.boolean(),
  /** Whether its idle shells are sealed against ptrace (see helper.py SEALED). */
  sealed: z.boolean(),
  uid: count,
  /** The channel its frames use: the host's socket, or its exec's stdin/stdout (helper-channel.ts). */
  channel: z.enum(['socket', 'exec']),
  /** Why it stays on the exec though the host offered a socket (null otherwise). */
  channel_problem: z
    .string()
    .transform((m) => m.slice(0, 2000))
    .nullable(),
});
/** The helper's hello, checked. */
export type HelperHello = z.infer<typeof HelperHello>;

/** A reply that is not what its op promises: the channel is not to be trusted after it. */
export interface ProtocolViolation {
  readonly code: 'protocol_error';
  readonly message: string;
}

function violation(what: string, why: string): ProtocolViolation {
  return {
    code: 'protocol_error',
    message: `the sandbox helper's ${what} is not the protocol (${why}); its channel was closed and the helper restarts on the next call — if this repeats, the helper and this stepbox disagree: reinstall stepbox`,
  };
}

/** The first issues of a failed parse, each with the path of its field. */
export function issues(error: z.ZodError): string {
  const shown = error.issues.slice(0, 3).map((i) => `${i.path.join('.') || 'header'}: ${i.message}`);
  return shown.join('; ') + (error.issues.length > 3 ? `; and ${error.issues.length - 3} more` : '');
}

/** Checks the hello frame. */
export function parseHello(
  header: unknown,
): { ok: true; value: HelperHello } | { ok: false; error: ProtocolViolation } {
  const r = HelperHello.safeParse(header);
  return r.success ? { ok: true, value: r.data } : { ok: false, error: violation('hello', issues(r.error)) };
}

/** A reply read from the wire: done, an error the helper answered with, or a violation. */
export type ParsedReply<Op extends HelperOp> =
  | { readonly kind: 'ok'; readonly response: HelperResponse<Op> }
  | { readonly kind: 'error'; readonly code: string; readonly message: string }
  | { readonly kind: 'violation'; readonly error: ProtocolViolation };

/**
 * Checks a reply header (and its payload) against what `op` promises: `ok: false` with an
 * `error` is the helper's answer, anything else must match the op's reply schema.
 */
export function parseReply<Op extends HelperOp>(
  op: Op,
  request: HelperRequest<Op>,
  header: Record<string, unknown>,
  payload: Buffer,
): ParsedReply<Op> {
  if (header.ok === false) {
    const e = ErrorBody.safeParse(header.error);
    if (!e.success) return { kind: 'violation', error: violation(`error reply to ${op}`, issues(e.error)) };
    return { kind: 'error', code: e.data.code, message: e.data.message };
  }
  if (header.ok !== true)
    return { kind: 'violation', error: violation(`reply to ${op}`, 'ok: expected true or false') };
  const spec: ReplyCheck<Op> = HELPER_OPS[op];
  let reply = spec.usual?.(header);
  if (reply === undefined) {
    const r = spec.reply.safeParse(header);
    if (!r.success) return { kind: 'violation', error: violation(`reply to ${op}`, issues(r.error)) };
    reply = r.data;
  }
  if (spec.payload !== 'reply' && payload.length)
    return { kind: 'violation', error: violation(`reply to ${op}`, 'it carries a payload') };
  const misfit = spec.fits?.(reply, payload, request);
  if (misfit) return { kind: 'violation', error: violation(`reply to ${op}`, misfit) };
  return { kind: 'ok', response: { header: reply, payload } };
}

/** One field of a request or reply: its name, and whether it may be left out. */
export interface ProtocolField {
  readonly name: string;
  readonly optional: boolean;
}

/** The fields of an object schema, or of a union of them (optional when not in every one). */
export function fieldsOf(schema: z.core.$ZodType): ProtocolField[] {
  if (schema instanceof z.ZodObject) {
    const shape: Record<string, z.core.$ZodType> = schema.shape;
    return Object.entries(shape).map(([name, s]) => ({
      name,
      optional: z.safeParse(s, undefined).success,
    }));
  }
  if (schema instanceof z.ZodUnion) {
    const members: readonly z.core.$ZodType[] = schema.options;
    const options = members.map(fieldsOf);
    const names = [...new Set(options.flat().map((f) => f.name))];
    return names.map((name) => ({
      name,
      optional: options.some((o) => o.find((f) => f.name === name)?.optional !== false),
    }));
  }
  throw new Error('a channel schema is an object or a union of objects');
}

/** The protocol as lists of field names per op (optional ones marked `?`), as helper.py's `describe` answers. */
export function protocolFields(): {
  ops: Record<string, { request: string[]; reply: string[] }>;
  hello: string[];
} {
  const names = (s: z.core.$ZodType) => fieldsOf(s).map((f) => f.name + (f.optional ? '?' : ''));
  const ops: Record<string, { request: string[]; reply: string[] }> = {};
  for (const [name, spec] of Object.entries(HELPER_OPS))
    ops[name] = { request: names(spec.request), reply: names(spec.reply) };
  return { ops, hello: names(HelperHello).filter((n) => n !== 'event') };
}

/** One helper request as the sandbox sends it (restarts and errors are its business). */
export type HelperCall = <Op extends HelperOp>(
  op: Op,
  args: HelperRequest<Op>,
  payload?: Uint8Array,
  maxPayload?: number,
) => Promise<HelperResponse<Op>>;
