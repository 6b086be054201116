/** Shell control operators, split into their own words (longest first). */
const OPERATORS = ['&&', '||', ';;', '>>', '<<', '>&', '<&', '|&', ';', '|', '&', '>', '<', '(', ')'];
/**
 * The characters an operator begins with: at any other, none is looked for (looking for each
 * at every character was a fifth of the QA rules' time over a 10,000-step trace's commands).
 */
const OPERATOR_START = new Set(OPERATORS.map((o) => o[0]));

/** What splitting a command line produced: its words, or null when quoting is unbalanced. */
export type ShellWords = string[] | null;

/**
 * Splits a command line into words the way a POSIX shell's tokenizer does, without
 * expanding anything: quotes removed (single quotes literal, double quotes honouring
 * `\"`, `\\`, `\$` and `` \` ``), backslash escapes outside quotes, control operators
 * as separate words, `#` comments dropped. Returns null for unbalanced quoting.
 */
export function shellWords(line: string): ShellWords {
  const words: string[] = [];
  let cur = '';
  let inWord = false;
  let i = 0;
  const push = () => {
    if (inWord) words.push(cur);
    cur = '';
    inWord = false;
  };
  while (i < line.length) {
    const c = line[i];
    if (c === ' ' || c === '\t' || c === '\n') {
      push();
      i++;
      continue;
    }
    if (c === '#' && !inWord) {
      while (i < line.length && line[i] !== '\n') i++;
      continue;
    }
    const op = OPERATOR_START.has(c) ? OPERATORS.find((o) => line.startsWith(o, i)) : undefined;
    if (op) {
      // `2>file` redirects fd 2 while `2 >file` passes "2" as an argument: keep them apart.
      const fd = inWord && /^[0-9]+$/.test(cur) && (op[0] === '>' || op[0] === '<') ? cur : '';
      if (fd) {
        cur = '';
        inWord = false;
      } else push();
      words.push(fd + op);
      i += op.length;
      continue;
    }
    if (c === '\\') {
      if (i + 1 >= line.length) return null;
      // A backslash-newline is a line continuation: it disappears.
      if (line[i + 1] !== '\n') {
        cur += line[i + 1];
        inWord = true;
      }
      i += 2;
      continue;
    }
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) return null;
      cur += line.slice(i + 1, end);
      inWord = true;
      i = end + 1;
      continue;
    }
    if (c === '"') {
      i++;
      inWord = true;
      let closed = false;
      while (i < line.length) {
        const d = line[i];
        if (d === '"') {
          closed = true;
          i++;
          break;
        }
        if (d === '\\' && i + 1 < line.length && '"\\$`\n'.includes(line[i + 1])) {
          if (line[i + 1] !== '\n') cur += line[i + 1];
          i += 2;
          continue;
        }
        cur += d;
        i++;
      }
      if (!closed) return null;
      continue;
    }
    cur += c;
    inWord = true;
    i++;
  }
  push();
  return words;
}
