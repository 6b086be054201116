import type { StepDetail } from '../../../shared/contract/models';
import { callText } from '../../../shared/step-summary';
import { terminalSafe } from '../../../shared/terminal-text';

const RED = '\x1b[31m';
const DIM = '\x1b[2m';
const CYAN = '\x1b[36m';
const RESET = '\x1b[0m';

/** Recorded (untrusted) text for a terminal: control sequences stripped; xterm needs CR LF line ends. */
function crlf(text: string): string {
  return terminalSafe(text).replace(/\n/g, '\r\n');
}

/** What the terminal showed during a recorded step: each command, its output and exit code. */
export function recordedOutput(detail: StepDetail): string {
  const out: string[] = [`${DIM}── step ${detail.step} (recorded) ──${RESET}\r\n`];
  for (const { call, result, override } of detail.calls) {
    const args = call.arguments;
    // A shell command as typed after a prompt; another tool as a person reads its call (not a
    // shell line, so no `$`): `» write_file notes.txt (12 B)`, not its JSON.
    const line = typeof args.command === 'string' ? `$ ${args.command}` : `» ${callText(call.name, args)}`;
    out.push(`${CYAN}${crlf(line)}${RESET}\r\n`);
    const r = override?.real ?? result;
    if (!r) {
      out.push(`${DIM}(no result yet)${RESET}\r\n`);
      continue;
    }
    if (r.stdout) out.push(crlf(r.stdout.endsWith('\n') ? r.stdout : `${r.stdout}\n`));
    if (r.stderr) out.push(`${RED}${crlf(r.stderr.endsWith('\n') ? r.stderr : `${r.stderr}\n`)}${RESET}`);
    if (r.error) out.push(`${RED}[${crlf(r.error.code)}] ${crlf(r.error.message)}${RESET}\r\n`);
    else if (r.exit_code !== undefined && r.exit_code !== 0)
      out.push(`${DIM}[exit ${r.exit_code}]${RESET}\r\n`);
  }
  for (const h of detail.human) out.push(`${CYAN}(human) $ ${crlf(h.command)}${RESET}\r\n`);
  if (detail.final !== null) out.push(`${DIM}final answer:${RESET} ${crlf(detail.final)}\r\n`);
  if (detail.calls.length === 0 && detail.final === null && detail.human.length === 0)
    out.push(`${DIM}(no commands in this step)${RESET}\r\n`);
  return out.join('');
}
