// The start form's `scripted:` paths: a relative path that leaves the task's folder (`..`)
// is refused before the start, naming the field, the resolved path and where to choose
// from; a missing file says so in the form's words, never Node's ENOENT text.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAppServices } from '../../electron/services/app-services.js';
import { createClient, createMemoryTransport } from '../../shared/contract/index.js';
import { pathOnCard, scriptPlaceProblem } from '../../shared/start-paths.js';
import { fakePorts } from '../support/contract-fakes.js';

describe('a resolved path as a task card says it', () => {
  it('says a path inside the task folder from the folder’s name, any other whole', () => {
    const folder = '/home/me/stepbox/resources/tasks/hello-python';
    expect(pathOnCard(`${folder}/agent.jsonl`, folder)).toBe('hello-python/agent.jsonl');
    expect(pathOnCard(`${folder}/agents/a.jsonl`, `${folder}/`)).toBe('hello-python/agents/a.jsonl');
    expect(pathOnCard(folder, folder)).toBe('hello-python');
    // A sibling whose name starts alike is outside.
    expect(pathOnCard('/home/me/stepbox/resources/tasks/hello-python2/a.jsonl', folder)).toBe(
      '/home/me/stepbox/resources/tasks/hello-python2/a.jsonl',
    );
    expect(pathOnCard('/etc/hosts', folder)).toBe('/etc/hosts');
  });
});

describe('where a start-form script may be read from', () => {
  it('refuses `..` out of the task folder, naming the field, the resolved path and the fix', () => {
    expect(scriptPlaceProblem('Agent', 'scripted:../../etc/passwd', '/w/resources/tasks/hello')).toBe(
      "Agent: scripted:../../etc/passwd resolves to /w/resources/etc/passwd, outside the task's folder " +
        '/w/resources/tasks/hello; choose a file with Choose… or give a path inside it',
    );
  });

  it('allows the task folder, the store, absolute choices and other specs', () => {
    expect(scriptPlaceProblem('Agent', 'scripted:agent.jsonl', '/t')).toBeNull();
    expect(scriptPlaceProblem('Agent', 'scripted:sub/../a.jsonl', '/t')).toBeNull();
    expect(scriptPlaceProblem('Agent', 'scripted:../store/s.jsonl', '/t', '/store')).toBeNull();
    expect(scriptPlaceProblem('Agent', 'scripted:/abs/a.jsonl', '/t')).toBeNull();
    expect(scriptPlaceProblem('Agent', 'exec:python3 ../x.py', '/t')).toBeNull();
    // A sibling whose name starts like the folder is still outside it.
    expect(scriptPlaceProblem('Agent', 'scripted:../t2/a.jsonl', '/t')).toMatch(
      /outside the task's folder \/t;/,
    );
  });

  it('episode.start refuses before starting, as a value with a code and the form’s words', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-start-place-'));
    mkdirSync(join(dir, 'task'));
    writeFileSync(join(dir, 'task', 'task.json'), '{}');
    const { ports } = fakePorts();
    let started = 0;
    const start = ports.harness.start.bind(ports.harness);
    ports.harness.start = async (...args) => {
      started += 1;
      return start(...args);
    };
    const client = createClient(createMemoryTransport(createAppServices(ports)));
    const task = { kind: 'path' as const, path: join(dir, 'task', 'task.json') };

    const escaped = await client.episode.start({ task, agent: 'scripted:../../etc/passwd' });
    expect(escaped).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    if (!escaped.ok)
      expect(escaped.error.message).toMatch(/^Agent: scripted:\.\.\/\.\.\/etc\/passwd resolves to /);

    const missing = await client.episode.start({ task, agent: 'scripted:x.jsonl' });
    expect(missing).toEqual({
      ok: false,
      error: {
        code: 'not_found',
        message: `Agent: no file at ${join(dir, 'task', 'x.jsonl')} — check the name or use Choose…`,
      },
    });
    const model = await client.episode.start({
      task,
      agent: 'exec:python3 a.py',
      agent_options: { model: 'scripted:../../m.jsonl' },
    });
    expect(model).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    if (!model.ok) expect(model.error.message).toMatch(/^Its model calls answered by: /);
    expect(started).toBe(0);
  });
});
