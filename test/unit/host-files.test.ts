// The start form's file picker lists host folders: only inside the task's folder or the
// store, whatever the path says. Tested as an attacker would try it — traversal, encoded
// dots, absolute paths, NUL, symlinks out — directly, through the services and over HTTP.
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, type WebServer } from '../../electron/server/web-server.js';
import { createAppServices, type AppServices } from '../../electron/services/app-services.js';
import { listInside } from '../../electron/services/host-files.js';
import { fakePorts } from '../support/contract-fakes.js';
import { elidePath } from '../../shared/start-paths.js';

/** The task the grants of these tests are for (the sample `t`). */
const T = { kind: 'sample', id: 't' } as const;

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
  /** The app services over the same store: a restart of the app or server. */
  let restarted: () => AppServices;

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
    // A second task, in a folder of its own: a grant for t's starts is not for its.
    mkdirSync(join(base, 'task2'));
    writeFileSync(join(base, 'task2', 'task.json'), '{"name":"t2","goal":"g"}');
    restarted = () => {
      const fake = fakePorts().ports;
      return createAppServices({
        ...fake,
        storeHome: store,
        catalog: {
          ...fake.catalog,
          tasks: async () => [
            { id: 't', name: 't', goal: 'g', path: join(task, 'task.json'), agent: 'scripted:agent.jsonl' },
            { id: 't2', name: 't2', goal: 'g', path: join(base, 'task2', 'task.json'), agent: 'manual' },
          ],
        },
      });
    };
    services = restarted();
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
    expect(await services.handle('files.choose', { field: 'agent', path: fix, task: T })).toMatchObject({
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
    expect(await services.handle('files.choose', { field: 'model', path: fix, task: T })).toMatchObject({
      ok: true,
    });
    expect(await check(`scripted:${fix}`)).toMatchObject({ ok: false });
    // Chosen for the Agent field: read.
    expect(await services.handle('files.choose', { field: 'agent', path: fix, task: T })).toMatchObject({
      ok: true,
      value: { field: 'agent', path: fix, task, task_name: 'task', kind: 'file' },
    });
    expect(await check(`scripted:${fix}`)).toEqual({ ok: true, value: {} });
    // Its neighbour, typed, and a relative way to it: still outside. Nothing else is granted.
    expect(await check(`scripted:${join(mine, 'other.jsonl')}`)).toMatchObject({ ok: false });
    expect(await check(`scripted:${join(mine, 'other.jsonl')}/../fix.jsonl`)).toMatchObject({ ok: true });
    // A file of a folder never listed, and a folder for the Agent field: refused.
    const secret = join(base, 'outside', 'secret.txt');
    const other = await services.handle('files.choose', { field: 'agent', path: secret, task: T });
    expect(other).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    expect(JSON.stringify(other)).not.toMatch(/root:x/);
    expect(await services.handle('files.choose', { field: 'agent', path: mine, task: T })).toMatchObject({
      ok: false,
    });
  });
  it('a grant outlives a restart, holds for its task alone, follows the file it was, and only Choose… writes one', async () => {
    // Grants were kept per field name in memory: a restart forgot them, a reload's card did not
    // know them, and one project's pick let every project read the file.
    const mine = join(base, 'person-2');
    mkdirSync(mine);
    const fix = join(mine, 'fix.jsonl');
    const other = join(mine, 'other.jsonl');
    writeFileSync(fix, '{"content":"done"}\n');
    writeFileSync(other, '{"content":"done"}\n');
    const secret = join(base, 'outside', 'secret.txt');
    const check = (app: AppServices, agent: string, id = 't') =>
      app.handle('episode.checkStart', { task: { kind: 'sample', id }, agent });
    expect(await services.handle('files.list', { root: 'host', path: mine })).toMatchObject({ ok: true });
    expect(await services.handle('files.choose', { field: 'agent', path: fix, task: T })).toMatchObject({
      ok: true,
    });
    expect(await check(services, `scripted:${fix}`)).toEqual({ ok: true, value: {} });
    // Another task's start: refused in the rule's words (a grant is for one task's starts).
    const elsewhere = await check(services, `scripted:${fix}`, 't2');
    expect(elsewhere).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    if (!elsewhere.ok)
      expect(elsewhere.error.message).toMatch(
        /^Agent: scripted:\S+ is outside the folders stepbox reads files from \([^)]*\): it was chosen in Your folders for task only; choose it again for this task with Choose… → Your folders$/,
      );
    // A batch of both tasks reads it for each: refused too.
    const batch = await services.handle('batch.start', {
      tasks: [T, { kind: 'sample', id: 't2' }],
      agent: `scripted:${fix}`,
      episodes: 1,
      concurrency: 1,
    });
    expect(batch).toMatchObject({ ok: false, error: { code: 'invalid_input' } });

    // Kept in the store (0600), sealed: a restart of the app finds it, and lists it for the window.
    const file = join(store, 'chosen-files.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(store, 'chosen-files.key')).mode & 0o777).toBe(0o600);
    let again = restarted();
    expect(await check(again, `scripted:${fix}`)).toEqual({ ok: true, value: {} });
    expect(await check(again, `scripted:${other}`)).toMatchObject({ ok: false });
    expect(await again.handle('files.chosen', {})).toMatchObject({
      ok: true,
      value: {
        chosen: expect.arrayContaining([
          { field: 'agent', path: fix, task, task_name: 'task', kind: 'file', chosen_at: expect.any(Number) },
        ]),
      },
    });
    await again.dispose();

    // Edited by hand: a path the picker never listed, or a grant moved to another task or file,
    // keeps its old seal, which no longer fits: no grant, after a restart too.
    const kept = JSON.parse(readFileSync(file, 'utf8')) as { chosen: Record<string, unknown>[] };
    const mineOf = kept.chosen.find((g) => g.path === fix);
    if (!mineOf) throw new Error('the grant is not in chosen-files.json');
    const forged = [
      { ...mineOf, path: secret, real: secret },
      { ...mineOf, path: other, real: other },
      { ...mineOf, task: join(base, 'task2') },
      { ...mineOf, field: 'model' },
      {
        field: 'agent',
        task,
        task_name: 't',
        path: secret,
        real: secret,
        kind: 'file',
        chosen_at: 1,
        seal: 'x',
      },
    ];
    writeFileSync(file, JSON.stringify({ chosen: [...kept.chosen, ...forged] }));
    again = restarted();
    expect(await check(again, `scripted:${secret}`)).toMatchObject({ ok: false });
    expect(await check(again, `scripted:${other}`)).toMatchObject({ ok: false });
    expect(await check(again, `scripted:${fix}`, 't2')).toMatchObject({ ok: false });
    expect(await check(again, `scripted:${fix}`)).toEqual({ ok: true, value: {} });
    await again.dispose();
    // The key gone (a store copied without it): every grant is void, none widens.
    const key = readFileSync(join(store, 'chosen-files.key'));
    unlinkSync(join(store, 'chosen-files.key'));
    again = restarted();
    expect(await check(again, `scripted:${fix}`)).toMatchObject({ ok: false });
    await again.dispose();
    writeFileSync(join(store, 'chosen-files.key'), key, { mode: 0o600 });

    // The file swapped for a symlink out after the pick: refused as outside, nothing of it said.
    unlinkSync(fix);
    symlinkSync(secret, fix);
    const swapped = await check(services, `scripted:${fix}`);
    expect(swapped).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    expect(JSON.stringify(swapped)).not.toMatch(/root:x/);
    if (!swapped.ok) expect(swapped.error.message).toMatch(/^Agent: scripted:\S+ is outside the folders/);
    // Swapped for a folder: nothing in it is read through the file's grant.
    unlinkSync(fix);
    mkdirSync(fix);
    writeFileSync(join(fix, 'inner.jsonl'), '{"content":"done"}\n');
    expect(await check(services, `scripted:${join(fix, 'inner.jsonl')}`)).toMatchObject({ ok: false });
    rmSync(fix, { recursive: true });
    writeFileSync(fix, '{"content":"done"}\n');
    // Put back as it was (the same real path): read again.
    expect(await check(services, `scripted:${fix}`)).toEqual({ ok: true, value: {} });

    // Forgotten (the field cleared): refused, and after a restart too.
    expect(await services.handle('files.forget', { field: 'agent', path: fix })).toEqual({
      ok: true,
      value: { forgotten: 1 },
    });
    expect(await check(services, `scripted:${fix}`)).toMatchObject({ ok: false });
    again = restarted();
    expect(await check(again, `scripted:${fix}`)).toMatchObject({ ok: false });
    // A new run has listed nothing yet: a choose over the API alone is refused.
    expect(await again.handle('files.choose', { field: 'agent', path: fix, task: T })).toMatchObject({
      ok: false,
      error: { message: expect.stringMatching(/was not listed by Choose…/) },
    });
    await again.dispose();
  });
});

