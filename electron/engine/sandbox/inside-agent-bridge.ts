import type { Duplex } from 'node:stream';
import { DEFAULT_WORKDIR } from '../../../shared/constants.js';
import { SANDBOX_UID } from '../../../shared/constants.js';
import type { DockerEngine, ExecStreams } from '../docker/client.js';
import { logger } from '../log.js';
import { encodeFrame, FrameDecoder } from './frames.js';
import { parseBridgeFrame, type BridgeFrame, type BridgeHeader, type HostKind } from './sandbox-channels.js';
import { loadSandboxProgram } from './sandbox-resources.js';
import { RUNTIME_PYTHON, runtimeProgram } from './sandbox-runtime.js';
import { ROOT_LOADER_ENV } from './root-exec.js';
import {
  SandboxFailure,
  type InsideAgentExit,
  type InsideAgentRequest,
  type InsideAgentRun,
} from './sandbox.js';

const log = logger('inside-agent');

/** Largest frame the host accepts from the bridge (a connection's chunk is 64 KiB). */
const MAX_HEADER = 64 * 1024;
const MAX_PAYLOAD = 8 * 1024 * 1024;
/** How long the bridge may take to answer its start (python start, agent files checked). */
const START_TIMEOUT_MS = 30_000;
/** Grace for the agent to exit after TERM before the bridge is closed (which KILLs it). */
const STOP_GRACE_MS = 2_000;

/** One frame to the bridge (sandbox-channels.ts BRIDGE_FRAMES: kinds the host sends). */
function frame<K extends HostKind>(kind: K, header: BridgeHeader<K>, payload?: Buffer): Buffer {
  return encodeFrame({ kind, ...header }, payload);
}

/** What the bridge answers its start with: ready (its port) or the error that stopped it. */
type Hello = Extract<BridgeFrame, { kind: 'ready' | 'error' }>;

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
      env: [...ROOT_LOADER_ENV],
    },
  );
  const hash = request.agentFilesHash;
  const conns = new Map<number, Duplex>();
  const decoder = new FrameDecoder('the agent bridge', MAX_HEADER, MAX_PAYLOAD);
  let stderr = '';
  let exit: InsideAgentExit | null = null;
  let resolveExit!: (e: InsideAgentExit) => void;
  const exited = new Promise<InsideAgentExit>((r) => (resolveExit = r));
  let onHello: ((m: Hello) => void) | null = null;
  const hellos: Hello[] = [];
  const hello = (m: Hello) => {
    if (onHello) onHello(m);
    else hellos.push(m);
  };
  const nextHello = () =>
    new Promise<Hello>((resolve, reject) => {
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
      for (let off = 0; off < d.length; off += 65536)
        send(frame('data', { chan }, d.subarray(off, off + 65536)));
    });
    const close = () => {
      if (conns.delete(chan)) send(frame('close', { chan }));
    };
    sock.on('end', close);
    sock.on('close', close);
    sock.on('error', close);
  };
  const onFrame = (f: BridgeFrame, payload: Buffer) => {
    switch (f.kind) {
      case 'open':
        open(f.chan);
        break;
      case 'data':
        conns.get(f.chan)?.write(payload);
        break;
      case 'close': {
        const sock = conns.get(f.chan);
        conns.delete(f.chan);
        sock?.end();
        break;
      }
      case 'stdout':
      case 'stderr':
        request.onOutput(f.kind, payload);
        break;
      case 'exit':
        finish({ code: f.code, signal: f.signal === null ? null : signalName(f.signal) });
        break;
      case 'ready':
      case 'error':
        hello(f);
        break;
    }
  };
  // Frames from the sandbox are parsed before they are read (sandbox-channels.ts): one that
  // is not the protocol ends the bridge (which kills the agent), as a crash of it would.
  streams.stdout.on('data', (chunk: Buffer) => {
    const got = decoder.feed(chunk);
    const faults = 'fault' in got ? [got.fault.message] : [];
    for (const raw of 'frames' in got ? got.frames : []) {
      const f = parseBridgeFrame(raw);
      if (!f.ok) {
        faults.push(f.error.message);
        break;
      }
      onFrame(f.frame, f.payload);
    }
    if (faults.length) {
      log.warn(faults[0]);
      stderr = `${stderr}\n${faults[0]}`.slice(-4000);
      streams.close();
    }
  });
  streams.stderr.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString('utf8')).slice(-4000);
  });
  streams.stdout.on('end', () => {
    for (const s of conns.values()) s.destroy();
    conns.clear();
    hello({ kind: 'error', message: `the bridge ended${stderr ? `: ${stderr.trim().slice(-500)}` : ''}` });
    finish({ code: null, signal: 'SIGKILL' });
  });

  const fail = (message: string): never => {
    streams.close();
    throw new SandboxFailure('sandbox_failed', `cannot start the agent inside the sandbox: ${message}`);
  };
  send(
    frame('start', {
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
  );
  const ready = await nextHello();
  if (ready.kind === 'error') return fail(ready.message);
  const { port } = ready;
  return {
    port,
    exited,
    async stop() {
      if (!exit) {
        send(frame('stop', {}));
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
