/**
 * A custom tool's `command` template, split into literal shell text and `{name}`
 * placeholders. stepbox substitutes each value as ONE shell-quoted word, which is safe
 * only where the shell reads a plain word: in a command's arguments, outside every kind
 * of quoting. Inside `"…"`, `'…'`, `$'…'` or backticks the quotes stepbox adds are
 * literal text and a value could close them; a comment or here-document body ends at a
 * newline the value may hold; arithmetic (`$((…))`, `((…))`, `[[ … -eq … ]]`, `${…}`)
 * and builtins that re-read their arguments (`eval`, `let`, `declare`, …) evaluate the
 * value's text. So a placeholder is accepted only in a plain word position (next to
 * other text is fine: `--q={q}`); anywhere else the task is refused at load.
 * A command substitution `$(…)` starts a fresh context, even inside double quotes, as it
 * does in the shell: `"$(echo {q} | cut -c1)"` is accepted.
 */

/** One piece of a parsed template: shell text kept as written, or a placeholder. */
export type TemplatePart = { readonly text: string } | { readonly placeholder: string };

/** Where a placeholder was found, when it is not a plain word position. */
type Context =
  | 'double quotes ("…")'
  | "single quotes ('…')"
  | "ANSI-C quotes ($'…')"
  | 'backticks (`…`)'
  | 'a comment (# …)'
  | 'a here-document body'
  | 'arithmetic ($((…)), ((…)) or [[ … ]])'
  | 'a parameter expansion (${…})'
  | 'the arguments of a builtin that evaluates them (eval, let, declare, …)'
  | 'the command name position (the value would choose the program)';

type Frame = 'top' | 'subst' | 'dq' | 'sq' | 'ansi' | 'backtick' | 'arith' | 'param' | 'test';

/** Builtins that parse or evaluate their arguments' text again. */
const EVALUATING = new Set(['eval', 'let', 'declare', 'typeset', 'local', 'readonly', 'source', '.', 'trap']);

/** Words after which the next word is again a command name. */
const KEYWORDS = new Set([
  'if',
  'then',
  'else',
  'elif',
  'do',
  'while',
  'until',
  '!',
  'time',
  '{',
  'command',
  'builtin',
  'exec',
  'nohup',
  'env',
]);

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

const PLACEHOLDER = /^\{([A-Za-z_][A-Za-z0-9_]*)\}/;

/**
 * Parses a template: its parts, or a message naming the first placeholder in a place
 * where a value could run a command, and the fix. Only names in `declared` are
 * placeholders; other braces (`awk '{print $1}'`) are shell text.
 */
