/** A piece of a word: literal text, or a variable expanded when the command runs. */
export type WordPart = { readonly lit: string } | { readonly variable: string };

/** A word: its parts, and whether any part was quoted or literal (an empty unquoted expansion vanishes). */
export interface Word {
  readonly parts: WordPart[];
  solid: boolean;
}

/** A redirection of one command's output: `>`, `>>`, `2>`, `2>>`, `2>&1`. */
export interface Redirect {
  readonly fd: 1 | 2;
  readonly append: boolean;
  /** A file word, or `&1` to join stderr to stdout. */
  readonly target: Word | '&1';
}

/** One simple command and the operator joining it to the previous one. */
export interface SimpleCommand {
  readonly join: ';' | '&&' | '||';
  readonly words: Word[];
  readonly redirects: Redirect[];
}

/** A command line the memory shell cannot run, with bash's exit code for it. */
export class ShellSyntaxError extends Error {}

const SPECIAL_VARS = /^[?$#0-9]$/;

/**
 * Parses the memory sandbox's shell subset: words with single quotes, double quotes
 * and backslashes; `$NAME`, `${NAME}`, `$?`; `;`, newlines, `&&`, `||`; `#` comments;
 * redirections `>`, `>>`, `2>`, `2>>`, `2>&1`. Pipes, background jobs, `$(...)` and
 * backticks are refused with a {@link ShellSyntaxError}, never run half-understood.
 */
export function parseCommandLine(line: string): SimpleCommand[] {
  const commands: SimpleCommand[] = [];
  let words: Word[] = [];
  let redirects: Redirect[] = [];
  let join: SimpleCommand['join'] = ';';
  let word: Word | null = null;
  let pending: { fd: 1 | 2; append: boolean } | null = null;
  let i = 0;

  const lit = (text: string) => {
    word ??= { parts: [], solid: false };
    word.parts.push({ lit: text });
    word.solid = true;
  };
  const endWord = () => {
    if (!word) return;
    if (pending) {
      redirects.push({ ...pending, target: word });
      pending = null;
    } else words.push(word);
    word = null;
  };
  const endCommand = (next: SimpleCommand['join']) => {
    endWord();
    if (pending) throw new ShellSyntaxError('syntax error: redirection without a file');
    if (words.length || redirects.length) commands.push({ join, words, redirects });
    else if (next !== ';') throw new ShellSyntaxError(`syntax error near unexpected token \`${next}'`);
    words = [];
    redirects = [];
    join = next;
  };
  const readVariable = (): void => {
    const next = line[i + 1];
    if (next === '(') throw new ShellSyntaxError('$(...) is not supported by the memory sandbox shell');
    if (next === '{') {
      const close = line.indexOf('}', i + 2);
      if (close < 0) throw new ShellSyntaxError('bad substitution: missing }');
      word ??= { parts: [], solid: false };
      word.parts.push({ variable: line.slice(i + 2, close) });
      i = close + 1;
      return;
    }
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(line.slice(i + 1));
    const name = m ? m[0] : next !== undefined && SPECIAL_VARS.test(next) ? next : null;
    word ??= { parts: [], solid: false };
    if (name === null) {
      lit('$');
      i += 1;
      return;
    }
    word.parts.push({ variable: name });
    i += 1 + name.length;
  };

  while (i < line.length) {
    const c = line[i];
    if (c === ' ' || c === '\t') {
      endWord();
      i++;
    } else if (c === '\n' || c === ';') {
      endCommand(';');
      i++;
    } else if (c === '&' && line[i + 1] === '&') {
      endCommand('&&');
      i += 2;
    } else if (c === '|' && line[i + 1] === '|') {
      endCommand('||');
      i += 2;
    } else if (c === '|' || c === '&' || c === '`' || c === '<' || c === '(' || c === ')') {
      throw new ShellSyntaxError(`'${c}' is not supported by the memory sandbox shell`);
    } else if (c === '#' && !word) {
      while (i < line.length && line[i] !== '\n') i++;
    } else if (c === '>' || (c === '2' && !word && line[i + 1] === '>')) {
      const fd = c === '2' ? 2 : 1;
      endWord();
      i += fd === 2 ? 2 : 1;
      const append = line[i] === '>';
      if (append) i++;
      if (fd === 2 && line[i] === '&' && line[i + 1] === '1') {
        redirects.push({ fd: 2, append: false, target: '&1' });
        i += 2;
      } else pending = { fd, append };
    } else if (c === "'") {
      const close = line.indexOf("'", i + 1);
      if (close < 0) throw new ShellSyntaxError("unexpected EOF while looking for matching `''");
      lit(line.slice(i + 1, close));
      i = close + 1;
    } else if (c === '"') {
      lit('');
      i++;
      while (i < line.length && line[i] !== '"') {
        const d = line[i];
        if (d === '\\' && i + 1 < line.length && '$`"\\\n'.includes(line[i + 1])) {
          if (line[i + 1] !== '\n') lit(line[i + 1]);
          i += 2;
        } else if (d === '$') readVariable();
        else if (d === '`')
          throw new ShellSyntaxError('backticks are not supported by the memory sandbox shell');
        else {
          lit(d);
          i++;
        }
      }
      if (i >= line.length) throw new ShellSyntaxError('unexpected EOF while looking for matching `"\'');
      i++;
    } else if (c === '\\') {
      if (line[i + 1] !== '\n' && i + 1 < line.length) lit(line[i + 1]);
      i += 2;
    } else if (c === '$') {
      readVariable();
    } else {
      lit(c);
      i++;
    }
  }
  endCommand(';');
  return commands;
}
