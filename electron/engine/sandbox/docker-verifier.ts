import { DEFAULT_WORKDIR, SANDBOX_UID } from '../../../shared/constants.js';
import type { DockerEngine, ExecStreams } from '../docker/client.js';
import { encodeFrame, FrameDecoder } from './frames.js';
import type { HelperClient } from './helper-client.js';
import { rootPython } from './root-exec.js';
import { parseVerifierReport, type VerifierRequest as RunnerRequest } from './sandbox-channels.js';
import { loadSandboxProgram } from './sandbox-resources.js';
import { SandboxFailure, type VerifierRequest, type VerifierRun } from './sandbox.js';

/** Time past the verifier's own timeout before the host stops waiting for its exec. */
const EXEC_GRACE_MS = 15_000;

/** Reads a stream up to `cap` bytes, dropping the rest (a hostile stream cannot fill the host). */
function collect(stream: NodeJS.ReadableStream, cap: number): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (c: Buffer) => {
      if (size >= cap) return;
      chunks.push(c.subarray(0, cap - size));
      size += Math.min(c.length, cap - size);
    });
    const done = () => resolve(Buffer.concat(chunks));
    stream.on('end', done);
    stream.on('close', done);
    stream.on('error', done);
  });
}

function text(kept: Buffer, total: number): string {
  const s = kept.toString('utf8');
  return total > kept.length ? `${s}\n[... ${total - kept.length} more bytes not kept]` : s;
}

/**
 * A verifier runner's exec started ahead of its verification: the runner (root, isolated)
 * waits for its arguments on stdin, which only the host can write, and neither kills nor
 * runs anything before. The exec (an engine round trip and a `runc exec`) and python's
 * start then happen while the episode runs, not at its end.
 */
export interface VerifierRunner {
  readonly streams: ExecStreams;
  readonly out: Promise<Buffer>;
  readonly err: Promise<Buffer>;
  /** Whether its stdout ended (the runner is gone: it cannot take a verification). */
  ended(): boolean;
}

/** Starts a verifier runner that waits for its arguments (see {@link VerifierRunner}). */
export async function startVerifierRunner(
  engine: DockerEngine,
  containerId: string,
  outputCap: number,
): Promise<VerifierRunner> {
  const source = loadSandboxProgram('verifier.py').toString('utf8');
  // Root, so the agent's processes cannot kill or ptrace the runner, and isolated, so nothing
  // the agent wrote is read by it; the verifier itself runs as the agent's uid.
  const { cmd, options } = rootPython(source);
  const streams = await engine.exec(containerId, cmd, options);
  let done = false;
  streams.stdout.on('end', () => (done = true));
  streams.stdout.on('close', () => (done = true));
  // The report is one frame: a header, then at most `outputCap` bytes of each stream.
  return {
    streams,
    out: collect(streams.stdout, 2 * outputCap + 256 * 1024),
    err: collect(streams.stderr, 64 * 1024),
    ended: () => done,
  };
}

/**
 * Runs a verifier in its own `docker exec` (resources/sandbox/verifier.py): an isolated root
 * runner kills every process of the agent's user first, then runs the command as that user
 * (no capability, a fresh HOME, no PATH entry the agent can write) in a new bash in
 * the working directory with pipes only the runner holds. The host reads only that exec's output, and takes the exit
 * code from the engine's record of the exec — never from the helper or the session. `ahead`
 * is a runner started earlier for this sandbox ({@link startVerifierRunner}), used when it
 * is still there; otherwise one is started now.
 */
