import type { Duplex } from 'node:stream';
import { DEFAULT_WORKDIR } from '../../../shared/constants.js';
import { SANDBOX_UID } from '../../../shared/constants.js';
import type { DockerEngine, ExecStreams } from '../docker/client.js';
import { logger } from '../log.js';
import { loadSandboxProgram } from './sandbox-resources.js';
import { RUNTIME_PYTHON, runtimeProgram } from './sandbox-runtime.js';
import {
  SandboxFailure,
  type InsideAgentExit,
  type InsideAgentRequest,
  type InsideAgentRun,
} from './sandbox.js';

const log = logger('inside-agent');

/** Frame header: type (1 byte), channel (u32 BE), length (u32 BE); the protocol of bridge.py. */
const HEAD = 9;
/** Largest frame the host accepts from the bridge (a connection's chunk is 64 KiB). */
const MAX_FRAME = 8 * 1024 * 1024;
/** How long the bridge may take to answer its start (python start, agent files checked). */
const START_TIMEOUT_MS = 30_000;
/** Grace for the agent to exit after TERM before the bridge is closed (which KILLs it). */
const STOP_GRACE_MS = 2_000;

/** One frame of the bridge protocol. */
function frame(kind: string, chan: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(HEAD);
  head.write(kind, 0, 'latin1');
  head.writeUInt32BE(chan, 1);
  head.writeUInt32BE(payload.length, 5);
  return Buffer.concat([head, payload]);
}

/**
 * Starts an agent inside a Docker sandbox: resources/sandbox/bridge.py in its own
 * `docker exec` as root (the runtime's `python3 -I`), which checks the agent's files at /opt/agent,
 * listens on 127.0.0.1:PORT inside and starts `sh -c CMD` as the sandbox user. Each
 * connection the agent makes there is carried over the exec's stdio and piped here to
 * `request.connect()` (the model endpoint): no network, no host socket, so a remote
 * engine works the same.
 */
