import { z } from 'zod';
import { Flag } from '../qa/flag.js';
import { ToolResult } from '../tool-result.js';
import { ChangedPath } from '../trace-events.js';
import { FileChange } from './models.js';

/** A candidate's decision at step K+1: tool calls, a final answer, or output that did not parse. */
export const CandidateAction = z.object({
  calls: z.array(z.object({ name: z.string(), arguments: z.record(z.string(), z.unknown()) })),
  final: z.string().nullable(),
  parse_error: z.string().optional(),
});
/** A candidate's decision. */
export type CandidateAction = z.infer<typeof CandidateAction>;

/** A QA flag as shown beside a candidate or a compared branch. */
export const FlagBrief = Flag.pick({ rule: true, step: true, severity: true, message: true });
/** A QA flag, briefly. */
export type FlagBrief = z.infer<typeof FlagBrief>;

/** One candidate tried in its own fork: what it did, what it got, what it changed. */
export const CandidateView = z.object({
  index: z.number().int().nonnegative(),
  /** Where it came from: the branch's agent, a person, or a file. */
  origin: z.enum(['model', 'person', 'file']),
  seed: z.number().int().nullable(),
  branch: z.string(),
  action: CandidateAction,
  /** What each call returned, as the agent saw it. */
  result: z.array(ToolResult),
  tree_hash: z.string().nullable(),
  /** `captured: false`: a file over the per-file snapshot cap (listed, its content not kept). */
  files_changed: z.array(ChangedPath),
  /** The changed files' text before (snapshot K) and after (the candidate's last step). */
  files: z.array(FileChange),
  reward: z.number().nullable(),
  flags: z.array(FlagBrief),
  steps_run: z.number().int().nonnegative(),
  /** `paused` while it can continue, else how it ended. */
  status: z.string(),
});
/** One candidate tried in its own fork. */
export type CandidateView = z.infer<typeof CandidateView>;

/** A typed candidate: an assistant message as the scripted-agent contract writes it. */
export const TypedCandidate = z.strictObject({
  content: z.string().nullable().optional(),
  tool_calls: z
    .array(
      z.object({
        id: z.string().optional(),
        type: z.literal('function').optional(),
        function: z.object({
          name: z.string().min(1),
          arguments: z.union([z.string(), z.record(z.string(), z.unknown())]),
        }),
      }),
    )
    .max(16)
    .optional(),
});
/** A typed candidate. */
export type TypedCandidate = z.infer<typeof TypedCandidate>;

/** Candidates tried at step K of a branch, held until one is picked or they are discarded. */
export const CandidateSetView = z.object({
  group: z.string(),
  episode: z.string(),
  /** The branch they were forked from, and the step K they follow. */
  parent: z.string(),
  step: z.number().int().nonnegative(),
  candidates: z.array(CandidateView),
  /** Why fewer model candidates were tried than asked for, etc. */
  notes: z.array(z.string()),
});
/** Candidates tried at a step. */
export type CandidateSetView = z.infer<typeof CandidateSetView>;