export async function runVerifierExec(
  engine: DockerEngine,
  containerId: string,
  request: VerifierRequest,
  outputCap: number,
  ahead?: VerifierRunner,
  /** The verifier's cwd: the sandbox's working directory. */
  workdir: string = DEFAULT_WORKDIR,
): Promise<VerifierRun> {
  const started = performance.now();
  const timeoutMs = Math.max(1, Math.round(request.timeoutMs));
  let runner = ahead;
  if (!runner || runner.ended()) {
    runner?.streams.close();
    runner = await startVerifierRunner(engine, containerId, outputCap);
  }
  const { streams, out, err } = runner;
  const ask: RunnerRequest = {
    command: request.command,
    timeout_ms: timeoutMs,
    cap: outputCap,
    uid: SANDBOX_UID,
    workdir,
    ...verifierExtra(request),
  };
  streams.stdin.end(encodeFrame(ask));
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((resolve) => {
    timer = setTimeout(() => resolve('hung'), timeoutMs + EXEC_GRACE_MS);
  });
  const finished = await Promise.race([Promise.all([out, err]), hung]);
  clearTimeout(timer);
  if (finished === 'hung') {
    streams.close();
    throw new SandboxFailure(
      'sandbox_failed',
      `the verifier's exec in ${containerId.slice(0, 12)} did not end within ${timeoutMs + EXEC_GRACE_MS} ms`,
    );
  }
  const [stdout, stderr] = finished;
  const exitCode = await streams.exitCode().catch(() => null);
  // The report comes from inside the sandbox: parsed against its schema (sandbox-channels.ts)
  // before it is read, never cast.
  const decoded = new FrameDecoder('the verifier runner', 1024 * 1024, 2 * outputCap).feed(stdout);
  const raw = 'frames' in decoded ? decoded.frames[0] : undefined;
  if (!raw) {
    if (!(await engine.isRunning(containerId)))
      throw new SandboxFailure(
        'sandbox_lost',
        `sandbox container ${containerId.slice(0, 12)} is gone or stopped`,
      );
    const why = 'fault' in decoded ? decoded.fault.message : 'no report';
    throw new SandboxFailure(
      'sandbox_failed',
      `the verifier runner in ${containerId.slice(0, 12)} did not report (exit ${String(exitCode)}; ${why}): ${stderr.toString('utf8').trim().slice(-500) || 'no output'}`,
    );
  }
  const parsed = parseVerifierReport(raw, outputCap);
  if (!parsed.ok) throw new SandboxFailure('sandbox_failed', parsed.error.message);
  const { report } = parsed;
  if (report.staging_error !== undefined)
    return {
      exitCode: null,
      stdout: '',
      stderr: '',
      timedOut: false,
      durationMs: performance.now() - started,
      channel: 'exec',
      uid: report.uid,
      killed: report.killed,
      stagingError: report.staging_error,
    };
  const timeoutNote = report.timeout
    ? `\nthe verifier did not finish within ${timeoutMs} ms; every process it started was killed`
    : '';
  return {
    // The runner exits with the verifier's code: the engine's record of the exec is the one
    // that counts (the report only carries the output).
    exitCode: report.timeout ? null : exitCode,
    stdout: text(parsed.stdout, report.stdout_total),
    stderr: text(parsed.stderr, report.stderr_total) + timeoutNote,
    timedOut: report.timeout,
    durationMs: performance.now() - started,
    channel: 'exec',
    uid: report.uid,
    killed: report.killed,
    ...(request.rewardDir ? { rewardFiles: report.reward_files ?? [] } : {}),
  };
}

/** What only the verifier sees and writes, as the runner's request names it (none for a plain verifier). */
function verifierExtra(request: VerifierRequest): Pick<RunnerRequest, 'files' | 'files_dir' | 'reward_dir'> {
  if (!request.files && !request.rewardDir) return {};
  const files: Record<string, string> = {};
  for (const [path, bytes] of Object.entries(request.files ?? {}))
    files[path] = Buffer.from(bytes).toString('base64');
  return {
    ...(request.files ? { files, files_dir: request.filesDir } : {}),
    ...(request.rewardDir ? { reward_dir: request.rewardDir } : {}),
  };
}

/**
 * Runs a plain verifier (no files, no reward folder) through an isolated helper's own channel
 * (its `verify` op, resources/sandbox/helper_verify.py): the same run as the runner's
 * (verifier_run.py: every process of the agent's killed, a new bash as the agent in the
 * working directory, output capped, leftovers killed), without an exec of its own. The
 * helper is root and its channel out of every process of the agent's reach, so its record
 * of the exit code is the runner's; it does not answer when it is not isolated. A helper
 * that ends or errs meanwhile rejects (the verification could not run).
 */
export async function runVerifierInHelper(
  helper: HelperClient,
  request: VerifierRequest,
  outputCap: number,
  /** The verifier's cwd: the sandbox's working directory. */
  workdir: string,
): Promise<VerifierRun> {
  const started = performance.now();
  const timeoutMs = Math.max(1, Math.round(request.timeoutMs));
  const { header: r, payload } = await helper.request(
    'verify',
    { command: request.command, timeout_ms: timeoutMs, cap: outputCap, uid: SANDBOX_UID, workdir },
    undefined,
    2 * outputCap,
    timeoutMs + EXEC_GRACE_MS,
  );
  const timeoutNote = r.timeout
    ? `\nthe verifier did not finish within ${timeoutMs} ms; every process it started was killed`
    : '';
  return {
    exitCode: r.timeout ? null : r.exit_code,
    stdout: text(payload.subarray(0, r.stdout_len), r.stdout_total),
    stderr: text(payload.subarray(r.stdout_len), r.stderr_total) + timeoutNote,
    timedOut: r.timeout,
    durationMs: performance.now() - started,
    channel: 'helper',
    uid: r.uid,
    killed: r.killed,
  };
}
