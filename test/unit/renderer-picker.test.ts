import { describe, expect, it } from 'vitest';
import { createPickerStore, fileOf, pickedValue } from '../../renderer/src/stores/picker/picker-store';
import { createFakeBackend } from '../support/renderer-fake-client';

describe('the start form file picker', () => {
  it('lists the task’s folder through files.list and gives a pick relative to it (absolute in the store)', async () => {
    const fake = createFakeBackend();
    fake.on('files.list', (r) => ({
      root: r.root === 'store' ? '/home/u/.stepbox' : '/res/tasks/hello',
      path: r.path ?? '',
      absolute: `/x/${r.path ?? ''}`,
      entries: [{ name: 'agent.jsonl', type: 'file', size: 3 }],
    }));
    const store = createPickerStore(fake.client);
    await store.getState().open('agent', 'hello');
    expect(fake.callsOf('files.list')).toEqual([{ root: 'task', task: { kind: 'sample', id: 'hello' } }]);
    expect(store.getState().pathOf('agent.jsonl')).toBe('agent.jsonl');
    await store.getState().browse('bin');
    expect(store.getState().pathOf('run')).toBe('bin/run');
    expect(store.getState().pathOf(null)).toBe('bin');
    await store.getState().setRoot('store');
    expect(fake.callsOf('files.list').at(-1)).toEqual({ root: 'store' });
    expect(store.getState().pathOf('saved.jsonl')).toBe('/home/u/.stepbox/saved.jsonl');
    store.getState().close();
    expect(store.getState().field).toBeNull();
  });

  it('in the person’s folders, a pick is granted by the server first (files.choose) for the field and the task named', async () => {
    const fake = createFakeBackend();
    fake.on('files.list', (r) => ({
      root: '/',
      path: r.path ?? 'home/u',
      absolute: `/${r.path ?? 'home/u'}`,
      entries: [{ name: 'fix.jsonl', type: 'file', size: 3 }],
    }));
    const grant = (path: string) => ({
      field: 'agent' as const,
      task: '/res/tasks/hello',
      task_name: 'hello',
      path,
      kind: 'file' as const,
      chosen_at: 1,
    });
    fake.on('files.choose', (r) =>
      r.path.endsWith('/refused.jsonl')
        ? { code: 'invalid_input', message: 'Agent: not listed' }
        : grant(r.path),
    );
    const store = createPickerStore(fake.client);
    await store.getState().open('agent', 'hello');
    await store.getState().setRoot('host');
    expect(fake.callsOf('files.list').at(-1)).toEqual({ root: 'host' });
    expect(await store.getState().take('fix.jsonl')).toBe('/home/u/fix.jsonl');
    expect(fake.callsOf('files.choose')).toEqual([
      { field: 'agent', path: '/home/u/fix.jsonl', task: { kind: 'sample', id: 'hello' } },
    ]);
    expect(store.getState().chosen).toEqual([grant('/home/u/fix.jsonl')]);
    // Another task named in Your folders: the folder listed stays, the pick is for that task.
    const listed = fake.callsOf('files.list').length;
    await store.getState().setTask('/home/u/project');
    expect(fake.callsOf('files.list')).toHaveLength(listed);
    await store.getState().take('fix.jsonl');
    expect(fake.callsOf('files.choose').at(-1)).toMatchObject({
      task: { kind: 'project', path: '/home/u/project' },
    });
    // Refused: no path for the field, the server's words shown in the picker.
    expect(await store.getState().take('refused.jsonl')).toBeNull();
    expect(store.getState().error).toBe('Agent: not listed');
    // The task's folder and the store need no grant.
    await store.getState().setTask('hello');
    await store.getState().setRoot('task');
    expect(await store.getState().take('fix.jsonl')).toBe('home/u/fix.jsonl');
    expect(fake.callsOf('files.choose')).toHaveLength(3);
  });

  it('after a reload the grants come from the server; clearing a field forgets its file, typing over it does not', async () => {
    const fake = createFakeBackend();
    let chosen = [
      {
        field: 'agent' as const,
        task: '/t',
        task_name: 't',
        path: '/home/u/fix.jsonl',
        kind: 'file' as const,
        chosen_at: 1,
      },
    ];
    fake.on('files.chosen', () => ({ chosen }));
    fake.on('files.forget', (r) => {
      const before = chosen.length;
      chosen = chosen.filter((c) => !(c.field === r.field && c.path === r.path));
      return { forgotten: before - chosen.length };
    });
    const store = createPickerStore(fake.client);
    await store.getState().loadChosen();
    expect(store.getState().chosen.map((c) => c.path)).toEqual(['/home/u/fix.jsonl']);
    await store.getState().edited('agent', 'scripted:/home/u/fix.jsonl', 'scripted:/home/u/fix.json');
    await store.getState().edited('model', 'scripted:/home/u/fix.jsonl', '');
    expect(fake.callsOf('files.forget')).toEqual([]);
    await store.getState().edited('agent', 'scripted:/home/u/fix.jsonl', ' ');
    expect(fake.callsOf('files.forget')).toEqual([{ field: 'agent', path: '/home/u/fix.jsonl' }]);
    expect(store.getState().chosen).toEqual([]);
  });

  it('names the file a field holds as a grant does', () => {
    expect(fileOf('agent', ' scripted:/home/u/a.jsonl ')).toBe('/home/u/a.jsonl');
    expect(fileOf('agent', 'scripted:a.jsonl')).toBeNull();
    expect(fileOf('agent', "exec:python3 '/home/u/my agent.py'")).toBe('/home/u/my agent.py');
    expect(fileOf('agent', 'exec:/home/u/run --fast')).toBe('/home/u/run');
    expect(fileOf('agent', 'openai:gpt')).toBeNull();
    expect(fileOf('agentDir', '/home/u/agent')).toBe('/home/u/agent');
  });

  it('shows a refusal as the picker’s error, not a throw', async () => {
    const fake = createFakeBackend();
    fake.on('files.list', () => ({ code: 'invalid_input', message: '"../x" leaves the folder' }));
    const store = createPickerStore(fake.client);
    await store.getState().open('model', 'hello');
    expect(store.getState().error).toBe('"../x" leaves the folder');
    expect(store.getState().listing).toBeNull();
  });

  it('fills the field as the form reads it: a script, a program for exec:, a folder', () => {
    expect(pickedValue('agent', '', 'agent.jsonl')).toBe('scripted:agent.jsonl');
    expect(pickedValue('model', 'openai:x', 'answers.jsonl')).toBe('scripted:answers.jsonl');
    expect(pickedValue('agent', 'exec:old', 'agent.py')).toBe('exec:python3 agent.py');
    expect(pickedValue('agent', 'exec:', 'my agent.js')).toBe("exec:node 'my agent.js'");
    expect(pickedValue('agent', 'exec:', 'run')).toBe('exec:./run');
    expect(pickedValue('agentDir', '', 'agent')).toBe('agent');
  });
});
