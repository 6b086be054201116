/**
 * The one framing of every channel between the host and a program stepbox runs in the
 * sandbox (the helper, the agent bridge, the verifier runner): frames of
 * `[u32 BE header length][u32 BE payload length][header: UTF-8 JSON object][payload: raw bytes]`,
 * written by resources/sandbox/prelude.py (`frame`, `FrameReader`) on the other side. What
 * each channel's headers hold is typed in sandbox-channels.ts (and helper-protocol.ts).
 * The helper's client reads the same frames with checks of its own before a payload is
 * buffered (helper-client.ts: replies to pending ids only).
 */

/** Bytes of the two lengths ahead of each frame's header. */
export const FRAME_HEAD = 8;

/** One frame: `header` as JSON, then `payload`. */
export function encodeFrame(header: Record<string, unknown>, payload: Uint8Array = Buffer.alloc(0)): Buffer {
  const json = JSON.stringify(header);
  const hlen = Buffer.byteLength(json, 'utf8');
  const out = Buffer.allocUnsafe(FRAME_HEAD + hlen + payload.length);
  out.writeUInt32BE(hlen, 0);
  out.writeUInt32BE(payload.length, 4);
  out.write(json, FRAME_HEAD, 'utf8');
  out.set(payload, FRAME_HEAD + hlen);
  return out;
}

/** A frame read off a channel: its header (a JSON object, not yet checked) and payload. */
export interface RawFrame {
  readonly header: Record<string, unknown>;
  readonly payload: Buffer;
}

/** Bytes that are not a frame of the program's: the channel is not to be trusted after them. */
export interface FrameFault {
  readonly code: 'protocol_error';
  readonly message: string;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Whole frames out of a byte stream as it arrives, with limits on each length: a length
 * beyond them, or a header that is not a JSON object, is a {@link FrameFault} (and every
 * later feed answers the same), never a buffer grown without bound or a throw.
 */
export class FrameDecoder {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private fault: FrameFault | undefined;

  constructor(
    /** Who writes the frames, for messages ("the agent bridge"). */
    private readonly who: string,
    private readonly maxHeader: number,
    private readonly maxPayload: number,
  ) {}

  /** The frames `chunk` completes, or the fault that ended the stream. */
  feed(chunk: Buffer): { frames: RawFrame[] } | { fault: FrameFault } {
    if (this.fault) return { fault: this.fault };
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const frames: RawFrame[] = [];
    while (this.buffered >= FRAME_HEAD) {
      const all = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
      this.chunks = [all];
      const hlen = all.readUInt32BE(0);
      const plen = all.readUInt32BE(4);
      if (hlen > this.maxHeader || plen > this.maxPayload)
        return this.refuse(
          `a frame announced a ${hlen}-byte header and a ${plen}-byte payload (at most ${this.maxHeader} and ${this.maxPayload})`,
        );
      const total = FRAME_HEAD + hlen + plen;
      if (all.length < total) break;
      let header: unknown;
      try {
        header = JSON.parse(all.toString('utf8', FRAME_HEAD, FRAME_HEAD + hlen));
      } catch (e) {
        return this.refuse(`a header is not JSON (${e instanceof Error ? e.message : String(e)})`);
      }
      if (!isRecord(header)) return this.refuse('a header is not a JSON object');
      frames.push({ header, payload: all.subarray(FRAME_HEAD + hlen, total) });
      const rest = all.subarray(total);
      this.chunks = rest.length ? [rest] : [];
      this.buffered = rest.length;
    }
    return { frames };
  }

  private refuse(why: string): { fault: FrameFault } {
    this.chunks = [];
    this.buffered = 0;
    this.fault = { code: 'protocol_error', message: `${this.who}'s channel is not the protocol: ${why}` };
    return { fault: this.fault };
  }
}