export async function startInsideAgent(
  engine: DockerEngine,
  containerId: string,
  request: InsideAgentRequest,
  /** Where the agent starts (the sandbox's working directory). */
  workdir: string = DEFAULT_WORKDIR,
): Promise<InsideAgentRun> {
  const source = loadSandboxProgram('bridge.py').toString('utf8');
  // The runtime's python3 (sandbox-runtime.ts), whatever the image has.
  const streams: ExecStreams = await engine.exec(
    containerId,
    runtimeProgram(RUNTIME_PYTHON, ['-I', '-c', source]),
    {
      user: '0:0',
      workingDir: '/',
    },
  );
  const hash = request.agentFilesHash;
  const conns = new Map<number, Duplex>();
  let buf: Buffer = Buffer.alloc(0);
  let stderr = '';
  let exit: InsideAgentExit | null = null;
  let resolveExit!: (e: InsideAgentExit) => void;
  const exited = new Promise<InsideAgentExit>((r) => (resolveExit = r));
  let onHello: ((m: { kind: string; body: Record<string, unknown> }) => void) | null = null;
  const hellos: { kind: string; body: Record<string, unknown> }[] = [];
  const hello = (kind: string, body: Record<string, unknown>) => {
    if (onHello) onHello({ kind, body });
    else hellos.push({ kind, body });
  };
  const nextHello = () =>
    new Promise<{ kind: string; body: Record<string, unknown> }>((resolve, reject) => {
      const queued = hellos.shift();
      if (queued) return resolve(queued);
      const timer = setTimeout(() => {
        onHello = null;
        reject(
          new SandboxFailure(
            'sandbox_failed',
            `the agent bridge in ${containerId.slice(0, 12)} did not answer within ${START_TIMEOUT_MS} ms${stderr ? `; its stderr: ${stderr.trim().slice(-500)}` : ''}`,
          ),
        );
      }, START_TIMEOUT_MS);
      onHello = (m) => {
        clearTimeout(timer);
        onHello = null;
        resolve(m);
      };
    });
  const send = (b: Buffer) => {
    if (!streams.stdin.writableEnded) streams.stdin.write(b);
  };
  const finish = (e: InsideAgentExit) => {
    if (exit) return;
    exit = e;
    resolveExit(e);
  };
  const open = (chan: number) => {
    const sock = request.connect();
    conns.set(chan, sock);
    sock.on('data', (d: Buffer) => {
      for (let off = 0; off < d.length; off += 65536) send(frame('D', chan, d.subarray(off, off + 65536)));
    });
    const close = () => {
      if (conns.delete(chan)) send(frame('C', chan));
    };
    sock.on('end', close);
    sock.on('close', close);
    sock.on('error', close);
  };
  const onFrame = (kind: string, chan: number, payload: Buffer) => {
    switch (kind) {
      case 'O':
        open(chan);
        break;
      case 'D':
        conns.get(chan)?.write(payload);
        break;
      case 'C': {
        const sock = conns.get(chan);
        conns.delete(chan);
        sock?.end();
        break;
      }
      case '1':
        request.onOutput('stdout', payload);
        break;
      case '2':
        request.onOutput('stderr', payload);
        break;
      case 'X': {
        const body = JSON.parse(payload.toString('utf8')) as { code: number | null; signal: number | null };
        finish({ code: body.code, signal: body.signal === null ? null : signalName(body.signal) });
        break;
      }
      case 'R':
      case 'E':
        hello(kind, JSON.parse(payload.toString('utf8')) as Record<string, unknown>);
        break;
      default:
        log.warn(`unknown frame ${JSON.stringify(kind)} from the bridge`);
    }
  };
  streams.stdout.on('data', (chunk: Buffer) => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    while (buf.length >= HEAD) {
      const n = buf.readUInt32BE(5);
      if (n > MAX_FRAME) {
        log.warn('the bridge sent an oversized frame; closing it');
        streams.close();
        return;
      }
      if (buf.length < HEAD + n) break;
      const kind = buf.toString('latin1', 0, 1);
      const chan = buf.readUInt32BE(1);
      const payload = buf.subarray(HEAD, HEAD + n);
      buf = buf.subarray(HEAD + n);
      onFrame(kind, chan, payload);
    }
  });
  streams.stderr.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString('utf8')).slice(-4000);
  });
  streams.stdout.on('end', () => {
    for (const s of conns.values()) s.destroy();
    conns.clear();
    hello('E', { message: `the bridge ended${stderr ? `: ${stderr.trim().slice(-500)}` : ''}` });
    finish({ code: null, signal: 'SIGKILL' });
  });

  const fail = (message: string): never => {
    streams.close();
    throw new SandboxFailure('sandbox_failed', `cannot start the agent inside the sandbox: ${message}`);
  };
  send(
    frame(
      'S',
      0,
      Buffer.from(
        JSON.stringify({
          uid: SANDBOX_UID,
          gid: SANDBOX_UID,
          cwd: workdir,
          command: request.command,
          env: request.env,
          home_files: request.homeFiles,
          clear_home: request.clearHome,
          agent_dir_hash: hash,
          port: request.port,
        }),
      ),
    ),
  );
  const ready = await nextHello();
  if (ready.kind !== 'R') fail(String(ready.body.message));
  const port = Number(ready.body.port);
  return {
    port,
    exited,
    async stop() {
      if (!exit) {
        send(frame('K', 0));
        await Promise.race([exited, new Promise((r) => setTimeout(r, STOP_GRACE_MS).unref())]);
      }
      // Closing the bridge's stdin KILLs the agent's session; the bridge exits.
      streams.stdin.end();
      streams.close();
      for (const s of conns.values()) s.destroy();
      conns.clear();
    },
  };
}

/** A signal's name from its number (the ones an agent dies of). */
function signalName(n: number): string {
  const names: Record<number, string> = {
    1: 'SIGHUP',
    2: 'SIGINT',
    6: 'SIGABRT',
    9: 'SIGKILL',
    11: 'SIGSEGV',
    15: 'SIGTERM',
  };
  return names[n] ?? `SIG${n}`;
}
