import { randomBytes } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import { DEFAULT_WORKDIR, SANDBOX_ENV, SANDBOX_UID } from '../../../shared/constants.js';
import { shellQuote } from '../tools/shell-quote.js';
import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import type { OtherWriters } from '../../../shared/trace-events.js';
import { logger } from '../log.js';
import { OtherWritersWatch, type WritersProbe } from './other-writers.js';
import { startAttached } from './client.js';
import { AGENT_USER } from './container-spec.js';
import { ROOT_PATH } from '../sandbox/root-exec.js';
import { RUNTIME_BASH, RUNTIME_SETPRIV, SEAL_GID, runtimeProgram } from '../sandbox/sandbox-runtime.js';

const log = logger('terminal');

/** Output is flushed to listeners at most this often… */
export const TERMINAL_BATCH_MS = 16;
/** …or as soon as this much is pending, whichever comes first. */
export const TERMINAL_BATCH_BYTES = 64 * 1024;

/** The OSC number of the history hook: `ESC ] 6973 ; key ; pid ; exit ; cwd64 ; hist64 ; files64 BEL`. */
const HOOK_OSC = '\u001b]6973;';
const BEL = '\u0007';

/**
 * Shown after a command is read and before it runs: marks that moment in the shell's own
 * variable `__sb_t` (EPOCHREALTIME; whole seconds from the prompt's clock on a bash older
 * than 5), so the hook can name the workspace files the command wrote (newer than it). An
 * expansion with no output: the key of an associative array (`__sb_A`, declared by the
 * first prompt) whose expansion assigns. Never a file: one in /tmp was the agent's to write,
 * so its code could have named its own files as the person's.
 */
export const COMMAND_START = '${__sb_A[${__sb_t:=${EPOCHREALTIME-\\D{%s}}}]}';

/** Bytes a person sends to run a line: Enter (CR), Ctrl+J (LF, and piped input), Ctrl+O (run and fetch the next). */
const RUN_KEYS = new Set(['\r', '\n', '\u000f']);

/** A new key for one terminal's history hook (hex: nothing in it a shell or the sequence treats specially). */
export function newHookKey(): string {
  return randomBytes(16).toString('hex');
}

/**
 * Runs before every prompt: reports the terminal's `key`, the shell's pid, the last exit
 * code, the cwd, the last history entry (with its number, so the host can tell a new command
 * from an empty Enter) and the working directory's files written since the command started,
 * as an OSC sequence the host strips from the stream.
 */
export function historyHook(workdir: string, key: string): string {
  return (
    // The mark less 20 ms (file times come from a coarse clock); with whole seconds only, the
    // second's start less 20 ms (files written up to a second before the command count too).
    '__sb_ec=$?; __sb_f=; if [[ -n ${__sb_t-} ]]; then ' +
    'if [[ $__sb_t == *[.,]* ]]; then __sb_m=$(( 10#${__sb_t/[.,]/} - 20000 )); __sb_m="@${__sb_m:0:-6}.${__sb_m: -6}"; ' +
    'else __sb_m="@$(( __sb_t - 1 )).98"; fi; ' +
    // By change time, which no process can set: a file the agent dated into the future
    // (touch -d 2099) read as written by every command the person ran (-newermt).
    `__sb_f="$(find ${shellQuote(workdir)} -newerct "$__sb_m" \\( -type f -o -type l \\) 2>/dev/null | head -n 200 | base64 -w0)"; ` +
    'unset __sb_t; fi; ' +
    `printf "\\033]6973;${key};%s;%s;%s;%s;%s\\007" "$$" "$__sb_ec" ` +
    '"$(printf %s "$PWD" | base64 -w0)" "$(HISTTIMEFORMAT= history 1 | base64 -w0)" "$__sb_f"; ' +
    '(exit $__sb_ec)'
  );
}

/** A command a person typed into the terminal, reported by the history hook. */
export interface HumanCommand {
  readonly command: string;
  /** The shell's cwd after the command ran. */
  readonly cwd: string;
  readonly exit_code: number;
  /** Workspace files (relative to the working directory) the command created or changed; absent when unknown. */
  readonly files?: readonly string[];
  /** What else could have written `files` (absent: nothing but the command, or the terminal was not given a probe). */
  readonly others?: OtherWriters;
  /**
   * When its shell's report reached the engine (`performance.now()`), before the report asked
   * the sandbox who else ran: what decides which side of a snapshot's read it falls on. Not
   * recorded in the trace.
   */
  readonly reportedAt?: number;
}

