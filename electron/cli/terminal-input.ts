import type { Terminal } from '../engine/sandbox/sandbox-terminal.js';

/**
 * Feeds the CLI's stdin to a sandbox terminal and returns what undoes it. A TTY is put in
 * raw mode (keystrokes go through as typed). Piped input ends the shell when it ends, as
 * `bash < file` would: the shell was opened without line editing (see `lineEditing` of
 * openTerminal), so it reads in the pty's canonical mode, where a Ctrl+D on an empty line
 * is end of input; an unterminated last line is completed first so it runs. A program that
 * was reading (`cat`) takes that end of input for itself, so after the input ended every new
 * prompt gets another one, until the shell exits.
 */
export function feedTerminal(stdin: NodeJS.ReadStream, term: Terminal): () => void {
  const raw = stdin.isTTY === true;
  let last = -1;
  const onInput = (chunk: Buffer) => {
    if (chunk.length) last = chunk[chunk.length - 1];
    term.write(chunk);
  };
  let ended = false;
  const onEnd = () => {
    ended = true;
    term.write(last === -1 || last === 0x0a ? '\u0004' : '\n\u0004');
  };
  const offPrompt = term.onCommand(() => {
    if (ended && !raw) term.write('\u0004');
  });
  if (raw) stdin.setRawMode(true);
  stdin.on('data', onInput);
  stdin.on('end', onEnd);
  stdin.resume();
  return () => {
    offPrompt();
    stdin.off('data', onInput);
    stdin.off('end', onEnd);
    if (raw) stdin.setRawMode(false);
    stdin.pause();
  };
}

/** Whether the shell for this stdin gets readline: only a person at a TTY needs it. */
export function wantsLineEditing(stdin: NodeJS.ReadStream): boolean {
  return stdin.isTTY === true;
}
