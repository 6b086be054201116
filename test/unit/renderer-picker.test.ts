import { describe, expect, it } from 'vitest';
import { createPickerStore, pickedValue } from '../../renderer/src/stores/picker/picker-store';
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

  it('in the person’s folders, a pick is granted by the server first (files.choose) and remembered per field', async () => {
    const fake = createFakeBackend();
    fake.on('files.list', (r) => ({
      root: '/',
      path: r.path ?? 'home/u',
      absolute: `/${r.path ?? 'home/u'}`,
      entries: [{ name: 'fix.jsonl', type: 'file', size: 3 }],
    }));
    fake.on('files.choose', (r) =>
      r.path.endsWith('/refused.jsonl')
        ? { code: 'invalid_input', message: 'Agent: not listed' }
        : { path: r.path },
    );
    const store = createPickerStore(fake.client);
    await store.getState().open('agent', 'hello');
    await store.getState().setRoot('host');
    expect(fake.callsOf('files.list').at(-1)).toEqual({ root: 'host' });
    expect(await store.getState().take('fix.jsonl')).toBe('/home/u/fix.jsonl');
    expect(fake.callsOf('files.choose')).toEqual([{ field: 'agent', path: '/home/u/fix.jsonl' }]);
    expect(store.getState().chosen).toEqual({ agent: ['/home/u/fix.jsonl'], model: [], agentDir: [] });
    // Refused: no path for the field, the server's words shown in the picker.
    expect(await store.getState().take('refused.jsonl')).toBeNull();
    expect(store.getState().error).toBe('Agent: not listed');
    // The task's folder and the store need no grant.
    await store.getState().setRoot('task');
    expect(await store.getState().take('fix.jsonl')).toBe('home/u/fix.jsonl');
    expect(fake.callsOf('files.choose')).toHaveLength(2);
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
