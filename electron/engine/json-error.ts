/**
 * Where JSON.parse stopped, in words that never quote the text: ` at line L, column C`
 * ('' when the parser does not say). Node's message quotes the start of the input, so a
 * file read by mistake (or on purpose: `scripted:/etc/passwd`) would show its content.
 */
export function jsonErrorAt(e: unknown, text: string): string {
  const m = /at position (\d+)/.exec(e instanceof Error ? e.message : '');
  if (m) {
    const pos = Number(m[1]);
    const before = text.slice(0, pos);
    return ` at line ${before.split('\n').length}, column ${pos - before.lastIndexOf('\n')}`;
  }
  return /Unexpected end of JSON input/.test(e instanceof Error ? e.message : '')
    ? ' (it ends too early)'
    : '';
}