export function parseCommandTemplate(
  template: string,
  declared: readonly string[],
): { ok: true; parts: TemplatePart[] } | { ok: false; message: string } {
  const parts: TemplatePart[] = [];
  const stack: Frame[] = ['top'];
  let text = '';
  let wordStart = true; // at the start of a shell word (a comment may begin)
  let commandWord: string | null = ''; // the current simple command's first word, while read
  let evaluating = false; // the current simple command is an EVALUATING builtin
  let comment = false;
  let heredocs: string[] = []; // delimiters announced on the current line
  let i = 0;
  const top = () => stack[stack.length - 1];
  const refuse = (name: string, where: Context) => ({
    ok: false as const,
    message: `{${name}} is inside ${where}, where a value could run a command; stepbox quotes each value itself, so put {${name}} as a bare word outside quotes (e.g. grep -- {${name}} file; next to text is fine: --${name}={${name}})`,
  });
  const newCommand = () => {
    commandWord = '';
    evaluating = false;
  };
  // A command substitution is a command of its own: the outer command's state comes back after it.
  const outer: { commandWord: string | null; evaluating: boolean }[] = [];
  const enterSubst = () => {
    stack.push('subst');
    outer.push({ commandWord, evaluating });
    newCommand();
    wordStart = true;
  };
  const leaveSubst = () => {
    stack.pop();
    const o = outer.pop();
    commandWord = o?.commandWord ?? null;
    evaluating = o?.evaluating ?? false;
    if (commandWord === '') commandWord = 'x'; // the substitution's output is the command name
  };

  while (i < template.length) {
    const rest = template.slice(i);
    const c = template[i];
    const m = PLACEHOLDER.exec(rest);
    if (m && declared.includes(m[1]) && template[i - 1] !== '$') {
      const name = m[1];
      const frame = top();
      if (comment) return refuse(name, 'a comment (# …)');
      if (frame === 'dq') return refuse(name, 'double quotes ("…")');
      if (frame === 'sq') return refuse(name, "single quotes ('…')");
      if (frame === 'ansi') return refuse(name, "ANSI-C quotes ($'…')");
      if (frame === 'backtick') return refuse(name, 'backticks (`…`)');
      if (frame === 'arith' || frame === 'test') return refuse(name, 'arithmetic ($((…)), ((…)) or [[ … ]])');
      if (frame === 'param') return refuse(name, 'a parameter expansion (${…})');
      if (evaluating)
        return refuse(name, 'the arguments of a builtin that evaluates them (eval, let, declare, …)');
      if (commandWord !== null && !ASSIGNMENT.test(commandWord))
        return refuse(name, 'the command name position (the value would choose the program)');
      if (text) parts.push({ text });
      text = '';
      parts.push({ placeholder: name });
      if (commandWord !== null) commandWord += 'v'; // an assignment's value: still before the command name
      wordStart = false;
      i += m[0].length;
      continue;
    }
    text += c;
    i += 1;
    if (comment) {
      if (c === '\n') {
        comment = false;
        const body = skipHeredocs(template, i, heredocs, declared);
        heredocs = [];
        if (body.placeholder) return refuse(body.placeholder, 'a here-document body');
        text += template.slice(i, body.end);
        i = body.end;
        newCommand();
        wordStart = true;
      }
      continue;
    }
    const frame = top();
    switch (frame) {
      case 'sq':
        if (c === "'") stack.pop();
        continue;
      case 'ansi':
        if (c === '\\' && i < template.length) {
          text += template[i];
          i += 1;
        } else if (c === "'") stack.pop();
        continue;
      case 'dq':
      case 'backtick':
        if (c === '\\' && i < template.length) {
          text += template[i];
          i += 1;
        } else if ((frame === 'dq' && c === '"') || (frame === 'backtick' && c === '`')) stack.pop();
        else if (c === '$' && template[i] === '(' && template[i + 1] !== '(') {
          text += '(';
          i += 1;
          enterSubst();
        } else if (c === '$' && template[i] === '(') {
          text += '((';
          i += 2;
          stack.push('arith');
        } else if (c === '$' && template[i] === '{') {
          text += '{';
          i += 1;
          stack.push('param');
        } else if (frame === 'dq' && c === '`') stack.push('backtick');
        continue;
      case 'arith':
        if (c === '(') stack.push('arith');
        else if (c === ')') {
          stack.pop();
          if (template[i] === ')' && top() !== 'arith') {
            text += ')';
            i += 1;
          }
        }
        continue;
      case 'param':
        if (c === '}') stack.pop();
        else if (c === '{') stack.push('param');
        continue;
      case 'test':
        if (c === ']' && template[i] === ']') {
          text += ']';
          i += 1;
          stack.pop();
        }
        continue;
      case 'top':
      case 'subst':
        break;
    }
    // Unquoted shell text (the top level or inside $(…)).
    if (c === '\\' && i < template.length) {
      text += template[i];
      i += 1;
      wordStart = false;
      continue;
    }
    if (c === '#' && wordStart) {
      comment = true;
      continue;
    }
    if (c === "'") stack.push('sq');
    else if (c === '"') stack.push('dq');
    else if (c === '`') stack.push('backtick');
    else if (c === '$' && template[i] === "'") {
      text += "'";
      i += 1;
      stack.push('ansi');
    } else if (c === '$' && template[i] === '(' && template[i + 1] === '(') {
      text += '((';
      i += 2;
      stack.push('arith');
    } else if (c === '$' && template[i] === '(') {
      text += '(';
      i += 1;
      enterSubst();
      continue;
    } else if (c === '$' && template[i] === '{') {
      text += '{';
      i += 1;
      stack.push('param');
    } else if (c === '(' && template[i] === '(' && commandWord === '') {
      text += '(';
      i += 1;
      stack.push('arith');
    } else if (c === '[' && template[i] === '[' && commandWord === '') {
      text += '[';
      i += 1;
      stack.push('test');
    } else if (c === ')' && frame === 'subst') {
      leaveSubst();
      wordStart = false;
      continue;
    } else if (c === '<' && template[i] === '<' && template[i + 1] !== '<') {
      const d = heredocDelimiter(template, i + 1);
      if (d) heredocs.push(d.word);
    } else if (c === '\n' || c === ';' || c === '&' || c === '|' || c === '(' || c === ')') {
      if (c === '\n' && heredocs.length) {
        const body = skipHeredocs(template, i, heredocs, declared);
        heredocs = [];
        if (body.placeholder) return refuse(body.placeholder, 'a here-document body');
        text += template.slice(i, body.end);
        i = body.end;
      }
      newCommand();
      wordStart = true;
      continue;
    }
    if (c === ' ' || c === '\t') {
      if (commandWord) {
        if (KEYWORDS.has(commandWord) || ASSIGNMENT.test(commandWord)) commandWord = '';
        else {
          evaluating = EVALUATING.has(commandWord);
          commandWord = null;
        }
      }
      wordStart = true;
      continue;
    }
    if (commandWord !== null) commandWord += c;
    wordStart = false;
  }
  if (stack.length > 1)
    return { ok: false, message: 'the command has an unterminated quote, $(…) or ${…}; close it' };
  if (text) parts.push({ text });
  return { ok: true, parts };
}

/** The delimiter word after `<<` (or `<<-`), unquoted. */
function heredocDelimiter(template: string, from: number): { word: string } | null {
  const m = /^-?[ \t]*(['"]?)([A-Za-z0-9_.-]+)\1/.exec(template.slice(from + 1));
  return m ? { word: m[2] } : null;
}

/** Skips here-document bodies starting at `from` (just past the newline); finds a placeholder in them. */
function skipHeredocs(
  template: string,
  from: number,
  delimiters: readonly string[],
  declared: readonly string[],
): { end: number; placeholder: string | null } {
  let pos = from;
  let placeholder: string | null = null;
  for (const d of delimiters) {
    for (;;) {
      if (pos >= template.length) return { end: template.length, placeholder };
      const nl = template.indexOf('\n', pos);
      const lineEnd = nl === -1 ? template.length : nl;
      const line = template.slice(pos, lineEnd);
      pos = nl === -1 ? template.length : nl + 1;
      if (line.replace(/^\t+/, '') === d) break;
      for (const m of line.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g))
        if (placeholder === null && declared.includes(m[1])) placeholder = m[1];
    }
  }
  return { end: pos, placeholder };
}
