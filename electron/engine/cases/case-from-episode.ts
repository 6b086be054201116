import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { checkEpisode } from '../../../shared/qa/check-episode.js';
import { atLeast, type Flag, type QaRuleId } from '../../../shared/qa/flag.js';
import type { TraceEvent } from '../../../shared/trace-events.js';
import { driverOf, savedKinds } from '../agents/agent-driver.js';
import { recordedOutputs } from '../agents/replay-agent.js';
import type { DiskEpisodeStore } from '../trace/episode-store.js';
import { readLineage } from '../trace/lineage.js';
import { caseDir, CaseError, caseRoot, libraryDir } from './case-library.js';
import { countOf } from '../../../shared/count-of.js';
import { endText } from '../../../shared/end-words.js';
import { ruleLabel } from '../../../shared/qa/rule-label.js';

/** What `stepbox case new` wrote. */
export interface NewCase {
  readonly name: string;
  readonly dir: string;
  readonly episode: string;
  readonly branch: string;
  readonly agent: string;
  readonly rules: QaRuleId[];
  readonly flags: readonly Flag[];
  readonly steps: number;
  /** Files of an exec: agent's task folder copied beside the task (its program). */
  readonly copied: string[];
  /** Why a re-run may differ from the recording (injections, overrides, a person's commands or edits). */
  readonly caveats: string[];
}

/** Files of an exec agent's task folder a case copies (its program), not the recordings beside it. */
const MAX_COPY_BYTES = 5 * 1024 * 1024;

/** The assistant message of each step as the agent got it: the model's, or a person's edit of it. */
function answers(events: readonly TraceEvent[]): { content: string | null; tool_calls?: unknown }[] {
  const edited = new Map<number, { content: string | null; tool_calls?: unknown }>();
  for (const e of events)
    if (e.type === 'edit' && e.stage === 'before_answer' && e.edited && typeof e.edited === 'object')
      edited.set(e.step, e.edited as { content: string | null; tool_calls?: unknown });
  return recordedOutputs(events).map((o) => {
    const m = edited.get(o.step) ?? o.message;
    return m.tool_calls === undefined
      ? { content: m.content }
      : { content: m.content, tool_calls: m.tool_calls };
  });
}

/** What in the recording a re-run of its answers cannot repeat. */
function caveatsOf(events: readonly TraceEvent[]): string[] {
  const steps = (type: TraceEvent['type']) => [
    ...new Set(events.filter((e) => e.type === type).map((e) => e.step)),
  ];
  const out: string[] = [];
  const name: Partial<Record<TraceEvent['type'], string>> = {
    injected: 'injected messages',
    override: 'overridden results',
    human_command: "a person's terminal commands",
    rollback: 'rollbacks',
  };
  for (const [type, label] of Object.entries(name)) {
    const at = steps(type as TraceEvent['type']);
    if (at.length) out.push(`${label} at step ${at.join(', ')} are not replayed`);
  }
  return out;
}

/** What the walkthrough says of the episode, read from its recording (no placeholder to fill in). */
interface EpisodeFacts {
  readonly goal: string;
  readonly steps: number;
  readonly end: {
    readonly status: string;
    readonly end_reason: string;
    readonly verifierPassed: boolean | null;
  } | null;
}

/**
 * A saved case's README: what the recording shows, where QA flagged it, and how to check a fix.
 * Written whole from the episode: a saved case once carried "TODO: one paragraph" for a person
 * to replace, and the case drawer showed it as the walkthrough.
 */
export function walkthrough(
  name: string,
  source: string,
  flags: readonly Flag[],
  caveats: readonly string[],
  facts: EpisodeFacts,
): string {
  const shown = flags.filter((f) => atLeast(f.severity, 'warning'));
  const where = shown.map(
    (f) =>
      `- **Timeline, step ${f.step}**: ${ruleLabel(f.rule)} (\`${f.rule}\`, ${f.severity}) — ${f.message}`,
  );
  const ended = facts.end
    ? `The episode ${facts.end.status === 'error' ? 'ended in an error' : facts.end.status}: ${endText(facts.end.status, facts.end.end_reason, facts.end.verifierPassed)}.`
    : 'The recording has no end.';
  const labels = [...new Set(shown.map((f) => ruleLabel(f.rule)))];
  return [
    `# ${name}`,
    '',
    `**Run it:** \`stepbox case run ${name}\`. Saved from episode \`${source}\` by \`stepbox case new\`.`,
    '',
    '## What you will see',
    `The agent is asked: “${facts.goal.trim().replace(/([^.!?])$/, '$1.')}” It takes ${countOf(facts.steps, 'step')}. ${ended} QA flags it: ${labels.join(', ')}.`,
    '',
    '## Where to look',
    ...where,
    "- At each flagged step, the inspector's Output, Files, Model request and Memory tabs show what the agent saw and changed.",
    ...(caveats.length ? ['', `Note: ${caveats.join('; ')}.`] : []),
    '',
    '## The fix',
    `Put a fixed \`agent.jsonl\` and/or \`task.json\` in \`fixed/\`; \`stepbox case verify ${name}\` checks that it raises none of these flags.`,
    '',
  ].join('\n');
}

