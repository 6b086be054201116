// A project card says how its world is written (walker: a Harbor task read "task · hello-file").
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAppServices } from '../../electron/services/app-services.js';
import { checkWorld } from '../../electron/services/engine-ports.js';
import { createClient, createMemoryTransport } from '../../shared/contract/index.js';
import { projectKindWords } from '../../renderer/src/model/project-kind.js';
import { fakePorts } from '../support/contract-fakes.js';
import { value } from '../support/contract.js';

let dispose: (() => Promise<void>) | null = null;
afterEach(async () => {
  await dispose?.();
  dispose = null;
});

/** A folder with `files` (relative path → text). */
function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'stepbox-project-kind-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

describe('a project says how its world is written', () => {
  it('a task.json (its folder or the file), a Harbor task, a folder of them, a devcontainer, a bare folder', async () => {
    const { ports } = fakePorts();
    const services = createAppServices({ ...ports, harness: { ...ports.harness, check: checkWorld } });
    dispose = () => services.dispose();
    const client = createClient(createMemoryTransport(services));
    const taskDir = folder({ 'task.json': JSON.stringify({ name: 'notes', goal: 'list the files' }) });
    const harbor = { 'task.toml': 'version = "1.0"\n', 'instruction.md': 'Write hello.txt\n' };
    const worlds = [
      [taskDir, 'task.json'],
      [join(taskDir, 'task.json'), 'task.json'],
      [folder(harbor), 'Harbor task'],
      [
        folder(Object.fromEntries(Object.entries(harbor).map(([k, v]) => [`hello/${k}`, v]))),
        'folder of Harbor tasks',
      ],
      [folder({ '.devcontainer/devcontainer.json': '{"image": "debian"}' }), 'devcontainer'],
      [folder({ 'README.md': '# a project\n' }), 'folder'],
    ] as const;
    for (const [path, words] of worlds) {
      const opened = value(await client.projects.open({ path }));
      expect(projectKindWords(opened), path).toBe(words);
    }
    // Listed again, each says the same (read from disk as it is listed).
    const listed = value(await client.projects.list({})).projects;
    expect(worlds.map(([path]) => projectKindWords(listed.find((p) => p.path === path)!))).toEqual(
      worlds.map(([, words]) => words),
    );
  });

  it('from an older server (no world) it says what the kind says', () => {
    expect(projectKindWords({ kind: 'folder' })).toBe('folder');
    expect(projectKindWords({ kind: 'task' })).toBe('task');
  });
});
