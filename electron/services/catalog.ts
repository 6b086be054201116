import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CaseSummary, TaskSummary } from '../../shared/contract/index.js';
import { caseFile } from '../engine/cases/case-library.js';
import type { CatalogPort } from './ports.js';
import { ServiceError } from './service-error.js';

/** The first `# heading` of a README and the first paragraph after it that is not the command line to run it. */
function titleAndSummary(readme: string, fallback: string): { title: string; summary: string } {
  const lines = readme.split('\n');
  const heading = lines.findIndex((l) => /^#\s+/.test(l));
  const title = heading >= 0 ? lines[heading].replace(/^#\s+/, '').trim() : fallback;
  const rest = lines.slice(heading + 1);
  // "**Run it:** `stepbox case run …`" is for the terminal; the card says what the case is.
  const start = rest.findIndex(
    (l, i) =>
      l.trim() !== '' &&
      !l.startsWith('#') &&
      (i === 0 || rest[i - 1].trim() === '' || rest[i - 1].startsWith('#')) &&
      !l.startsWith('**Run it:**'),
  );
  const paragraph: string[] = [];
  for (const l of start >= 0 ? rest.slice(start) : []) {
    if (l.trim() === '' || l.startsWith('#')) break;
    paragraph.push(l.trim());
  }
  return { title, summary: paragraph.join(' ') };
}

function readJson(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
}

function subdirs(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, 'task.json')))
    .map((d) => d.name)
    .sort();
}

/** How many episodes a case runs (its `expected.json`; 1 when it does not say). */
function episodesOf(dir: string): number {
  const path = join(dir, 'expected.json');
  if (!existsSync(path)) return 1;
  const n = readJson(path).episodes;
  return typeof n === 'number' && Number.isInteger(n) && n >= 1 ? n : 1;
}

/**
 * The bundled sample tasks (`resources/tasks/<id>/task.json` [+ `agent.jsonl`]) and
 * cases (`resources/cases/<id>/{task.json,agent.jsonl,README.md}`), read from disk on
 * each call so a freshly added case shows without a restart.
 */
export function fileCatalog(resourcesDir: string, libraryDir?: string): CatalogPort {
  const tasksDir = join(resourcesDir, 'tasks');
  const bundledDir = join(resourcesDir, 'cases');
  // The store's own cases (stepbox case new, Save as case) follow the bundled ones; a bundled name wins.
  const ids = () => {
    const bundled = subdirs(bundledDir);
    const own = libraryDir
      ? subdirs(libraryDir).filter((id) => !bundled.includes(id) && !id.startsWith('.'))
      : [];
    return [...bundled, ...own];
  };
  const rootOf = (id: string) => (subdirs(bundledDir).includes(id) || !libraryDir ? bundledDir : libraryDir);
  const agentOf = (dir: string) =>
    existsSync(join(dir, 'agent.jsonl')) ? `scripted:${join(dir, 'agent.jsonl')}` : null;

  const caseSummary = (id: string, fixed = false): CaseSummary => {
    const root = rootOf(id);
    const dir = join(root, id);
    const readme = existsSync(join(dir, 'README.md')) ? readFileSync(join(dir, 'README.md'), 'utf8') : '';
    const { title, summary } = titleAndSummary(readme, id);
    const agent = caseFile(dir, 'agent.jsonl', fixed);
    return {
      id,
      title,
      summary,
      task_path: caseFile(dir, 'task.json', fixed),
      agent: existsSync(agent) ? `scripted:${agent}` : 'manual',
      episodes: episodesOf(dir),
      has_fixed: existsSync(join(dir, 'fixed')),
      origin: root === bundledDir ? 'bundled' : 'library',
    };
  };

  return {
    async tasks(): Promise<TaskSummary[]> {
      return subdirs(tasksDir).map((id) => {
        const dir = join(tasksDir, id);
        const task = readJson(join(dir, 'task.json'));
        return {
          id,
          name: typeof task.name === 'string' ? task.name : id,
          goal: typeof task.goal === 'string' ? task.goal : '',
          path: join(dir, 'task.json'),
          agent: agentOf(dir),
        };
      });
    },
    async cases() {
      return ids().map((id) => caseSummary(id));
    },
    async caseVariant(id, fixed) {
      if (!ids().includes(id)) throw new ServiceError('not_found', `no case "${id}" (cases.list shows them)`);
      return caseSummary(id, fixed);
    },
    async openCase(id) {
      if (!ids().includes(id)) throw new ServiceError('not_found', `no case "${id}" (cases.list shows them)`);
      const dir = join(rootOf(id), id);
      const readme = existsSync(join(dir, 'README.md')) ? readFileSync(join(dir, 'README.md'), 'utf8') : '';
      return { case: caseSummary(id), readme, task: readJson(join(dir, 'task.json')) };
    },
  };
}
