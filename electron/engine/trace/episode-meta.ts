import { z } from 'zod';
import type { ProcessIdentity } from '../process-identity.js';
import type { HeaderFields } from './trace-store.js';

const WriterIdentity = z.object({
  pid: z.number(),
  host: z.string(),
  boot_id: z.string().nullable(),
  start_time: z.string().nullable(),
});

/** `meta.json` of an episode. Branch liveness is read from each trace header's `writer`, not from here. */
export const EpisodeMeta = z.looseObject({
  format: z.literal('stepbox.episode/1'),
  episode: z.string(),
  task: z.string(),
  created: z.number(),
  agent: z.string(),
  image: z.string(),
  /** The process that created the episode. */
  writer: WriterIdentity,
  /** Every branch: parent and fork step (the main branch has null for both). */
  branches: z.record(
    z.string(),
    z.object({ parent: z.string().nullable(), fork_step: z.number().nullable(), created: z.number() }),
  ),
  /** Set when the episode came from a bundle (its recorded commands are someone else's). */
  imported: z.object({ at: z.number(), from: z.string() }).optional(),
});
/** `meta.json` of an episode. */
export type EpisodeMeta = z.infer<typeof EpisodeMeta>;

/**
 * The meta.json of a new episode from its main branch's header fields: what
 * `createEpisode` writes, and what the sweep rebuilds when a kill lost it (the header
 * holds all of it).
 */
export function episodeMetaFor(episode: string, header: HeaderFields, writer: ProcessIdentity): EpisodeMeta {
  return {
    format: 'stepbox.episode/1',
    episode,
    task: typeof header.task.name === 'string' ? header.task.name : '(unnamed)',
    created: header.created,
    agent: header.agent.spec,
    image: header.image,
    writer,
    branches: { [episode]: { parent: null, fork_step: null, created: header.created } },
  };
}
