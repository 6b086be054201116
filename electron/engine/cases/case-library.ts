import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { caseNameProblem } from '../../../shared/case-name.js';
import { QaRuleId } from '../../../shared/qa/flag.js';
import type { Task } from '../../../shared/task.js';
import { normalizeAgentSpec } from '../agents/agent-spec.js';
import { loadCaseTask } from '../harness/load-world.js';
import { IMPORTED_MARKER } from '../harness/imported-marker.js';
import { EpisodeStatus } from '../../../shared/trace-events.js';
import { stepboxHome } from '../trace/episode-store.js';
import { describeIssues } from '../../../shared/validation-issues.js';

/** A case's `expected.json`, written by hand: the rules its failure raises (severity ≥ warning). */
export const CaseExpected = z.strictObject({
  rules: z.array(QaRuleId).min(1),
  /** Episodes the case runs in one sandbox (2 for the state-leak case). */
  episodes: z.number().int().min(1).max(5).default(1),
  /** The status the broken variant's last episode is expected to end with (informative). */
  status: EpisodeStatus.optional(),
});
/** A case's expectation. */
export type CaseExpected = z.infer<typeof CaseExpected>;

/**
 * A case's `agent.json`, when its agent is not a plain script (a case saved from an `exec:`
 * episode): the agent spec to run and what answers its model calls. Relative `scripted:`
 * paths are the case folder's.
 */
export const CaseAgent = z.strictObject({
  agent: z.string().min(1),
  model: z.string().min(1).optional(),
});
/** A case's agent settings. */
export type CaseAgent = z.infer<typeof CaseAgent>;

/** One case (bundled or from the store's library), resolved to the files of one variant. */
export interface CaseSpec {
  readonly name: string;
  readonly dir: string;
  readonly fixed: boolean;
  /** Whether the case has a `fixed/` variant (a case saved from an episode has none until its author adds one). */
  readonly hasFixed: boolean;
  /** Where it comes from: `bundled` with stepbox, or the store's `library` (`stepbox case new`, `case import`). */
  readonly origin: 'bundled' | 'library';
  /** True for a case unpacked by `case import` (another person's): its program agent runs only when given again. */
  readonly imported: boolean;
  /** The agent spec to run, when not `scripted:` the variant's `agent.jsonl` (from `agent.json`). */
  readonly agentSpec?: string;
  /** What answers the agent's model calls (an `exec:` agent), from `agent.json`. */
  readonly model?: string;
  readonly taskPath: string;
  readonly agentPath: string;
  readonly task: Task;
  readonly expected: CaseExpected;
  /** The walkthrough (README.md). */
  readonly readme: string;
  /** The walkthrough's first heading. */
  readonly title: string;
}

/** Why a case could not be loaded. */
export class CaseError extends Error {
  override readonly name = 'CaseError';
  constructor(
    /** `conflict`: a library case of that name exists (each surface words its own way out: --force, Replace). */
    readonly code: 'not_found' | 'invalid_case' | 'conflict',
    message: string,
  ) {
    super(message);
  }
}

/** The bundled cases folder: `$STEPBOX_CASES`, else `resources/cases` of the stepbox project this file belongs to. */
export function casesDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.STEPBOX_CASES) return env.STEPBOX_CASES;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'resources', 'cases')) && existsSync(join(dir, 'package.json')))
      return join(dir, 'resources', 'cases');
    const up = dirname(dir);
    if (up === dir)
      throw new CaseError('not_found', 'cannot find resources/cases above ' + fileURLToPath(import.meta.url));
    dir = up;
  }
}

/** The store's case library: `$STEPBOX_HOME/cases`, where `stepbox case new` and `case import` write. */
export function libraryDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(stepboxHome(env), 'cases');
}

/** The names of the cases in `dir`, sorted; without `dir`, the bundled cases and then the library's. */
export function caseNames(dir?: string): string[] {
  if (dir === undefined) {
    const bundled = namesIn(casesDir());
    const own = existsSync(libraryDir()) ? namesIn(libraryDir()).filter((n) => !bundled.includes(n)) : [];
    return [...bundled, ...own];
  }
  return namesIn(dir);
}

function namesIn(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, 'expected.json')))
    .map((d) => d.name)
    .sort();
}

/**
 * The folder of case `name` in `root`: the one place a case name becomes a path. A name that
 * is not one (shared/case-name.ts: `../../x`, `a/b`, `a\\b`, NUL, an absolute path, `..`) is
 * refused with `invalid_case` in the rule's words, and no folder outside `root` is ever returned.
 */
