// The start form's file picker lists host folders: only inside the task's folder or the
// store, whatever the path says. Tested as an attacker would try it — traversal, encoded
// dots, absolute paths, NUL, symlinks out — directly, through the services and over HTTP.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, type WebServer } from '../../electron/server/web-server.js';
import { createAppServices, type AppServices } from '../../electron/services/app-services.js';
import { listInside } from '../../electron/services/host-files.js';
import { fakePorts } from '../support/contract-fakes.js';
import { elidePath } from '../../shared/start-paths.js';

/** Every attack path of the class: each must be refused, none may list anything outside. */
const ESCAPES = [
  '..',
  '../',
  '../..',
  'agent/../..',
  './..',
  'agent/../../outside',
  '%2e%2e',
  '%2E%2e/outside',
  '.%2e',
  '..%2f..',
  '%2e%2e%2foutside',
  '..\\..',
  '/etc',
  '/',
  'agent\0',
  'agent%00',
  'out-link',
  'out-link/',
  'agent/up-link',
] as const;

function post(
  port: number,
  op: string,
  body: unknown,
  token: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const data = Buffer.from(JSON.stringify(body));
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: `/api/${op}`,
        method: 'POST',
        agent: false,
        headers: { Authorization: `Bearer ${token}`, 'Content-Length': data.length },
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

describe('the file picker lists inside its roots only', () => {
  let base: string;
  let task: string;
  let store: string;
  let services: AppServices;
  let server: WebServer;

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'stepbox-picker-'));
    task = join(base, 'task');
    store = join(base, 'store');
    mkdirSync(join(task, 'agent', 'bin'), { recursive: true });
    mkdirSync(store);
    mkdirSync(join(base, 'outside'));
    writeFileSync(join(base, 'outside', 'secret.txt'), 'root:x:0:0');
    writeFileSync(join(task, 'task.json'), '{"name":"t","goal":"g"}');
    writeFileSync(join(task, 'agent.jsonl'), '{"content":"done"}\n');
    writeFileSync(join(task, 'agent', 'bin', 'run'), '#!/bin/sh\n');
    symlinkSync(join(base, 'outside'), join(task, 'out-link'));
    symlinkSync(join(base, 'outside', 'secret.txt'), join(task, 'secret-link'));
    symlinkSync('../..', join(task, 'agent', 'up-link'));
    symlinkSync(join(task, 'agent'), join(task, 'in-link'));
    symlinkSync(join(task, 'nowhere'), join(task, 'dangling'));
    writeFileSync(join(store, 'saved.jsonl'), '{}\n');
    const fake = fakePorts().ports;
    services = createAppServices({
      ...fake,
      storeHome: store,
      catalog: {
        ...fake.catalog,
        tasks: async () => [
          { id: 't', name: 't', goal: 'g', path: join(task, 'task.json'), agent: 'scripted:agent.jsonl' },
        ],
      },
    });
    server = await listen({ services, rendererDir: base });
  });
  afterAll(async () => {
    await server.close();
    await services.dispose();
    rmSync(base, { recursive: true, force: true });
  });

  it('lists names, types and sizes; follows a link that stays inside; leaves out links that leave or dangle', async () => {
    const root = await listInside(task, '', "the task's folder");
    expect(root.path).toBe('');
    expect(root.entries).toEqual([
      { name: 'agent', type: 'dir', size: 0 },
      { name: 'in-link', type: 'dir', size: 0 },
      { name: 'agent.jsonl', type: 'file', size: 19 },
      { name: 'task.json', type: 'file', size: 23 },
    ]);
    const sub = await listInside(task, 'agent/bin', "the task's folder");
    expect(sub).toMatchObject({ path: 'agent/bin', absolute: join(task, 'agent', 'bin') });
    expect(sub.entries.map((e) => e.name)).toEqual(['run']);
    // An absolute path that names a folder inside is the same folder.
    expect((await listInside(task, join(task, 'agent'), 'x')).path).toBe('agent');
  });

  it('refuses every escape: .., encoded dots, absolute paths outside, NUL, symlinks out', async () => {
    for (const path of ESCAPES) {
      const res = await services.handle('files.list', {
        root: 'task',
        task: { kind: 'sample', id: 't' },
        path,
      });
      expect(res.ok, JSON.stringify(path)).toBe(false);
      if (res.ok) continue;
      expect(['invalid_input', 'not_found'], path).toContain(res.error.code);
      expect(res.error.message).not.toMatch(/secret|root:x/);
    }
  });

  it('over HTTP (web mode): the same refusals, and the store as the second root', async () => {
    for (const path of ESCAPES) {
      const reply = await post(server.port, 'files.list', { root: 'store', path }, server.token);
      expect(reply.status).toBe(200);
      const body = JSON.parse(reply.body) as { ok: boolean };
      expect(body.ok, JSON.stringify(path)).toBe(false);
      expect(reply.body).not.toMatch(/secret|root:x/);
    }
    const reply = await post(server.port, 'files.list', { root: 'store' }, server.token);
    expect(JSON.parse(reply.body)).toMatchObject({
      ok: true,
      value: { path: '', entries: [{ name: 'saved.jsonl', type: 'file' }] },
    });
  });

  it('lists a bundled task or case only: a typed task path is no root, and a missing task says so', async () => {
    const typed = await services.handle('files.list', {
      root: 'task',
      task: { kind: 'path', path: '/etc/passwd' },
    });
    expect(typed).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    const none = await services.handle('files.list', { root: 'task' });
    expect(none).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    const unknown = await services.handle('files.list', {
      root: 'task',
      task: { kind: 'sample', id: 'nope' },
    });
    expect(unknown).toMatchObject({ ok: false, error: { code: 'not_found' } });
    const ok = await services.handle('files.list', { root: 'task', task: { kind: 'sample', id: 't' } });
    expect(ok).toMatchObject({ ok: true, value: { root: task, path: '' } });
  });
  it('over HTTP (web mode): episode.start and batch.start with a task path read it by the one rule, naming the field, leaking nothing', async () => {
    // Issue 33, item 5: `{kind: "path"}` started any host path. A symlink in the store that
    // points out, absolute paths outside (one that exists, one that does not), `..` and a
    // relative path: all refused alike, before the disk is read.
    mkdirSync(join(store, 'mine'));
    writeFileSync(join(store, 'mine', 'task.json'), '{"name":"t","goal":"g"}');
    symlinkSync(join(base, 'outside', 'secret.txt'), join(store, 'out-task.json'));
    const refusal = async (op: string, body: unknown, typed: string): Promise<string> => {
      const reply = await post(server.port, op, body, server.token);
      expect(reply.status).toBe(200);
      // Nothing of the file: its content, or Node's words for what it is (the typed path aside).
      expect(reply.body.replaceAll(elidePath(typed), 'TYPED'), typed).not.toMatch(
        /secret|root:x|ENOENT|EACCES/,
      );
      const parsed = JSON.parse(reply.body) as { ok: boolean; error?: { code: string; message: string } };
      expect(parsed.ok, typed).toBe(false);
      expect(parsed.error?.code, `${typed}: ${parsed.error?.message}`).toBe('invalid_input');
      const message = parsed.error?.message ?? '';
      // The path as typed, cut in the middle when long (elidePath: the refusal's echo).
      expect(message.startsWith(`task.path: ${elidePath(typed)} `), message).toBe(true);
      return message.replace(elidePath(typed), 'TYPED');
    };
    const start = (path: string) =>
      refusal('episode.start', { task: { kind: 'path', path }, agent: 'manual' }, path);
    const passwd = await start('/etc/passwd');
    expect(passwd).toMatch(
      /^task\.path: TYPED is outside the folders stepbox reads files from \(the store\b/,
    );
    // A file that exists, one that does not, one the server may not read: the same words.
    expect(await start('/etc/shadow')).toBe(passwd);
    expect(await start('/etc/no-such-file')).toBe(passwd);
    expect(await start(join(base, 'outside', 'secret.txt'))).toBe(passwd);
    // `..` out of the store, as typed: refused as outside.
    expect(await start(`${store}/../outside/secret.txt`)).toMatch(/^task\.path: TYPED is outside/);
    // Through a symlink in the store: refused as outside too.
    expect(await start(join(store, 'out-task.json'))).toMatch(/^task\.path: TYPED is outside/);
    // A relative path has no folder to be read from.
    expect(await start('../../etc/passwd')).toMatch(/^task\.path: TYPED is a relative path/);
    // batch.start names its tasks the same way.
    expect(
      await refusal(
        'batch.start',
        { tasks: [{ kind: 'path', path: '/etc/passwd' }], agent: 'manual', episodes: 1, concurrency: 1 },
        '/etc/passwd',
      ),
    ).toBe(passwd);
    // Inside the store: started.
    const inside = await post(
      server.port,
      'episode.start',
      { task: { kind: 'path', path: join(store, 'mine', 'task.json') }, agent: 'manual' },
      server.token,
    );
    expect(JSON.parse(inside.body)).toMatchObject({ ok: true });
  });
  it("Choose… in the person's folders: only a file the picker listed and the person chose is read, for that field alone", async () => {
    // Walk 11: a script outside the places could not be started from the window at all. Now the
    // picker browses any folder (as Open… does) and a pick there grants that one file; a typed
    // path, or a start over the API, still reads nothing outside.
    const mine = join(base, 'home-of-person');
    mkdirSync(mine);
    const fix = join(mine, 'fix.jsonl');
    writeFileSync(fix, '{"content":"done"}\n');
    writeFileSync(join(mine, 'other.jsonl'), '{"content":"done"}\n');
    const check = (agent: string) =>
      services.handle('episode.checkStart', { task: { kind: 'sample', id: 't' }, agent });
    const refused = await check(`scripted:${fix}`);
    expect(refused).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    if (!refused.ok)
      expect(refused.error.message).toMatch(
        /^Agent: scripted:\S+ is outside the folders stepbox reads files from \(the task's folder, the store\); pick the file with Choose… → Your folders to let stepbox read it, or give a path inside one of them$/,
      );
    // An API call alone: a grant for a file whose folder the picker never listed is refused.
    expect(await services.handle('files.choose', { field: 'agent', path: fix })).toMatchObject({
      ok: false,
      error: { code: 'invalid_input', message: expect.stringMatching(/was not listed by Choose…/) },
    });
    expect(await check(`scripted:${fix}`)).toMatchObject({ ok: false });
    // The picker lists the person's folder (any absolute folder, names and sizes only).
    const listed = await post(server.port, 'files.list', { root: 'host', path: mine }, server.token);
    expect(JSON.parse(listed.body)).toMatchObject({
      ok: true,
      value: { absolute: mine, entries: [{ name: 'fix.jsonl' }, { name: 'other.jsonl' }] },
    });
    // Chosen for the model field: the Agent field still cannot read it.
    expect(await services.handle('files.choose', { field: 'model', path: fix })).toMatchObject({ ok: true });
    expect(await check(`scripted:${fix}`)).toMatchObject({ ok: false });
    // Chosen for the Agent field: read.
    expect(await services.handle('files.choose', { field: 'agent', path: fix })).toEqual({
      ok: true,
      value: { path: fix },
    });
    expect(await check(`scripted:${fix}`)).toEqual({ ok: true, value: {} });
    // Its neighbour, typed, and a relative way to it: still outside. Nothing else is granted.
    expect(await check(`scripted:${join(mine, 'other.jsonl')}`)).toMatchObject({ ok: false });
    expect(await check(`scripted:${join(mine, 'other.jsonl')}/../fix.jsonl`)).toMatchObject({ ok: true });
    // A file of a folder never listed, and a folder for the Agent field: refused.
    const secret = join(base, 'outside', 'secret.txt');
    const other = await services.handle('files.choose', { field: 'agent', path: secret });
    expect(other).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    expect(JSON.stringify(other)).not.toMatch(/root:x/);
    expect(await services.handle('files.choose', { field: 'agent', path: mine })).toMatchObject({
      ok: false,
    });
  });
});
