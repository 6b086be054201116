import type { Readable, Writable } from 'node:stream';

/** A helper response: the JSON header and the raw payload that followed it. */
export interface HelperResponse {
  readonly header: Record<string, unknown>;
  readonly payload: Buffer;
}

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
  resolve(r: HelperResponse): void;
  reject(e: Error): void;
}

/**
 * Host side of the helper protocol (resources/sandbox/helper.py): frames of
 * `[u32 BE header length][u32 BE payload length][JSON header][raw payload]` over the
 * exec's stdin/stdout. Requests carry an id, so any number may be in flight.
 */
export class HelperClient {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private chunks: Buffer[] = [];
  private buffered = 0;
  private expected = 0;
  private closedWith: HelperClosed | undefined;
  private helloResolve!: (h: Record<string, unknown>) => void;
  private helloReject!: (e: Error) => void;
  /** Resolves with the helper's hello (pid, …) once it is up. */
  readonly hello: Promise<Record<string, unknown>>;
  /** Called once when the helper goes away. */
  onClose: (reason: string) => void = () => undefined;

  constructor(
    private readonly stdin: Writable,
    stdout: Readable,
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
  }

  /** Whether the helper is gone. */
  get closed(): boolean {
    return this.closedWith !== undefined;
  }

  /** Sends a request; resolves with the response, rejects with {@link HelperError} or {@link HelperClosed}. */
  request(op: string, args: Record<string, unknown> = {}, payload?: Uint8Array): Promise<HelperResponse> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const id = this.nextId++;
    const header = Buffer.from(JSON.stringify({ ...args, id, op }), 'utf8');
    const prefix = Buffer.allocUnsafe(8);
    prefix.writeUInt32BE(header.length, 0);
    prefix.writeUInt32BE(payload?.length ?? 0, 4);
    return new Promise<HelperResponse>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.stdin.write(
        payload?.length ? Buffer.concat([prefix, header, payload]) : Buffer.concat([prefix, header]),
      );
    });
  }

  /** Marks the helper gone and fails every pending request. */
  close(reason: string): void {
    if (this.closedWith) return;
    this.closedWith = new HelperClosed(reason);
    this.helloReject(this.closedWith);
    for (const p of this.pending.values()) p.reject(this.closedWith);
    this.pending.clear();
    this.onClose(reason);
  }

  private onData(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    // Large payloads arrive in many chunks: join them once the whole frame is here.
    if (this.buffered < this.expected) return;
    while (this.buffered >= 8) {
      const head = this.chunks[0].length >= 8 ? this.chunks[0] : this.flatten();
      const total = 8 + head.readUInt32BE(0) + head.readUInt32BE(4);
      const hlen = head.readUInt32BE(0);
      if (this.buffered < total) {
        this.expected = total;
        return;
      }
      this.expected = 0;
      const all = this.flatten();
      let header: Record<string, unknown>;
      try {
        header = JSON.parse(all.toString('utf8', 8, 8 + hlen)) as Record<string, unknown>;
      } catch (e) {
        // Something other than the helper wrote to its stdout (a process in the sandbox can):
        // the stream cannot be trusted any more, so the session is restarted.
        this.chunks = [];
        this.buffered = 0;
        this.close(`the helper's output is not the protocol (${(e as Error).message})`);
        return;
      }
      const payload = all.subarray(8 + hlen, total);
      const rest = all.subarray(total);
      this.chunks = rest.length ? [rest] : [];
      this.buffered = rest.length;
      this.onFrame(header, payload);
    }
  }

  private flatten(): Buffer {
    if (this.chunks.length !== 1) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0];
  }

  private onFrame(header: Record<string, unknown>, payload: Buffer): void {
    if (header.event === 'hello') {
      this.helloResolve(header);
      return;
    }
    const id = header.id as number;
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    const error = header.error as { code: string; message: string } | undefined;
    // An exec result carries its error (timeout, oom, …) as data next to the output.
    if (header.ok === false && error) p.reject(new HelperError(error.code, error.message));
    else p.resolve({ header, payload });
  }
}