/**
 * Saves a recorded branch as a case in the store's library (`$STEPBOX_HOME/cases/NAME`):
 * its task (the header's), the answers the agent got at each step as `agent.jsonl` (the
 * whole lineage for a fork), for an `exec:` agent also `agent.json` (its command, with the
 * answers as the model source) and the program files of its task folder, `expected.json`
 * with the rules QA raised at warning or worse, and a walkthrough skeleton pointing at the
 * flagged steps. Refuses an episode no rule flags (a case teaches a failure QA catches).
 */
export function caseFromEpisode(
  store: DiskEpisodeStore,
  id: string,
  name: string,
  options: { force?: boolean; library?: string } = {},
): NewCase {
  // The name rule (shared/case-name.ts) is caseDir's: refused before anything is read.
  const library = options.library ?? libraryDir();
  const dir = caseDir(library, name);
  const found = caseRoot(name);
  if (found?.origin === 'bundled')
    throw new CaseError('invalid_case', `"${name}" is a bundled case; choose another --name`);
  // What went wrong only: the way out is the caller's (the CLI's --force, the window's Replace).
  if (existsSync(dir) && !options.force)
    throw new CaseError('conflict', `case "${name}" already exists in ${library}`);

  const lineage = readLineage(store, store.resolve(id));
  const header = lineage.header;
  const events = [header, ...lineage.events];
  const kind = header.agent.kind;
  // How its kind is saved: its answers as a script, and an exec: agent's program beside them.
  const asCase = driverOf(kind).asCase;
  if (asCase === null)
    throw new CaseError(
      'invalid_case',
      `episode ${id} ran a ${kind} agent; case new saves ${savedKinds()} episodes`,
    );
  const script = answers(events);
  if (script.length === 0)
    throw new CaseError('invalid_case', `episode ${id} has no recorded decision to replay`);
  const check = checkEpisode({ events, torn: false });
  const flagged = check.flags.filter((f) => atLeast(f.severity, 'warning'));
  const rules = [...new Set(flagged.map((f) => f.rule))].sort();
  if (rules.length === 0)
    throw new CaseError(
      'invalid_case',
      `episode ${id} raised no QA flag at warning or worse (stepbox check ${id}); a case needs a failure QA catches`,
    );
  const end = events[events.length - 1]?.type === 'end' ? events[events.length - 1] : null;
  const caveats = caveatsOf(events);

  // Written beside, then moved into place: a half-written case is never listed.
  mkdirSync(library, { recursive: true });
  const tmp = join(library, `.${name}.tmp-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  writeFileSync(join(tmp, 'task.json'), JSON.stringify(header.task, null, 2) + '\n');
  // A script that played a small context window keeps playing it, or its failure would not come back.
  const window = (header.agent as { context_window?: unknown }).context_window;
  const lines = [
    ...(window && typeof window === 'object' ? [JSON.stringify({ context_window: window })] : []),
    ...script.map((m) => JSON.stringify({ role: 'assistant', ...m })),
  ];
  writeFileSync(join(tmp, 'agent.jsonl'), lines.join('\n') + '\n');
  const copied: string[] = [];
  if (asCase === 'program') {
    writeFileSync(
      join(tmp, 'agent.json'),
      JSON.stringify({ agent: header.agent.spec, model: 'scripted:agent.jsonl' }, null, 2) + '\n',
    );
    // The agent runs in its task's folder: bring its program along (top-level files only).
    const from = header.task_path ? dirname(header.task_path) : null;
    let total = 0;
    if (from && existsSync(from))
      for (const entry of readdirSync(from, { withFileTypes: true })) {
        if (!entry.isFile() || entry.name === 'task.json' || /\.jsonl(\.gz)?$/.test(entry.name)) continue;
        const size = statSync(join(from, entry.name)).size;
        if (total + size > MAX_COPY_BYTES) continue;
        total += size;
        copyFileSync(join(from, entry.name), join(tmp, entry.name));
        copied.push(entry.name);
      }
  }
  writeFileSync(
    join(tmp, 'expected.json'),
    JSON.stringify({ rules, ...(end?.type === 'end' ? { status: end.status } : {}) }, null, 2) + '\n',
  );
  writeFileSync(
    join(tmp, 'README.md'),
    walkthrough(name, header.branch, flagged, caveats, {
      goal: String(header.task.goal ?? header.task.name ?? ''),
      steps: script.length,
      end:
        end?.type === 'end'
          ? { status: end.status, end_reason: end.end_reason, verifierPassed: end.verifier?.success ?? null }
          : null,
    }),
  );
  writeFileSync(
    join(tmp, 'source.json'),
    JSON.stringify(
      { episode: header.episode, branch: header.branch, agent: header.agent.spec, saved: Date.now() },
      null,
      2,
    ) + '\n',
  );
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  return {
    name,
    dir,
    episode: header.episode,
    branch: header.branch,
    agent: kind,
    rules,
    flags: flagged,
    steps: script.length,
    copied,
    caveats,
  };
}