/** What {@link HistoryHookFilter.push} found in a chunk of terminal output. */
export interface FilteredOutput {
  /** The output with every hook sequence removed. */
  readonly text: string;
  readonly commands: HumanCommand[];
  /** The shell's pid inside the container, once a hook sequence reported it. */
  readonly pid?: number;
  /** Hook-shaped sequences refused in this chunk: without the terminal's key, or more commands than lines run. */
  readonly refused?: number;
}

/**
 * Strips history-hook sequences from terminal output and decodes them into commands. A
 * sequence split across chunks is held back until it completes.
 *
 * The output is not the hook's alone: a program the person runs prints what it likes (a
 * file the agent wrote, `cat` of it), and the agent's own processes can write to the
 * terminal only through a program the person runs (the pty is root's: TERMINAL_LAUNCHER).
 * So a sequence counts only with the terminal's key, and a command only when the person has
 * run a line since the last one: a forged report needs the key (held by the sealed shell
 * alone, never in a program's environment), and even with it cannot add more commands than
 * the person ran lines.
 */
export class HistoryHookFilter {
  private pending = '';
  /** Lines the person has run (Enter) and no command has been reported for. */
  private runs = 0;

  /**
   * @param workdir the sandbox's working directory: reported files are relative to it.
   * @param key the terminal's key, in its hook ({@link historyHook}).
   */
  constructor(
    private readonly workdir: string,
    private readonly key: string,
  ) {}

  private lastHistoryNumber: number | undefined;
  /** Whether the shell's first prompt was reported. */
  private prompted = false;

  /** Counts the lines a person runs in what they send to the shell; answers how many it holds. */
  typed(input: string): number {
    let runs = 0;
    for (const c of input) if (RUN_KEYS.has(c)) runs++;
    this.runs += runs;
    return runs;
  }

  /** Whether lines the person ran are still to be reported. */
  pendingRuns(): boolean {
    return this.runs > 0;
  }

  /** Feeds one chunk of decoded output. */
  push(chunk: string): FilteredOutput {
    let input = this.pending + chunk;
    this.pending = '';
    let text = '';
    const commands: HumanCommand[] = [];
    let pid: number | undefined;
    let refused = 0;
    for (;;) {
      const start = input.indexOf(HOOK_OSC);
      if (start < 0) {
        // Hold back a tail that could be the beginning of a hook sequence.
        const keep = partialPrefix(input, HOOK_OSC);
        text += input.slice(0, input.length - keep);
        this.pending = input.slice(input.length - keep);
        break;
      }
      const end = input.indexOf(BEL, start);
      if (end < 0) {
        text += input.slice(0, start);
        this.pending = input.slice(start);
        break;
      }
      text += input.slice(0, start);
      const parsed = this.decode(input.slice(start + HOOK_OSC.length, end));
      if (parsed.refused) refused++;
      if (parsed.pid !== undefined) pid = parsed.pid;
      if (parsed.command) commands.push(parsed.command);
      input = input.slice(end + 1);
    }
    return { text, commands, ...(pid !== undefined ? { pid } : {}), ...(refused ? { refused } : {}) };
  }

  /** A sequence's pid and command, or that it is refused (not the hook's, or no line was run for its command). */
  private decode(body: string): { pid?: number; command?: HumanCommand; refused?: true } {
    const [key, pidText, exitText, cwd64, hist64, files64] = body.split(';');
    if (key !== this.key) return { refused: true };
    const pid = Number(pidText);
    const history = Buffer.from(hist64 ?? '', 'base64').toString('utf8');
    const m = /^\s*(\d+)\*?\s+([\s\S]*?)\n?$/.exec(history);
    const result: { pid?: number; command?: HumanCommand; refused?: true } = Number.isInteger(pid)
      ? { pid }
      : {};
    const number = m ? Number(m[1]) : undefined;
    // The first prompt follows no Enter: a line the person typed before it (as soon as the
    // terminal opened, while the shell was still starting) is still to be reported.
    const first = !this.prompted;
    this.prompted = true;
    if (first && !m) return result;
    // No history, or the same number again: the person pressed Enter on an empty line (or Ctrl+C).
    if (!m || number === this.lastHistoryNumber) {
      this.runs = Math.max(0, this.runs - 1);
      return result;
    }
    if (this.runs === 0) return { ...result, refused: true };
    this.runs--;
    this.lastHistoryNumber = number;
    const files = Buffer.from(files64 ?? '', 'base64')
      .toString('utf8')
      .split('\n')
      .filter((f) => f.startsWith(this.workdir + '/'))
      .map((f) => f.slice(this.workdir.length + 1));
    result.command = {
      command: m[2],
      cwd: Buffer.from(cwd64 ?? '', 'base64').toString('utf8'),
      exit_code: Number(exitText),
      ...(files64 !== undefined ? { files } : {}),
    };
    return result;
  }
}

