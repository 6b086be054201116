import type { Readable } from 'node:stream';
import { DEFAULT_WORKDIR } from '../../../shared/constants.js';
import type { ExecStreams } from '../docker/client.js';
import { HelperClient } from './helper-client.js';
import type { HelperHello } from './helper-protocol.js';
import { HELPER_SOCKET_PATH, type HelperSocket, type SocketWait } from './helper-socket.js';
import { socketSpin } from './reply-spin.js';

/**
 * Which channel a sandbox's helper speaks over: `socket`, the host's unix socket (no engine
 * between the two, see helper-socket.ts), or `exec`, the stdin/stdout of the helper's
 * `docker exec` (every frame relayed by the engine), with the reason the socket is not used.
 */
export type HelperChannel = { readonly kind: 'socket' } | { readonly kind: 'exec'; readonly reason: string };

/** One line saying which channel a sandbox's helper uses (doctor, logs). */
export function describeChannel(channel: HelperChannel): string {
  return channel.kind === 'socket'
    ? 'helper channel: a unix socket (tool calls bypass the engine)'
    : `helper channel: its docker exec, every call relayed by the engine (~1-2 ms more): ${channel.reason}`;
}

/** What the host offers a helper it starts: a socket to connect to, or why there is none. */
export type ChannelOffer = { readonly socket: HelperSocket } | { readonly reason: string };

/** A started helper: its client, the channel it chose, its hello, and how to let the channel go. */
export interface HelperConnection {
  readonly client: HelperClient;
  readonly channel: HelperChannel;
  readonly hello: HelperHello;
  /** The stream the client reads the helper's frames from (the socket, or the exec's stdout). */
  readonly output: Readable;
  /** Closes the channel: the helper sees its end and exits. */
  close(): void;
}

/**
 * What the helper is told on its exec's stdin, after its source (helper.py `BOOT`): the
 * socket to use and its token, and the working directory (helper.py `WORKSPACE`).
 */
export function bootConfig(wait: SocketWait | undefined, workdir: string = DEFAULT_WORKDIR): Buffer {
  return Buffer.from(
    JSON.stringify({
      ...(wait ? { socket: HELPER_SOCKET_PATH, token: wait.token.toString('hex') } : {}),
      ...(workdir !== DEFAULT_WORKDIR ? { workdir } : {}),
    }),
  );
}

/**
 * Waits for the hello of a helper just started in `streams`: over the socket when it could
 * connect to it (`wait`), else over the exec's stdout, whichever comes first; rejects after
 * `timeoutMs` or when neither can come any more. On the socket, the exec stays the helper's
 * lifeline: its end, or anything at all on its stdout, closes the channel.
 */
export function connectHelper(
  streams: ExecStreams,
  wait: SocketWait | undefined,
  noSocket: string,
  timeoutMs: number,
  /** How long a tool call may busy-poll the socket for its reply (reply-spin.ts); 0: never. */
  spinMs = 0,
): Promise<HelperConnection> {
  const viaExec = new HelperClient(streams.stdin, streams.stdout);
  let viaSocket: { client: HelperClient; socket: Readable & { destroy(): void } } | undefined;
  return new Promise<HelperConnection>((resolve, reject) => {
    let done = false;
    const timer = setTimeout(() => fail(new Error(`no hello within ${timeoutMs} ms`)), timeoutMs);
    const fail = (e: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      wait?.cancel();
      viaSocket?.socket.destroy();
      reject(e);
    };
    viaExec.hello.then(
      (hello) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        wait?.cancel();
        viaSocket?.socket.destroy();
        const reason = !wait
          ? noSocket
          : `the helper could not use the host's socket: ${hello.channel_problem ?? 'it did not say why'}`;
        resolve({
          client: viaExec,
          channel: { kind: 'exec', reason },
          hello,
          output: streams.stdout,
          close: () => streams.close(),
        });
      },
      (e: Error) => {
        // On the exec the helper only ever says hello or nothing: its stdout ending before
        // either hello means it is gone.
        if (!viaSocket) fail(e);
      },
    );
    void wait?.connection.then((socket) => {
      if (done) {
        socket.destroy();
        return;
      }
      const client = new HelperClient(socket, socket, socketSpin(socket, spinMs));
      viaSocket = { client, socket };
      // The exec is the helper's life: when it ends (or carries anything), the channel closes.
      viaExec.onClose = (reason) => {
        client.close(`the helper's exec ended (${reason})`);
        socket.destroy();
      };
      client.hello.then(
        (hello) => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          resolve({
            client,
            channel: { kind: 'socket' },
            hello,
            output: socket,
            close: () => {
              socket.destroy();
              streams.close();
            },
          });
        },
        (e: Error) => {
          // It gave the socket up (no ack in time on its side): its hello comes on the exec.
          if (viaExec.closed) return fail(e);
          viaSocket = undefined;
          viaExec.onClose = () => undefined;
        },
      );
    });
  });
}