describe("a trace's task folder is where a fork's relative paths resolve, never a place of its own", () => {
  it('a fork of an episode whose trace names a folder outside every place reads nothing there; one of a bundled task does', async () => {
    // An imported trace (a bundle's) may say its task was anywhere: `scripted:secret.txt` on its
    // fork read that folder's file, the recorded folder counting as "the task's folder".
    const base = mkdtempSync(join(tmpdir(), 'stepbox-recorded-'));
    const bundled = join(base, 'bundled', 'hello');
    mkdirSync(bundled, { recursive: true });
    mkdirSync(join(base, 'elsewhere'));
    writeFileSync(join(bundled, 'task.json'), '{"name":"hello","goal":"g"}');
    writeFileSync(join(bundled, 'agent.jsonl'), '{"content":"done"}\n');
    writeFileSync(join(base, 'elsewhere', 'secret.txt'), 'root:x:0:0');
    let recorded = join(base, 'elsewhere', 'task.json');
    const fake = fakePorts().ports;
    const services = createAppServices({
      ...fake,
      bundledDir: join(base, 'bundled'),
      catalog: {
        ...fake.catalog,
        tasks: async () => [
          { id: 'hello', name: 'hello', goal: 'g', path: join(bundled, 'task.json'), agent: 'manual' },
        ],
      },
      harness: {
        ...fake.harness,
        start: async (...args) => {
          const c = await fake.harness.start(...args);
          // What the trace says its task was.
          Object.assign((c as unknown as { header: object }).header, { task_path: recorded });
          return c;
        },
      },
    });
    try {
      const fork = async (agent: string) => {
        const started = await services.handle('episode.start', {
          task: { kind: 'sample', id: 'hello' },
          agent: 'manual',
        });
        if (!started.ok) throw new Error(started.error.message);
        const { branch } = started.value as { branch: string };
        return services.handle('episode.fork', { id: branch, step: 0, agent });
      };
      const refused = await fork('scripted:secret.txt');
      expect(refused).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
      expect(JSON.stringify(refused)).not.toMatch(/root:x/);
      if (!refused.ok)
        expect(refused.error.message).toMatch(
          /^Agent: scripted:secret\.txt resolves to \S+\/elsewhere\/secret\.txt, which is outside the folders stepbox reads files from \(stepbox's bundled files\)/,
        );
      // A trace of the bundled task: its folder is a place anyway, and the relative script is read.
      recorded = join(bundled, 'task.json');
      expect(await fork('scripted:agent.jsonl')).toMatchObject({ ok: true });
    } finally {
      await services.dispose();
      rmSync(base, { recursive: true, force: true });
    }
  });
});