/** The length of the longest suffix of `text` that is a proper prefix of `marker`. */
function partialPrefix(text: string, marker: string): number {
  for (let n = Math.min(marker.length - 1, text.length); n > 0; n--) {
    if (text.endsWith(marker.slice(0, n))) return n;
  }
  return 0;
}

/** Options of {@link openTerminal}. */
export interface TerminalOptions {
  readonly cols: number;
  readonly rows: number;
  /** Working directory; defaults to the container's (the sandbox's working directory). */
  readonly cwd?: string;
  /** The sandbox's working directory (`sandbox.workdir`): the files commands wrote are named relative to it. */
  readonly workdir?: string;
  /** Extra environment for the shell. */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Readline in the shell (default true). Off for piped input: readline switches the pty out
   * of canonical mode, where a Ctrl+D sent before it reads is lost and the shell never ends.
   */
  readonly lineEditing?: boolean;
  /** The engine's Docker client (the provider's connection: never a second one of its own). */
  readonly docker: Docker;
  /**
   * Asks the sandbox who else could write files (its helper's `writers`): given, each line the
   * person runs waits for the answer before it is sent, and each command reports `others`.
   */
  readonly writers?: WritersProbe;
}

/** A live TTY shell inside a container. Listener registrations return an unsubscribe. */
export interface Terminal {
  /** Sends keystrokes / pasted text to the shell. */
  write(data: string | Uint8Array): void;
  resize(cols: number, rows: number): Promise<void>;
  /** Output, batched (~16 ms or 64 KiB), with history-hook sequences removed. */
  onData(cb: (data: string) => void): () => void;
  /** Each command a person typed, with its cwd and exit code. */
  onCommand(cb: (command: HumanCommand) => void): () => void;
  /**
   * The commands the shell has reported and onCommand has not yet had (they wait for the
   * sandbox's answer to who else ran, at most WRITERS_WAIT_MS each): a promise settling once
   * it has, or null when none is waiting.
   */
  reporting(): Promise<void> | null;
  /** The shell ended; `exitCode` is null when it could not be read. */
  onExit(cb: (exitCode: number | null) => void): () => void;
  /** Ends the shell (SIGHUP, as when a terminal window closes) and the stream. */
  close(): Promise<void>;
}

/**
 * The person's prompt: `agent@sandbox:/workspace$ `. The name is $USER (the container's
 * SANDBOX_ENV), not bash's \\u: that asks getpwuid, and an image without a passwd entry for
 * the agent's uid (busybox) made it `I have no name!@sandbox:/app$`.
 */
const PROMPT = `\${USER:-${SANDBOX_ENV.USER}}@\\h:\\w\\$ `;

/**
 * Variables the C library drops from a secure exec's environment (the sealed shell's: see
 * below); the launcher puts the container's values back, as the helper does for a call
 * (helper_identity.py SECURE_EXEC_DROPS).
 */
export const SECURE_EXEC_DROPS =
  'GCONV_PATH GETCONF_DIR HOSTALIASES LOCALDOMAIN LOCPATH NIS_PATH NLSPATH RESOLV_HOST_CONF RES_OPTIONS TMPDIR TZDIR GLIBC_TUNABLES';

/**
 * Starts the person's shell from root's exec (argv: bash's). The shell is bash from the
 * system directories, never from the image's PATH: that may list a directory the agent can
 * write, and a planted `bash` would show the person its output; the runtime's static bash
 * where the image has none (it may have no /bin/sh either).
 *
 * It drops to the agent's uid and gid, with no supplementary groups and, where root's exec
 * may (CAP_SETPCAP), an empty bounding set, through the runtime's setpriv, SEALED as the
 * helper's shells are (prelude.py): real and effective gid apart at exec, so the kernel
 * makes the shell non-dumpable (bash then drops back to the agent's gid). No process of the
 * agent's can then read the shell's environment or memory (the history hook's key), ptrace
 * it, or open its fds; what the person runs from it is dumpable as usual. Where the runtime
 * voids the seal (gVisor, fs.suid_dumpable = 1) the pty is still root's.
 */
