import { readdirSync, readFileSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sha256HexOfParts } from '../sha256.js';
import { logger } from '../log.js';

const log = logger('qa');

let known: string | null = null;

/**
 * What the QA rules are, as a short id: a hash of the rules' own code (the shared/qa folder)
 * and of the shared modules it imports (their words: end-words, tool results…). The index
 * keeps flags, words included, under the id they were computed with, so a stepbox whose rules
 * or words changed computes them again instead of showing the old words until the trace
 * changes. Read from this build's own files, so no list to keep up to date by hand.
 */
export function flagRulesId(): string {
  // From source (electron/engine/qa) and from dist/ (dist/electron/engine/qa) alike.
  known ??= rulesIdOf(fileURLToPath(new URL('../../../shared/qa/', import.meta.url)));
  return known;
}

/** The id of the rules in the folder `qa` (a shared/qa, beside the shared modules it imports). */
export function rulesIdOf(qa: string): string {
  try {
    const files = readdirSync(qa)
      .filter((f) => /\.(js|ts)$/.test(f) && !f.endsWith('.d.ts'))
      .sort()
      .map((f) => join(qa, f));
    const texts = files.map((f) => readFileSync(f, 'utf8'));
    // One level of the shared modules the rules import ('../end-words.js' …), as built here.
    const ext = extname(files[0] ?? '.js');
    const imported = new Set<string>();
    for (const t of texts) for (const m of t.matchAll(/from '\.\.\/([\w./-]+?)\.js'/g)) imported.add(m[1]);
    const shared = dirname(qa.replace(/[\\/]$/, ''));
    const more = [...imported].sort().map((name) => readFileSync(join(shared, `${name}${ext}`), 'utf8'));
    return sha256HexOfParts([...texts, ...more]).slice(0, 16);
  } catch (e) {
    // A build laid out otherwise: flags are then kept per trace version only (as before).
    log.warn(`QA rules not read from ${qa}: ${e instanceof Error ? e.message : String(e)}`);
    return 'unread';
  }
}
