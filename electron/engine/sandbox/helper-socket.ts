import { randomBytes, timingSafeEqual } from 'node:crypto';
import { chmod, lstat, mkdir, readdir, rm, rmdir } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { CHANNEL_DIR } from '../docker/container-spec.js';
import { currentProcessIdentity, processStartTime } from '../process-identity.js';
import { sha256Hex } from '../sha256.js';
import { logger } from '../log.js';

const log = logger('sandbox');

const SOCKET_NAME = 'helper.sock';
/** Inside a sandbox: the socket the helper connects to. */
export const HELPER_SOCKET_PATH = `${CHANNEL_DIR}/${SOCKET_NAME}`;

/** The one-time token the helper presents on connecting (raw bytes; hex on the exec's stdin). */
const TOKEN_BYTES = 32;
/** What the host answers a token it was waiting for (resources/sandbox/helper.py SOCKET_ACK). */
const ACK = Buffer.from([1]);
/** How long a connection may take to present its token. */
const AUTH_TIMEOUT_MS = 5_000;
/** Connections that have not yet presented a token, at most (more are closed at once). */
const MAX_UNAUTHENTICATED = 4;
/** A unix socket's path holds 108 bytes on Linux (104 on macOS), its final NUL included. */
const MAX_SOCKET_PATH = process.platform === 'linux' ? 107 : 103;
/** The per-process folders under `<runDir>/helpers`: `<pid>-<8 hex of its start time>`. */
const PROCESS_DIR = /^(\d+)-([0-9a-f]{8})$/;

/** A connection the host waits for: the token it must present, and the socket once it did. */
export interface SocketWait {
  readonly token: Buffer;
  readonly connection: Promise<Socket>;
  /** Stops waiting (the helper chose the exec): a later connection with this token is refused. */
  cancel(): void;
}

/**
 * The host's end of one sandbox's helper channel: a unix socket the host listens on, in a
 * folder of its own that is bind-mounted read-only into the container at {@link CHANNEL_DIR}.
 * The helper connects (as root, see helper.py `open_socket`) and presents the token it was
 * given over its exec's stdin; only then is the connection the helper's. The host never
 * connects to, opens or follows anything in the folder: it binds the socket once and, on
 * close, removes the folder without following links.
 */
export class HelperSocket {
  private expected: { token: Buffer; resolve(socket: Socket): void } | undefined;
  private readonly unauthenticated = new Set<Socket>();
  /** The helper's connection, once handed on (the server's close waits for it otherwise). */
  private readonly accepted = new Set<Socket>();

  private constructor(
    /** The folder on the host (the bind mount's source). */
    readonly hostDir: string,
    private readonly server: Server,
  ) {
    server.on('connection', (c) => this.onConnection(c));
  }

  /** Creates the folder (0711: root in the container must pass it) and listens in it. */
  static async open(hostDir: string): Promise<HelperSocket> {
    const path = join(hostDir, SOCKET_NAME);
    if (Buffer.byteLength(path) > MAX_SOCKET_PATH)
      throw new Error(
        `the helper socket's path ${path} is longer than the ${MAX_SOCKET_PATH} bytes a unix socket path may have; set STEPBOX_HOME to a shorter folder`,
      );
    await mkdir(hostDir, { mode: 0o711 });
    const server = createServer({ pauseOnConnect: true });
    try {
      await chmod(hostDir, 0o711); // whatever the umask
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(path, () => {
          server.off('error', reject);
          resolve();
        });
      });
      // Root in the container is another uid than the host user (rootful engines): it needs
      // write permission to connect. The host's own folders above are 0700.
      await chmod(path, 0o666);
    } catch (e) {
      server.close();
      await rm(hostDir, { recursive: true, force: true });
      throw e;
    }
    server.on('error', (e) => log.warn(`helper socket ${path}: ${e.message}`));
    // Listening alone keeps no process alive (a kept sandbox's, say); a helper's connection does.
    server.unref();
    return new HelperSocket(hostDir, server);
  }

  /** Waits for the helper's connection: a fresh token, and the socket once a connection presents it. */
  expect(): SocketWait {
    const token = randomBytes(TOKEN_BYTES);
    let resolve!: (socket: Socket) => void;
    const connection = new Promise<Socket>((r) => (resolve = r));
    const entry = { token, resolve };
    this.expected = entry;
    return {
      token,
      connection,
      cancel: () => {
        if (this.expected === entry) this.expected = undefined;
      },
    };
  }

  private onConnection(conn: Socket): void {
    if (!this.expected || this.unauthenticated.size >= MAX_UNAUTHENTICATED) {
      conn.destroy();
      return;
    }
    this.unauthenticated.add(conn);
    const chunks: Buffer[] = [];
    let got = 0;
    const drop = () => {
      clearTimeout(timer);
      conn.off('data', onData);
      this.unauthenticated.delete(conn);
      conn.destroy();
    };
    const timer = setTimeout(drop, AUTH_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      got += chunk.length;
      if (got < TOKEN_BYTES) return;
      const all = Buffer.concat(chunks);
      const want = this.expected;
      if (!want || !timingSafeEqual(all.subarray(0, TOKEN_BYTES), want.token)) return drop();
      clearTimeout(timer);
      conn.off('data', onData);
      conn.off('error', drop);
      conn.off('end', drop);
      conn.pause();
      this.unauthenticated.delete(conn);
      this.expected = undefined;
      this.accepted.add(conn);
      conn.once('close', () => this.accepted.delete(conn));
      // The helper speaks only after the ack; anything sooner belongs to the protocol.
      if (all.length > TOKEN_BYTES) conn.unshift(all.subarray(TOKEN_BYTES));
      conn.write(ACK);
      want.resolve(conn);
    };
    conn.on('data', onData);
    conn.on('error', drop);
    conn.on('end', drop);
    conn.resume();
  }

  /** Stops listening, closes the helper's connection and removes the folder (links in it are removed, never followed). */
  async close(): Promise<void> {
    this.expected = undefined;
    for (const c of [...this.unauthenticated, ...this.accepted]) c.destroy();
    this.unauthenticated.clear();
    this.accepted.clear();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await rm(this.hostDir, { recursive: true, force: true });
  }
}