export const TERMINAL_LAUNCHER = [
  `b=$(PATH=${ROOT_PATH} command -v bash) || b=${RUNTIME_BASH}`,
  // Set here, not in the exec's environment: a non-interactive bash (this one) unsets PS1.
  `export PS1=${shellQuote(PROMPT)}`,
  // The values a secure exec drops go back in at the first prompt (PROMPT_COMMAND, exported
  // by the exec, un-exports itself there).
  `pre=; for v in ${SECURE_EXEC_DROPS} \${!LD_*} \${!MALLOC_*}; do [[ -v $v ]] && pre+="export $v=\${!v@Q}; "; done`,
  'PROMPT_COMMAND="$pre$PROMPT_COMMAND"',
  'cap=0; while read -r k v; do [[ $k == CapEff: ]] && cap=$v; done < /proc/self/status',
  'bnd=(); (( 16#$cap & 0x100 )) && bnd=(--bounding-set=-all)',
  `exec ${runtimeProgram(RUNTIME_SETPRIV).join(' ')} "\${bnd[@]}" --reuid=${SANDBOX_UID} --rgid=${SANDBOX_UID} --egid=${SEAL_GID} --clear-groups -- "$b" "$@"`,
].join('\n');

/**
 * Opens an interactive bash on a TTY exec into `containerId`. A PROMPT_COMMAND hook reports
 * every command typed (see {@link historyHook}); the shell's history file is disabled
 * because the root filesystem is read-only.
 */
