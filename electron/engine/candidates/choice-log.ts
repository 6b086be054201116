import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import type { EpisodeStore } from '../trace/trace-store.js';
import { logger } from '../log.js';

const log = logger('candidates');

/** One choice among candidates: which branch a person continued, which they rejected. */
export const Choice = z.object({
  group: z.string(),
  episode: z.string(),
  /** The branch the candidates were forked from, and the step K they were forked at. */
  parent: z.string(),
  step: z.number().int().nonnegative(),
  chosen: z.string(),
  rejected: z.array(z.string()),
  t: z.number(),
});
/** One choice among candidates. */
export type Choice = z.infer<typeof Choice>;

/**
 * The episode's choice log, `choices.jsonl` beside `meta.json`: append-only, one line per
 * pick. A candidate's trace may already be closed when it is picked or rejected (its
 * step was a final answer), so the choice is kept apart from the traces.
 */
function logPath(store: EpisodeStore, episode: string): string {
  return join(dirname(dirname(store.resolve(episode).tracePath)), 'choices.jsonl');
}

/** Records a choice. */
export function recordChoice(store: EpisodeStore, choice: Choice): void {
  appendFileSync(logPath(store, choice.episode), JSON.stringify(choice) + '\n');
}

/** Every choice recorded for an episode (a malformed line is skipped with a warning). */
export function readChoices(store: EpisodeStore, episode: string): Choice[] {
  const path = logPath(store, episode);
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .flatMap((line, i) => {
      try {
        return [Choice.parse(JSON.parse(line))];
      } catch (e) {
        log.warn(`${path} line ${i + 1} is not a choice: ${e instanceof Error ? e.message : String(e)}`);
        return [];
      }
    });
}
