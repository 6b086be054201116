/**
 * Quotes a string as one shell word: wrapped in single quotes, each `'` written as
 * `'\''`. Inside single quotes nothing is interpreted — no `$()`, backticks, globs or
 * escapes — and newlines stay literal, so any argument reaches the command unchanged.
 */
export function shellQuote(word: string): string {
  if (word !== '' && /^[A-Za-z0-9_./:=@%+,-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Quotes each word and joins them with spaces (argv semantics, as `docker exec`). */
export function shellJoin(words: readonly string[]): string {
  return words.map(shellQuote).join(' ');
}
