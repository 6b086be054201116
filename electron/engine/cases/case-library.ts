import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { QaRuleId } from '../../../shared/qa/flag.js';
import { parseTask, type Task } from '../../../shared/task.js';
import { EpisodeStatus } from '../../../shared/trace-events.js';

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

/** One bundled case, resolved to the files of one variant. */
export interface CaseSpec {
  readonly name: string;
  readonly dir: string;
  readonly fixed: boolean;
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
    readonly code: 'not_found' | 'invalid_case',
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

/** The names of the cases in `dir`, sorted. */
export function caseNames(dir = casesDir()): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, 'expected.json')))
    .map((d) => d.name)
    .sort();
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
export function loadCase(name: string, options: { fixed?: boolean; dir?: string } = {}): CaseSpec {
  const root = options.dir ?? casesDir();
  const dir = join(root, name);
  if (!/^[a-z0-9-]+$/.test(name) || !existsSync(join(dir, 'expected.json'))) {
    const known = existsSync(root) ? caseNames(root) : [];
    throw new CaseError(
      'not_found',
      `no case "${name}"; cases: ${known.join(', ') || '(none)'} (stepbox case list)`,
    );
  }
  const fixed = options.fixed ?? false;
  const taskPath = caseFile(dir, 'task.json', fixed);
  const agentPath = caseFile(dir, 'agent.jsonl', fixed);
  const parsedTask = parseTask(readJson(taskPath), taskPath);
  if (!parsedTask.ok) throw new CaseError('invalid_case', parsedTask.error.message);
  const expected = CaseExpected.safeParse(readJson(join(dir, 'expected.json')));
  if (!expected.success)
    throw new CaseError(
      'invalid_case',
      `${join(dir, 'expected.json')}: ${expected.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  const readme = existsSync(join(dir, 'README.md')) ? readFileSync(join(dir, 'README.md'), 'utf8') : '';
  const title = /^#\s+(.+)$/m.exec(readme)?.[1]?.trim() ?? name;
  return {
    name,
    dir,
    fixed,
    taskPath,
    agentPath,
    task: parsedTask.value,
    expected: expected.data,
    readme,
    title,
  };
}