export async function openTerminal(containerId: string, options: TerminalOptions): Promise<Terminal> {
  const container = options.docker.getContainer(containerId);
  const workdir = options.workdir ?? DEFAULT_WORKDIR;
  const key = newHookKey();
  const env = {
    TERM: 'xterm-256color',
    // The key is the shell's alone: the first prompt un-exports PROMPT_COMMAND before any
    // command runs, so no program the person starts inherits it (see TERMINAL_LAUNCHER).
    PROMPT_COMMAND: `export -n PROMPT_COMMAND PS0; declare -A __sb_A; PROMPT_COMMAND=${shellQuote(historyHook(workdir, key))}; eval "$PROMPT_COMMAND"`,
    PS0: COMMAND_START,
    HISTFILE: '',
    HISTCONTROL: '',
    ...options.env,
  };
  const exec = await container.exec({
    Cmd: [
      RUNTIME_BASH,
      '-c',
      TERMINAL_LAUNCHER,
      'bash',
      '--norc',
      '--noprofile',
      ...(options.lineEditing === false ? ['--noediting'] : []),
      '-i',
    ],
    // Root's exec, so the pty is root's (crw--w---- root:tty): no process of the agent's can
    // open it to type into the person's shell (TIOCSTI) or print into its output. The
    // launcher then drops to the agent's user (TERMINAL_LAUNCHER).
    User: '0:0',
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    Tty: true,
    Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
    ...(options.cwd ? { WorkingDir: options.cwd } : {}),
  });
  const stream = (await startAttached(exec, { Tty: true })) as unknown as Duplex;
  await exec.resize({ h: options.rows, w: options.cols }).catch((e: Error) => {
    // The exec may not have started its process yet; the next resize will apply.
    log.debug(`initial resize of ${containerId.slice(0, 12)}: ${e.message}`);
  });

  const dataListeners = new Set<(data: string) => void>();
  const commandListeners = new Set<(command: HumanCommand) => void>();
  const exitListeners = new Set<(code: number | null) => void>();
  const decoder = new StringDecoder('utf8');
  const filter = new HistoryHookFilter(workdir, key);
  const watch = options.writers ? new OtherWritersWatch(options.writers) : null;
  // Input waits behind a line's question to the sandbox (in order); reports behind their answers.
  let inputs: Promise<void> = Promise.resolve();
  let reports: Promise<void> = Promise.resolve();
  /** Commands reported by the shell whose report waits in `reports`. */
  let waiting = 0;
  let refused = 0;
  let shellPid: number | undefined;
  let batch = '';
  let timer: NodeJS.Timeout | undefined;
  let exited = false;

  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (!batch) return;
    const out = batch;
    batch = '';
    for (const cb of dataListeners) cb(out);
  };
  const onText = (text: string) => {
    const found = filter.push(text);
    if (found.pid !== undefined) shellPid = found.pid;
    if (found.refused) {
      // Once per terminal: a flood of them would flood the log too.
      if (refused === 0)
        log.warn(
          `terminal in ${containerId.slice(0, 12)}: refused a history-hook report the shell did not make (printed by a program in the sandbox?); refused reports are not recorded`,
        );
      refused += found.refused;
    }
    if (found.text) {
      batch += found.text;
      if (batch.length >= TERMINAL_BATCH_BYTES) flush();
      else timer ??= setTimeout(flush, TERMINAL_BATCH_MS);
    }
    if (found.commands.length) {
      // Output printed before the prompt belongs before the command report.
      flush();
      const reportedAt = performance.now();
      const commands = found.commands.map((c) => ({ ...c, reportedAt }));
      if (!watch) for (const c of commands) for (const cb of commandListeners) cb(c);
      else {
        const pending = filter.pendingRuns();
        const shell = shellPid;
        waiting += commands.length;
        reports = reports
          .then(async () => {
            try {
              const others = await watch.atReport(shell, pending);
              for (const c of commands) for (const cb of commandListeners) cb(others ? { ...c, others } : c);
            } finally {
              waiting -= commands.length;
            }
          })
          .catch((e: unknown) =>
            log.warn(`terminal command report: ${e instanceof Error ? e.message : String(e)}`),
          );
      }
    } else if (watch && found.pid !== undefined && !filter.pendingRuns()) {
      // A prompt after an empty line (or the first): no line runs, the window closes.
      reports = reports.then(() => watch.close());
    }
  };
  stream.on('data', (chunk: Buffer) => onText(decoder.write(chunk)));
  const finish = () => {
    if (exited) return;
    exited = true;
    onText(decoder.end());
    flush();
    // After the reports still waiting for the sandbox's answer: a listener may let go at the exit.
    void reports
      .then(() => exec.inspect())
      .then((info) => info.ExitCode ?? null)
      .catch((e: Error) => {
        log.warn(`exit code of the terminal in ${containerId.slice(0, 12)}: ${e.message}`);
        return null;
      })
      .then((code) => {
        for (const cb of exitListeners) cb(code);
      });
  };
  stream.on('end', finish);
  stream.on('close', finish);
  stream.on('error', (e) => {
    log.warn(`terminal stream of ${containerId.slice(0, 12)}: ${e.message}`);
    finish();
  });

  const subscribe =
    <T>(set: Set<T>) =>
    (cb: T) => {
      set.add(cb);
      return () => set.delete(cb);
    };
  return {
    write: (data) => {
      if (exited) return;
      const runs = filter.typed(typeof data === 'string' ? data : Buffer.from(data).toString('latin1'));
      const bytes = typeof data === 'string' ? data : Buffer.from(data);
      if (!watch) {
        stream.write(bytes);
        return;
      }
      // A line runs only once the sandbox said who else is alive (OtherWritersWatch).
      inputs = inputs
        .then(async () => {
          if (runs > 0) await watch.beforeRun(shellPid);
          if (!exited) stream.write(bytes);
        })
        .catch((e: unknown) => log.warn(`terminal input: ${e instanceof Error ? e.message : String(e)}`));
    },
    resize: async (cols, rows) => {
      await exec.resize({ h: rows, w: cols });
    },
    onData: subscribe(dataListeners),
    onCommand: subscribe(commandListeners),
    reporting: () => (waiting > 0 ? reports : null),
    onExit: subscribe(exitListeners),
    close: async () => {
      await inputs;
      if (exited) return;
      if (shellPid !== undefined) {
        // A hijacked exec outlives its connection: hang up the shell as a closed window would.
        try {
          const hup = await container.exec({
            Cmd: ['kill', '-HUP', String(shellPid)],
            User: AGENT_USER,
            AttachStdout: false,
          });
          await hup.start({ Detach: true });
        } catch (e) {
          // 404/409: the container is gone or stopped (an episode ended), so the shell is too.
          const status = (e as { statusCode?: number }).statusCode;
          if (status !== 404 && status !== 409) log.warn(`hangup: ${(e as Error).message}`);
        }
      }
      stream.end();
      stream.destroy();
      finish();
    },
  };
}
