import type { Readable, Writable } from 'node:stream';
import { SpinBackoff, type ReplySpin } from './reply-spin.js';
import {
  parseHello,
  parseReply,
  type HelperHello,
  type HelperOp,
  type HelperRequest,
  type HelperResponse,
} from './helper-protocol.js';

export type { HelperResponse } from './helper-protocol.js';

/** The helper answered a request with an error code (file not found, verify failed, …). */
export class HelperError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'HelperError';
  }
}

/** The helper process went away (its stdout closed) while requests were in flight. */
export class HelperClosed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HelperClosed';
  }
}

interface Pending {
  /** Checks the answer against the request's op (helper-protocol.ts) and settles the request. */
  settle(header: Record<string, unknown>, payload: Buffer): void;
  reject(e: Error): void;
  /** The largest payload this request's answer may carry. */
  readonly maxPayload: number;
  /** When (performance.now()) the helper counts as hung if it has not answered; Infinity: never. */
  readonly deadline: number;
  /** The ms it was given to answer (for the message when it did not). */
  readonly within: number | undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Why bytes that should start a frame do not: most often text where the protocol should be
 * (the engine's own error when the exec could not start its program, `OCI runtime exec
 * failed: …`, read as a length it would be 1,329,809,696), said as that text.
 */
function notAFrame(bytes: Buffer, hlen: number): string {
  const head = bytes.subarray(0, 2000).toString('latin1');
  if (/^[\t\n\r\x20-\x7e]{8,}/.test(head))
    return `its output is text, not the protocol: ${JSON.stringify(head.replace(/\s+/g, ' ').trim().slice(0, 600))}`;
  return `a frame announced a ${hlen}-byte header`;
}

/** Helper requests in flight in this process, over every client: a reply is spun for only when it is the one. */
let inFlight = 0;

/**
 * Tool calls of this process so far, by what their reply's spin did (reply-spin.ts): the bench
 * reports them beside the overhead, so a figure with the spin on says whether it spun at all.
 */
export const spinCounts = { exec: 0, spun: 0, caught: 0, notAlone: 0, backedOff: 0, busy: 0 };

/** Where a spin reads into (reused: what it reads is copied out). */
let spinBuffer: Buffer | undefined;

/** The largest JSON header the host accepts from the helper (a scan of a huge workspace fits). */
export const MAX_HEADER_BYTES = 64 * 1024 * 1024;

/**
 * Host side of the helper protocol (resources/sandbox/helper.py): frames of
 * `[u32 BE header length][u32 BE payload length][JSON header][raw payload]` over the
 * helper's channel (its socket or its exec's stdin/stdout, see helper-channel.ts). Requests carry an id, so any number may be in flight.
 *
 * Only frames the host expects are accepted: the hello first, then one answer per pending
 * id, each with a header under {@link MAX_HEADER_BYTES} and a payload under the cap its
 * request named. Anything else (an unknown or repeated id, an oversized length, a header
 * that is not JSON) means the stream is not the helper's: the client closes at once, before
 * buffering the frame, and the sandbox restarts the helper (`session_restarted`). A frame
 * that is well formed but not what its op promises (helper-protocol.ts) fails its request
 * with a {@link HelperError} coded `protocol_error` and closes the channel the same way.
 */
export class HelperClient {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private chunks: Buffer[] = [];
  private buffered = 0;
  private expected = 0;
  private helloSeen = false;
  /** The frame being received once its header is checked: its answer and total length. */
  private frame: { header: Record<string, unknown>; total: number; hlen: number } | undefined;
  private closedWith: HelperClosed | undefined;
  /**
   * One timer for every request's deadline, armed for the earliest and left running when
   * that request is answered (a timer set and cleared per tool call was ~50 us of its path
   * after the model's pause): when it fires it looks for an overdue request and re-arms for
   * the next deadline, if any.
   */
  private watchdog: ReturnType<typeof setTimeout> | undefined;
  private watchdogAt = Infinity;
  /** Which tool calls spin after one whose spin ran out (reply-spin.ts). */
  private readonly spinBackoff = new SpinBackoff();
  private helloResolve!: (h: HelperHello) => void;
  private helloReject!: (e: Error) => void;
  /** Resolves with the helper's hello (pid, …) once it is up. */
  readonly hello: Promise<HelperHello>;
  /** Called once when the helper goes away. */
  onClose: (reason: string) => void = () => undefined;

  /**
   * @param stdin where requests go: the helper exec's stdin, or its socket (helper-channel.ts)
   * @param stdout where the helper's frames come from: the exec's stdout, or the same socket
   */
  constructor(
    private readonly stdin: Writable,
    stdout: Readable,
    /** Busy-polling for a tool call's reply (reply-spin.ts); none: the host sleeps until it comes. */
    private readonly spin?: ReplySpin,
  ) {
    this.hello = new Promise((resolve, reject) => {
      this.helloResolve = resolve;
      this.helloReject = reject;
    });
    // Whoever starts the helper awaits `hello`; a close before anyone does must not be an
    // unhandled rejection.
    this.hello.catch(() => undefined);
    stdout.on('data', (chunk: Buffer) => this.onData(chunk));
    stdout.on('end', () => this.close('the helper process exited'));
    stdout.on('error', (e: Error) => this.close(`the helper stream failed: ${e.message}`));
    stdin.on('error', (e: Error) => this.close(`the helper stream failed: ${e.message}`));
    // A socket is handed over paused (helper-socket.ts): a 'data' listener alone would not start it.
    stdout.resume();
  }

  /** Whether the helper is gone. */
  get closed(): boolean {
    return this.closedWith !== undefined;
  }

  /**
   * Sends a request; resolves with the response, rejects with {@link HelperError} or
   * {@link HelperClosed}. An answer with a payload over `maxPayload` bytes closes the helper;
   * so does no answer within `answerWithinMs` (a hung helper: every pending request fails).
   */
  request<Op extends HelperOp>(
    op: Op,
    args: HelperRequest<Op>,
    payload?: Uint8Array,
    maxPayload = 0,
    answerWithinMs?: number,
  ): Promise<HelperResponse<Op>> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const id = this.nextId++;
    const json = JSON.stringify({ ...args, id, op });
    // Length prefix and header in one buffer, written in place (no second copy).
    const hlen = Buffer.byteLength(json, 'utf8');
    const head = Buffer.allocUnsafe(8 + hlen);
    head.writeUInt32BE(hlen, 0);
    head.writeUInt32BE(payload?.length ?? 0, 4);
    head.write(json, 8, 'utf8');
    return new Promise<HelperResponse<Op>>((resolve, reject) => {
      const settle = (answer: Record<string, unknown>, data: Buffer) => {
        const r = parseReply(op, args, answer, data);
        if (r.kind === 'ok') resolve(r.response);
        else if (r.kind === 'error') reject(new HelperError(r.code, r.message));
        else {
          reject(new HelperError(r.error.code, r.error.message));
          this.refuse(`its reply to ${op} is not the protocol`);
        }
      };
      const deadline = answerWithinMs === undefined ? Infinity : performance.now() + answerWithinMs;
      inFlight++;
      this.pending.set(id, { settle, reject, maxPayload, deadline, within: answerWithinMs });
      if (deadline < this.watchdogAt) this.armWatchdog(deadline);
      if (!payload?.length) {
        // The usual request (a tool call): one write, no cork (libuv writes it at once).
        this.stdin.write(head);
        if (op === 'exec' && this.spin) this.maybeSpin(id, this.spin);
        return;
      }
      // The payload goes as it is, not copied behind the header (blobs cross by the
      // megabyte, and branches restored at once share one); corked, it leaves in one writev.
      this.stdin.cork();
      this.stdin.write(head);
      this.stdin.write(payload);
      this.stdin.uncork();
    });
  }

  /** Spins for a tool call's reply where it may (see {@link ReplySpin}), counting what it did. */
  private maybeSpin(id: number, spin: ReplySpin): void {
    spinCounts.exec++;
    if (inFlight !== 1) spinCounts.notAlone++;
    else if (!this.spinBackoff.take()) spinCounts.backedOff++;
    else if (!spin.allowed()) spinCounts.busy++;
    else {
      spinCounts.spun++;
      const caught = this.spinFor(id, spin);
      if (caught) spinCounts.caught++;
      this.spinBackoff.spun(caught);
    }
  }

  /**
   * Busy-polls the socket for the answer to `id` for up to the spin's budget (reply-spin.ts),
   * handing what it reads to the frame reader as libuv's 'data' would; returns when the
   * answer is in, the budget is spent, or the socket ends (libuv then reports the end);
   * false when the budget ran out first.
   */
  private spinFor(id: number, spin: ReplySpin): boolean {
    const until = performance.now() + spin.budgetMs;
    const into = (spinBuffer ??= Buffer.allocUnsafe(64 * 1024));
    while (this.pending.has(id) && !this.closedWith) {
      const n = spin.read(into);
      if (n === 0) return true;
      if (n === null) {
        if (performance.now() >= until) return false;
        continue;
      }
      this.onData(Buffer.from(into.subarray(0, n)));
    }
    return true;
  }

  private armWatchdog(at: number): void {
    clearTimeout(this.watchdog);
    this.watchdogAt = at;
    this.watchdog = setTimeout(() => this.checkDeadlines(), Math.max(0, at - performance.now()));
    // Only a pending request's answer matters, and the channel it comes on keeps the process up.
    this.watchdog.unref();
  }

  /** Closes the helper if a request is overdue; else waits for the next deadline, if any. */
  private checkDeadlines(): void {
    this.watchdog = undefined;
    this.watchdogAt = Infinity;
    const now = performance.now();
    let next = Infinity;
    for (const p of this.pending.values()) {
      if (p.deadline <= now) return this.close(`the helper did not answer within ${p.within} ms`);
      next = Math.min(next, p.deadline);
    }
    if (next < Infinity) this.armWatchdog(next);
  }

  /** Marks the helper gone and fails every pending request. */
  close(reason: string): void {
    if (this.closedWith) return;
    this.closedWith = new HelperClosed(reason);
    clearTimeout(this.watchdog);
    this.watchdogAt = Infinity;
    this.helloReject(this.closedWith);
    for (const p of this.pending.values()) p.reject(this.closedWith);
    inFlight -= this.pending.size;
    this.pending.clear();
    this.onClose(reason);
  }

  private onData(chunk: Buffer): void {
    if (this.closedWith) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    // Large payloads arrive in many chunks: join them once the whole frame is here.
    if (this.buffered < this.expected) return;
    while (this.buffered >= 8 && !this.closedWith) {
      if (!this.frame) {
        const head = this.chunks[0].length >= 8 ? this.chunks[0] : this.flatten();
        const hlen = head.readUInt32BE(0);
        const plen = head.readUInt32BE(4);
        if (hlen > MAX_HEADER_BYTES) return this.refuse(notAFrame(this.flatten(), hlen));
        if (this.buffered < 8 + hlen) {
          this.expected = 8 + hlen;
          return;
        }
        const all = this.flatten();
        let header: Record<string, unknown>;
        try {
          const parsed: unknown = JSON.parse(all.toString('utf8', 8, 8 + hlen));
          if (!isRecord(parsed)) throw new Error('the header is not a JSON object');
          header = parsed;
        } catch (e) {
          return this.refuse(
            `its output is not the protocol (${e instanceof Error ? e.message : String(e)})`,
          );
        }
        const why = this.unexpected(header, plen);
        if (why) return this.refuse(why);
        this.frame = { header, total: 8 + hlen + plen, hlen };
      }
      const { header, total, hlen } = this.frame;
      if (this.buffered < total) {
        this.expected = total;
        return;
      }
      this.expected = 0;
      this.frame = undefined;
      const all = this.flatten();
      const payload = all.subarray(8 + hlen, total);
      const rest = all.subarray(total);
      this.chunks = rest.length ? [rest] : [];
      this.buffered = rest.length;
      this.onFrame(header, payload);
    }
  }

  /** Why a frame is not one the host is waiting for (undefined when it is). */
  private unexpected(header: Record<string, unknown>, plen: number): string | undefined {
    if (!this.helloSeen) {
      if (header.event !== 'hello') return 'its first frame is not the hello';
      if (plen !== 0) return 'its hello carries a payload';
      return undefined;
    }
    const id = header.id;
    if (typeof id !== 'number' || !this.pending.has(id))
      return `a frame answers request ${JSON.stringify(id ?? null)}, which is not pending`;
    const max = this.pending.get(id)!.maxPayload;
    if (plen > max) return `a frame announced a ${plen}-byte payload for a request allowed ${max}`;
    return undefined;
  }

  /** A frame the host did not expect: the stream is not the helper's, so it is dropped. */
  private refuse(why: string): void {
    this.chunks = [];
    this.buffered = 0;
    this.expected = 0;
    this.frame = undefined;
    this.close(`the helper's channel was refused: ${why}`);
  }

  private flatten(): Buffer {
    if (this.chunks.length !== 1) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0];
  }

  private onFrame(header: Record<string, unknown>, payload: Buffer): void {
    if (!this.helloSeen) {
      this.helloSeen = true;
      const hello = parseHello(header);
      if (hello.ok) this.helloResolve(hello.value);
      else this.refuse(hello.error.message);
      return;
    }
    // unexpected() let through only numbers that name a pending request.
    const id = typeof header.id === 'number' ? header.id : -1;
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    inFlight--;
    p.settle(header, payload);
  }
}