/** The tag of a process's start time in its folder's name (start times may hold spaces: macOS). */
function startTag(start: string | null): string {
  return sha256Hex(Buffer.from(start ?? 'unknown')).slice(0, 8);
}

/**
 * The helper sockets of one provider: a folder of this process's under `<runDir>/helpers`
 * (0700, named by its pid and start time, shared by the process's providers), one sandbox
 * folder in it per {@link HelperSocket}. Folders left by a process that is gone (a crash, a
 * kill -9) are removed by {@link sweep}.
 */
export class HelperSockets {
  private own: Promise<string> | undefined;

  constructor(readonly runDir: string) {}

  private get root(): string {
    return join(this.runDir, 'helpers');
  }

  private ownDir(): Promise<string> {
    this.own ??= (async () => {
      await mkdir(this.root, { recursive: true, mode: 0o700 });
      const me = currentProcessIdentity();
      const dir = join(this.root, `${me.pid}-${startTag(me.start_time)}`);
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await chmod(dir, 0o700);
      return dir;
    })().catch((e: unknown) => {
      this.own = undefined;
      throw e;
    });
    return this.own;
  }

  /** A socket for a new sandbox. Rejects when it cannot be had here (the caller uses the exec). */
  async open(): Promise<HelperSocket> {
    const own = await this.ownDir();
    // Again each time: another provider of this process may have removed it when it was empty.
    await mkdir(own, { recursive: true, mode: 0o700 });
    return HelperSocket.open(join(own, randomBytes(4).toString('hex')));
  }

  /**
   * Removes the folders of processes that are gone (no such pid, or one started at another
   * time); returns how many. A folder's name is all that is read: nothing in it is opened or
   * followed. (On a home shared between machines another host's live process may lose its
   * folder: its helpers keep their connections, and one restarted later uses its exec.)
   */
  async sweep(): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.root);
    } catch {
      return 0;
    }
    let removed = 0;
    for (const name of names) {
      const m = PROCESS_DIR.exec(name);
      if (!m) continue;
      const start = processStartTime(Number(m[1]));
      if (start !== null && startTag(start) === m[2]) continue;
      const dir = join(this.root, name);
      try {
        if (!(await lstat(dir)).isDirectory()) continue;
        await rm(dir, { recursive: true, force: true });
        removed++;
      } catch (e) {
        log.debug(`cannot sweep helper folder ${dir}: ${(e as Error).message}`);
      }
    }
    return removed;
  }

  /**
   * Lets go of this process's folder: removed when empty (each sandbox removes its own; a
   * kept one's stays until the sweep after this process, and so do those of this process's
   * other providers).
   */
  async close(): Promise<void> {
    const own = this.own;
    this.own = undefined;
    const dir = await own?.catch(() => undefined);
    if (dir) await rmdir(dir).catch(() => undefined);
  }
}
