import { shellWords } from '../../../shared/qa/shell-words.js';
import { isPersonEdit, type TraceEvent } from '../../../shared/trace-events.js';

/** Programs that only look: a terminal command made of these changes nothing. */
const LOOKING = new Set(
  (
    'ls cat head tail less more grep egrep fgrep rg wc pwd echo printf stat file tree which ' +
    'type printenv id whoami date du df diff cmp md5sum sha256sum sort uniq cut column nl ' +
    'od xxd hexdump history clear true ps top free uname cd find sed git'
  ).split(' '),
);
/** Arguments that make an otherwise looking program write. */
const WRITING_ARGS: Readonly<Record<string, (args: readonly string[]) => boolean>> = {
  find: (a) =>
    a.some((w) => w === '-delete' || w.startsWith('-exec') || w.startsWith('-ok') || w === '-fprint'),
  sed: (a) => a.some((w) => /^-[a-zA-Z]*i/.test(w) || w.startsWith('--in-place')),
  sort: (a) => a.some((w) => w === '-o' || w.startsWith('--output')),
  git: (a) => !['status', 'diff', 'log', 'show', 'blame', 'branch', 'rev-parse'].includes(a[0] ?? ''),
};
const SEPARATORS = new Set(['&&', '||', ';', '|', '&', '|&', '(', ')']);

/**
 * True when a terminal command only looks (ls, cat, grep, git status, …): it writes no
 * file (no `>` redirection but to /dev/null, no `sed -i`, `find -delete`) and runs
 * nothing it cannot judge (command substitution, unknown programs count as edits).
 */
export function isReadOnlyCommand(command: string): boolean {
  if (/\$\(|`/.test(command)) return false;
  const words = shellWords(command);
  if (!words) return false;
  let simple: string[] = [];
  const judge = (): boolean => {
    const [program, ...args] = simple;
    simple = [];
    if (program === undefined) return true;
    if (!LOOKING.has(program)) return false;
    return !WRITING_ARGS[program]?.(args);
  };
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    if (w === '>' || w === '>>' || w === '>&') {
      if (words[i + 1] !== '/dev/null') return false;
      i++;
    } else if (w === '<') i++;
    else if (SEPARATORS.has(w)) {
      if (!judge()) return false;
    } else simple.push(w);
  }
  return judge();
}

/**
 * True when a person changed what the agent would see or work on before the event with
 * seq `before`: an injection, an overridden result, an edited answer or arguments, a
 * result given instead of running the tool, or a terminal command that edits (a
 * read-only peek — ls, cat, git status — is no correction).
 */
export function personCorrected(events: readonly TraceEvent[], before: number): boolean {
  return events.some(
    (e) =>
      e.seq < before &&
      (e.type === 'injected' ||
        e.type === 'override' ||
        isPersonEdit(e) ||
        (e.type === 'human_command' && !isReadOnlyCommand(e.command))),
  );
}
