// The Electron side of the contract without Electron: the preload exposes exactly the
// contract's shape and nothing else, and ipc.ts refuses foreign senders, validates input
// and routes events to the window that owns a stream.
import { readFileSync } from 'node:fs';
import { runInNewContext } from 'node:vm';
import ts from 'typescript';
import { describe, expect, it, vi } from 'vitest';
import { EVENT_NAMES, OPERATION_NAMES, eventMethodName } from '../../shared/contract/index.js';
import { createAppServices } from '../../electron/services/app-services.js';
import { fakePorts } from '../support/contract-fakes.js';

const handlers = new Map<string, (event: unknown, input: unknown) => Promise<unknown>>();
const windows: { webContents: FakeContents }[] = [];

interface FakeContents {
  id: number;
  url: string;
  sent: [string, unknown][];
  mainFrame: object;
  isDestroyed(): boolean;
  getURL(): string;
  send(channel: string, payload: unknown): void;
  once(event: string, cb: () => void): void;
}

function contents(id: number, url: string): FakeContents {
  return {
    id,
    url,
    sent: [],
    mainFrame: { url },
    isDestroyed: () => false,
    getURL: () => url,
    send(channel, payload) {
      this.sent.push([channel, payload]);
    },
    once: () => undefined,
  };
}

vi.mock('electron', () => ({
  ipcMain: {
    handle: (channel: string, fn: (event: unknown, input: unknown) => Promise<unknown>) =>
      handlers.set(channel, fn),
    removeHandler: (channel: string) => handlers.delete(channel),
  },
  BrowserWindow: { getAllWindows: () => windows },
}));

function loadPreload() {
  const source = readFileSync(new URL('../../electron/preload.cts', import.meta.url), 'utf8');
  const js = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  const exposed: Record<string, unknown> = {};
  const invoked: [string, unknown][] = [];
  const listeners = new Map<string, Set<(e: unknown, p: unknown) => void>>();
  const required: string[] = [];
  const electron = {
    contextBridge: { exposeInMainWorld: (key: string, api: unknown) => (exposed[key] = api) },
    ipcRenderer: {
      invoke: async (channel: string, input: unknown) => {
        invoked.push([channel, input]);
        return { ok: true, value: channel };
      },
      on: (channel: string, l: (e: unknown, p: unknown) => void) => {
        if (!listeners.has(channel)) listeners.set(channel, new Set());
        listeners.get(channel)?.add(l);
      },
      removeListener: (channel: string, l: (e: unknown, p: unknown) => void) =>
        listeners.get(channel)?.delete(l),
    },
  };
  const module = { exports: {} };
  runInNewContext(js, {
    module,
    exports: module.exports,
    require: (name: string) => {
      required.push(name);
      if (name !== 'electron') throw new Error(`a sandboxed preload cannot require ${name}`);
      return electron;
    },
  });
  return { exposed, invoked, listeners, required };
}

describe('preload', () => {
  it('exposes exactly the contract as window.stepbox and requires nothing but electron', async () => {
    const { exposed, invoked, listeners, required } = loadPreload();
    expect(Object.keys(exposed)).toEqual(['stepbox']);
    expect(required).toEqual(['electron']);
    const api = exposed.stepbox as Record<string, Record<string, (r?: unknown) => Promise<unknown>>>;
    const expectedKeys = new Set([
      ...OPERATION_NAMES.map((o) => o.split('.')[0]),
      ...EVENT_NAMES.map(eventMethodName),
    ]);
    expect(new Set(Object.keys(api))).toEqual(expectedKeys);
    for (const op of OPERATION_NAMES) {
      const [d, v] = op.split('.');
      expect(typeof api[d][v], op).toBe('function');
    }
    expect(await api.episode.step({ id: 'b1' })).toEqual({ ok: true, value: 'stepbox:episode.step' });
    await api.tasks.list();
    expect(invoked).toEqual([
      ['stepbox:episode.step', { id: 'b1' }],
      ['stepbox:tasks.list', {}],
    ]);

    const seen: unknown[] = [];
    const off = (api.onEpisodeEvent as unknown as (cb: (p: unknown) => void) => () => void)((p) =>
      seen.push(p),
    );
    const channel = listeners.get('stepbox:event:episode.event');
    expect(channel?.size).toBe(1);
    for (const l of channel ?? []) l({}, { n: 1 });
    off();
    expect(channel?.size).toBe(0);
    expect(seen).toEqual([{ n: 1 }]);
  });
});

describe('ipc', () => {
  it('refuses foreign senders, validates input, and routes stream events to their window', async () => {
    const { bindContract } = await import('../../electron/ipc.js');
    const services = createAppServices(fakePorts().ports);
    const app = contents(1, 'app://stepbox/index.html');
    const other = contents(2, 'app://stepbox/index.html');
    windows.push({ webContents: app }, { webContents: other });
    const unbind = bindContract(services, (u) => u.startsWith('app://stepbox/'));
    expect([...handlers.keys()].sort()).toEqual(OPERATION_NAMES.map((o) => `stepbox:${o}`).sort());

    const call = (sender: FakeContents, op: string, input: unknown, frame: object = sender.mainFrame) =>
      handlers.get(`stepbox:${op}`)?.(
        { sender, senderFrame: Object.assign(frame, { url: (frame as { url?: string }).url ?? sender.url }) },
        input,
      );

    const evil = contents(3, 'https://evil.example/');
    expect(await call(evil, 'tasks.list', {})).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    const subframe = { url: 'app://stepbox/index.html' };
    expect(await call(app, 'tasks.list', {}, subframe)).toMatchObject({
      ok: false,
      error: { code: 'unauthorized' },
    });
    expect(await call(app, 'episode.step', { id: 7 })).toMatchObject({
      ok: false,
      error: { code: 'invalid_input' },
    });
    expect(await call(app, 'tasks.list', {})).toMatchObject({ ok: true });

    const started = (await call(app, 'episode.start', { task: { kind: 'sample', id: 'hello' } })) as {
      value: { branch: string };
    };
    const opened = (await call(app, 'terminal.open', { id: started.value.branch, cols: 80, rows: 24 })) as {
      value: { terminal: string };
    };
    app.sent.length = 0;
    other.sent.length = 0;
    await call(app, 'terminal.input', { terminal: opened.value.terminal, data: 'ls\r' });
    expect(app.sent).toContainEqual([
      'stepbox:event:terminal.data',
      { terminal: opened.value.terminal, data: 'ls\r' },
    ]);
    expect(other.sent.filter(([c]) => c === 'stepbox:event:terminal.data')).toEqual([]);
    await call(app, 'episode.step', { id: started.value.branch });
    expect(other.sent.some(([c]) => c === 'stepbox:event:episode.event')).toBe(true);

    unbind();
    expect(handlers.size).toBe(0);
    await services.dispose();
  });
});
