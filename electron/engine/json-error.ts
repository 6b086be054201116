/**
 * THE words of a world's file that does not parse (a task.json, a devcontainer.json, a
 * task.toml): the file, what it is not, where the parser stopped, why in the parser's words,
 * and the fix — `FILE is not valid JSON at line L, column C (why): fix`. One shape, so each
 * of the three says its line and its fix alike.
 */
export function notParsedMessage(file: string, what: string, where: SyntaxWhere, fix: string): string {
  const at = where.line !== null ? ` at line ${where.line}, column ${where.column}` : '';
  return `${file} is not ${what}${at}${where.reason ? ` (${where.reason})` : ''}: ${fix}`;
}

/** Where a parser stopped in a file and why, in its own words (never the file's text). */
export interface SyntaxWhere {
  readonly line: number | null;
  readonly column: number | null;
  readonly reason: string | null;
}

/**
 * Where JSON.parse stopped and why, in words that never quote the text. Node's message
 * quotes the start of the input when it has no position (`Unexpected token 'x', "…" is not
 * valid JSON`), so a file read by mistake (or on purpose: `scripted:/etc/passwd`) would show
 * its content: only the parser's own words before ` in JSON` are kept.
 */
export function jsonSyntaxWhere(e: unknown, text: string): SyntaxWhere {
  const message = e instanceof Error ? e.message : '';
  const positioned = /^(.*?) (in|after) JSON at position (\d+)/.exec(message);
  if (positioned) {
    const why = positioned[2] === 'after' ? `${positioned[1]} after the JSON` : positioned[1];
    return {
      ...lineColumn(text, Number(positioned[3])),
      reason: why.slice(0, 1).toLowerCase() + why.slice(1),
    };
  }
  if (/Unexpected end of JSON input/.test(message))
    return { line: null, column: null, reason: 'it ends too early' };
  // `Unexpected token 'x', "…the file…" is not valid JSON`: no position, so it is searched for.
  const pos = firstBadPosition(text);
  return {
    ...(pos === null ? { line: null, column: null } : lineColumn(text, pos)),
    reason: 'unexpected character',
  };
}

/** 1-based line and column of `pos` in `text`. */
function lineColumn(text: string, pos: number): { line: number; column: number } {
  const before = text.slice(0, pos);
  return { line: before.split('\n').length, column: pos - before.lastIndexOf('\n') };
}

/**
 * Where JSON.parse meets a character it cannot take, when its message does not say: the
 * shortest prefix that fails before its own end (a prefix cut inside a value fails only at
 * its end), found by halving — about 20 parses of a 1 MiB file. Null when none is found.
 */
function firstBadPosition(text: string): number | null {
  const failsInside = (length: number): boolean => {
    try {
      JSON.parse(text.slice(0, length));
      return false;
    } catch (e) {
      const message = e instanceof Error ? e.message : '';
      if (/Unexpected end of JSON input/.test(message)) return false;
      const at = /at position (\d+)/.exec(message);
      return !at || Number(at[1]) < length;
    }
  };
  if (!failsInside(text.length)) return null;
  let lo = 1;
  let hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (failsInside(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo - 1;
}

/**
 * Where JSON.parse stopped, in words that never quote the text: ` at line L, column C`
 * ('' when the parser does not say). For a line of a trace or a script.
 */
export function jsonErrorAt(e: unknown, text: string): string {
  const where = jsonSyntaxWhere(e, text);
  if (where.line !== null) return ` at line ${where.line}, column ${where.column}`;
  return where.reason === 'it ends too early' ? ' (it ends too early)' : '';
}
