import type { StepDetail } from '../../../shared/contract/models';
import { execWrapperOf, execWrapperText } from '../../../shared/exec-wrapper';
import { callText } from '../../../shared/step-summary';
import { terminalSafe } from '../../../shared/terminal-text';

const RED = '\x1b[31m';
const DIM = '\x1b[2m';
const CYAN = '\x1b[36m';
const RESET = '\x1b[0m';

/**
 * `line` broken at its blanks so no part is wider than `cols` (a word wider than that is cut at
 * the edge, as the terminal would), the first part starting at column `start`. A tab counts to
 * the next multiple of 8, as the terminal moves it.
 */
export function wrapWords(line: string, cols: number, start = 0): string {
  if (cols <= 0) return line;
  const out: string[] = [];
  let col = start;
  for (const token of line.match(/\s+|\S+/g) ?? []) {
    let width = 0;
    for (const ch of token) width = ch === '\t' ? width + 8 - ((col + width) % 8) : width + 1;
    if (col + width <= cols) {
      out.push(token);
      col += width;
    } else if (/^\s/.test(token)) {
      // A blank at a break is not carried to the next line: the line is full, the next word breaks.
      col = cols;
    } else {
      if (col > 0) {
        // The blank before the break ends no line.
        if (/^\s/.test(out[out.length - 1] ?? '')) out.pop();
        out.push('\n');
        col = 0;
      }
      // A word wider than a line goes on at the edge, as the terminal wraps it.
      let rest = token;
      while (rest.length > cols) {
        out.push(rest.slice(0, cols), '\n');
        rest = rest.slice(cols);
      }
      out.push(rest);
      col = rest.length;
    }
  }
  return out.join('');
}

/**
 * Recorded (untrusted) text for a terminal `cols` wide: control sequences stripped, each line
 * wrapped at its words (`start`: the columns taken on its first line); xterm needs CR LF line ends.
 */
function crlf(text: string, cols = 0, start = 0): string {
  const lines = terminalSafe(text).split('\n');
  return lines
    .map((line, i) => wrapWords(line, cols, i === 0 ? start : 0))
    .join('\n')
    .replace(/\n/g, '\r\n');
}

/**
 * What the terminal showed during a recorded step: each command, its output and exit code,
 * wrapped at words for a terminal `cols` wide (0: not wrapped here). Written by the window, not
 * drawn by a program in a terminal: left to the terminal, "fetched" broke as "fetche" / "d".
 */
export function recordedOutput(detail: StepDetail, cols = 0): string {
  const out: string[] = [`${DIM}── step ${detail.step} (recorded) ──${RESET}\r\n`];
  for (const { call, result, override, replaced } of detail.calls) {
    const args = call.arguments;
    // A shell command as typed after a prompt; another tool as a person reads its call (not a
    // shell line, so no `$`): `» write_file notes.txt (12 B)`, not its JSON.
    const line = typeof args.command === 'string' ? `$ ${args.command}` : `» ${callText(call.name, args)}`;
    out.push(`${CYAN}${crlf(line, cols)}${RESET}\r\n`);
    const r = override?.real ?? result;
    if (!r) {
      out.push(`${DIM}(no result yet)${RESET}\r\n`);
      continue;
    }
    // An agent's own exec tool wrote a header above the output: the output alone, its facts after.
    const wrapper = replaced ? null : execWrapperOf(r);
    const stdout = wrapper ? wrapper.output : r.stdout;
    if (stdout) out.push(crlf(stdout.endsWith('\n') ? stdout : `${stdout}\n`, cols));
    if (r.stderr)
      out.push(`${RED}${crlf(r.stderr.endsWith('\n') ? r.stderr : `${r.stderr}\n`, cols)}${RESET}`);
    if (r.error)
      out.push(
        `${RED}[${crlf(r.error.code)}] ${crlf(r.error.message, cols, r.error.code.length + 3)}${RESET}\r\n`,
      );
    else if (r.exit_code !== undefined && r.exit_code !== 0)
      out.push(`${DIM}[exit ${r.exit_code}]${RESET}\r\n`);
    else if (wrapper) out.push(`${DIM}[${crlf(execWrapperText(wrapper))}]${RESET}\r\n`);
  }
  for (const h of detail.human) out.push(`${CYAN}(human) $ ${crlf(h.command, cols, 10)}${RESET}\r\n`);
  if (detail.final !== null) out.push(`${DIM}final answer:${RESET} ${crlf(detail.final, cols, 14)}\r\n`);
  if (detail.calls.length === 0 && detail.final === null && detail.human.length === 0)
    out.push(`${DIM}(no commands in this step)${RESET}\r\n`);
  return out.join('');
}
