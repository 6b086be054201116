import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { z } from 'zod';
import { caseDir, CaseError, IMPORTED_MARKER, libraryDir, loadCase } from './case-library.js';
import { caseNameProblem } from '../../../shared/case-name.js';
import { CaseName } from '../../../shared/contract/models.js';
import { unpackCaseBundleFile } from './case-bundle-stream.js';
import { describeIssues } from '../../../shared/validation-issues.js';

/** The format id of a case bundle. */
export const CASE_BUNDLE_FORMAT = 'stepbox.case/1';

/** A case as one JSON file a colleague imports: every file of its folder, text or base64. */
export const CaseBundle = z.strictObject({
  format: z.literal(CASE_BUNDLE_FORMAT),
  name: CaseName,
  files: z.record(
    z.string(),
    z.union([z.strictObject({ text: z.string() }), z.strictObject({ base64: z.string() })]),
  ),
});
/** A case bundle. */
export type CaseBundle = z.infer<typeof CaseBundle>;

/** A bundle holds at most this much: a case is a task, a script and a walkthrough, not a dataset. */
const MAX_BUNDLE_BYTES = 20 * 1024 * 1024;

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name.startsWith('.')) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(p));
    else if (e.isFile()) out.push(p);
  }
  return out.sort();
}

/** Packs a case (bundled or the library's) into a bundle. */
export function exportCase(name: string): CaseBundle {
  const spec = loadCase(name);
  const files: CaseBundle['files'] = {};
  let total = 0;
  for (const path of filesUnder(spec.dir)) {
    total += statSync(path).size;
    if (total > MAX_BUNDLE_BYTES)
      throw new CaseError(
        'invalid_case',
        `case ${name} holds more than ${MAX_BUNDLE_BYTES} bytes; a bundle is for tasks and scripts`,
      );
    const bytes = readFileSync(path);
    const text = bytes.toString('utf8');
    const rel = relative(spec.dir, path).split(sep).join('/');
    files[rel] = Buffer.from(text, 'utf8').equals(bytes) ? { text } : { base64: bytes.toString('base64') };
  }
  return { format: CASE_BUNDLE_FORMAT, name, files };
}

/** A bundle path that stays inside the case folder: relative, `/`-separated, no `.`/`..`/empty parts. */
function safePath(p: string): boolean {
  return (
    p.length > 0 &&
    !p.startsWith('/') &&
    !p.includes('\\0') &&
    p.split('/').every((part) => part !== '' && part !== '.' && part !== '..' && !part.startsWith('.'))
  );
}

/**
 * Unpacks a bundle into the store's library (`--name` renames it), refusing a path that
 * leaves the case folder and a case that does not load (task, expected.json); a bundled
 * case's name is refused, an existing library case needs `force`.
 */
export function importCase(
  input: unknown,
  options: { name?: string; force?: boolean; library?: string } = {},
): { name: string; dir: string } {
  const parsed = CaseBundle.safeParse(input);
  if (!parsed.success)
    throw new CaseError(
      'invalid_case',
      `not a case bundle (${CASE_BUNDLE_FORMAT}): ${describeIssues(parsed.error.issues)}`,
    );
  const bundle = parsed.data;
  for (const p of Object.keys(bundle.files))
    if (!safePath(p))
      throw new CaseError('invalid_case', `the bundle's file "${p}" would leave the case folder`);
  return placeCase(bundle.name, Object.keys(bundle.files), options, (staged) => {
    for (const [p, content] of Object.entries(bundle.files)) {
      const target = join(staged, ...p.split('/'));
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, 'text' in content ? content.text : Buffer.from(content.base64, 'base64'));
    }
  });
}

/**
 * `importCase` of a bundle file, streamed: each file's content goes to disk as it is read,
 * so memory stays bounded whatever the file sizes (case-bundle-stream.ts).
 */
export function importCaseFile(
  file: string,
  options: { name?: string; force?: boolean; library?: string } = {},
): { name: string; dir: string } {
  if (!existsSync(file) || !statSync(file).isFile())
    throw new CaseError('not_found', `${file}: no such bundle file (make one with stepbox case export NAME)`);
  let head: { format: string; name: string } | null = null;
  return placeCase(
    () => (head as { name: string }).name,
    null,
    options,
    (staged) => {
      head = unpackCaseBundleFile(file, staged, safePath);
      if (head.format !== CASE_BUNDLE_FORMAT)
        throw new CaseError('invalid_case', `${file}: format "${head.format}" is not ${CASE_BUNDLE_FORMAT}`);
      const problem = caseNameProblem(head.name);
      if (problem)
        throw new CaseError('invalid_case', `${file}: name ${JSON.stringify(head.name)}: ${problem}`);
    },
  );
}

/**
 * The one way a bundle joins the library: `fill` unpacks its files into a staging folder
 * beside the library, which is checked (name, required files, it loads like any case),
 * marked as imported and moved into place; a bad bundle never shows in the library.
 */
function placeCase(
  bundleName: string | (() => string),
  paths: readonly string[] | null,
  options: { name?: string; force?: boolean; library?: string },
  fill: (staged: string) => void,
): { name: string; dir: string } {
  const library = options.library ?? libraryDir();
  const nameNow = () => options.name ?? (typeof bundleName === 'string' ? bundleName : bundleName());
  const checkName = (name: string) => {
    if (existsSync(caseDir(library, name)) && !options.force)
      throw new CaseError(
        'invalid_case',
        `case "${name}" already exists in ${library}; pass --force to replace it or --name to rename`,
      );
  };
  // Known before unpacking (an object, or --name): refused before a byte is written.
  if (options.name !== undefined || typeof bundleName === 'string') checkName(nameNow());
  if (paths && (!paths.includes('expected.json') || !paths.includes('task.json')))
    throw new CaseError('invalid_case', 'the bundle has no task.json or expected.json');
  mkdirSync(library, { recursive: true });
  const tmpRoot = join(library, `.import-${process.pid}`);
  const staged = join(tmpRoot, '.staged');
  rmSync(tmpRoot, { recursive: true, force: true });
  try {
    mkdirSync(staged, { recursive: true });
    fill(staged);
    const name = nameNow();
    checkName(name);
    if (!existsSync(join(staged, 'expected.json')) || !existsSync(join(staged, 'task.json')))
      throw new CaseError('invalid_case', 'the bundle has no task.json or expected.json');
    const tmp = caseDir(tmpRoot, name);
    renameSync(staged, tmp);
    // It must load like any case before it joins the library.
    loadCase(name, { dir: tmpRoot });
    // Marks it as from elsewhere: its agent.json's command is never run by itself. A bundle
    // cannot hold or remove this file (safePath refuses dot names).
    writeFileSync(join(tmp, IMPORTED_MARKER), JSON.stringify({ imported: Date.now() }) + '\n');
    const dir = caseDir(library, name);
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
    return { name, dir };
  } finally {
    rmSync(tmpRoot, { recursive: true, force: true });
  }
}
