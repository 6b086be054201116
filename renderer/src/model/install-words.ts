/**
 * What an install is doing, in words, from the last line npm printed (the Agents panel's
 * progress): the raw line ("npm http fetch GET 200 https://registry.npmjs.org/@demo/slow-agent/-/
 * slow-agent-1.0.0.tgz 31ms") stood under the bar as if it were the panel's sentence. Null when
 * the line says nothing a person needs beyond the phase above it; the raw line stays under Details.
 */
export function installLineWords(line: string): string | null {
  const t = line.trim();
  const fetch = /^npm http fetch (GET|POST|PUT) (\d{3}) (\S+)/.exec(t);
  if (fetch) {
    const [, , status, url] = fetch;
    const what = packageOf(url);
    if (what === null) return null;
    if (!/^[23]/.test(status)) return `the npm registry answered ${status} for ${what}`;
    return /\.tgz(\?|$)/.test(url)
      ? `downloaded ${what} from the npm registry`
      : `looked up ${what} in the npm registry`;
  }
  const said = /^npm (warn|error|ERR!)\s+(.*)$/i.exec(t);
  if (said) return `npm ${said[1].toLowerCase() === 'warn' ? 'warns' : 'says'}: ${said[2]}`;
  if (/^npm (install|i|ci)\b/.test(t)) return 'npm started installing';
  // stepbox's own steps ("installed codex@0.171.0", "measuring codex@0.171.0") are words already.
  if (!t.startsWith('npm ')) return t || null;
  return null;
}

/** A registry URL's package, as npm names it (`@openai/codex`); null when it is no URL. */
function packageOf(url: string): string | null {
  if (!URL.canParse(url)) return null;
  const path = decodeURIComponent(new URL(url).pathname).replace(/^\/+/, '');
  return path.split('/-/')[0] || null;
}