export function caseDir(root: string, name: string): string {
  const problem = caseNameProblem(name);
  if (problem) throw new CaseError('invalid_case', `case name ${JSON.stringify(name)}: ${problem}`);
  const dir = resolve(root, name);
  // The rule keeps every name a single folder name; this says so if the rule ever changes.
  if (dirname(dir) !== resolve(root))
    throw new CaseError('invalid_case', `case name ${JSON.stringify(name)} would lie outside ${root}`);
  return dir;
}

/**
 * The folder holding case `name`: the bundled one, else the library's; null when neither has
 * it. A name that is not one is refused ({@link caseDir}).
 */
export function caseRoot(name: string): { root: string; origin: CaseSpec['origin'] } | null {
  if (existsSync(join(caseDir(casesDir(), name), 'expected.json')))
    return { root: casesDir(), origin: 'bundled' };
  if (existsSync(join(caseDir(libraryDir(), name), 'expected.json')))
    return { root: libraryDir(), origin: 'library' };
  return null;
}

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new CaseError('invalid_case', `${path}: ${(e as Error).message}`);
  }
}

/** A file of a case's variant: the fixed variant's `fixed/FILE` overrides the case's own. */
export function caseFile(dir: string, file: string, fixed: boolean): string {
  return fixed && existsSync(join(dir, 'fixed', file)) ? join(dir, 'fixed', file) : join(dir, file);
}

/** Loads a case's broken (default) or fixed variant: `fixed/` files override the case's own. */
export { IMPORTED_MARKER } from '../harness/imported-marker.js';

export function loadCase(name: string, options: { fixed?: boolean; dir?: string } = {}): CaseSpec {
  const found = options.dir === undefined ? caseRoot(name) : null;
  const root = options.dir ?? found?.root ?? casesDir();
  const origin = found?.origin ?? 'bundled';
  const dir = caseDir(root, name);
  if (!existsSync(join(dir, 'expected.json'))) {
    const known = options.dir === undefined ? caseNames() : existsSync(root) ? caseNames(root) : [];
    throw new CaseError(
      'not_found',
      `no case "${name}"; cases: ${known.join(', ') || '(none)'} (stepbox case list)`,
    );
  }
  const fixed = options.fixed ?? false;
  const taskPath = caseFile(dir, 'task.json', fixed);
  const agentPath = caseFile(dir, 'agent.jsonl', fixed);
  // Read as any task file is (its workspace.from against the case's folder, an imported case's refused).
  const parsedTask = loadCaseTask(taskPath);
  if (!parsedTask.ok) throw new CaseError('invalid_case', parsedTask.error.message);
  const expected = CaseExpected.safeParse(readJson(join(dir, 'expected.json')));
  if (!expected.success)
    throw new CaseError(
      'invalid_case',
      `${join(dir, 'expected.json')}: ${describeIssues(expected.error.issues)}`,
    );
  const readme = existsSync(join(dir, 'README.md')) ? readFileSync(join(dir, 'README.md'), 'utf8') : '';
  const title = /^#\s+(.+)$/m.exec(readme)?.[1]?.trim() ?? name;
  let agent: CaseAgent | null = null;
  if (existsSync(join(dir, 'agent.json'))) {
    const parsed = CaseAgent.safeParse(readJson(join(dir, 'agent.json')));
    if (!parsed.success)
      throw new CaseError(
        'invalid_case',
        `${join(dir, 'agent.json')}: expected {"agent": "exec:CMD", "model"?: "scripted:agent.jsonl"}`,
      );
    agent = parsed.data;
  }
  // A scripted: path in agent.json is the case folder's; the variant's agent.jsonl replaces the case's own.
  const inCase = (spec: string) => {
    if (spec === 'scripted:agent.jsonl') return `scripted:${agentPath}`;
    try {
      return normalizeAgentSpec(spec, dir);
    } catch {
      return spec; // not a spec: refused, naming the accepted forms, when the case runs
    }
  };
  return {
    name,
    dir,
    fixed,
    hasFixed: existsSync(join(dir, 'fixed')),
    origin,
    imported: existsSync(join(dir, IMPORTED_MARKER)),
    ...(agent ? { agentSpec: inCase(agent.agent) } : {}),
    ...(agent?.model ? { model: inCase(agent.model) } : {}),
    taskPath,
    agentPath,
    task: parsedTask.value,
    expected: expected.data,
    readme,
    title,
  };
}
