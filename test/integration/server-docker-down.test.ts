// With Docker unreachable, web mode stays up and every answer says what is wrong and
// the command that fixes it (the doctor's fix text), instead of hanging or crashing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, assert, beforeAll, describe, expect, it } from 'vitest';
import { createClient, createMemoryTransport, type StepboxClient } from '../../shared/contract/index.js';
import { startServer, type RunningServer } from '../../electron/server.js';

describe('web mode with Docker unreachable', () => {
  let home: string;
  let server: RunningServer;
  let client: StepboxClient;
  const saved = process.env.DOCKER_HOST;

  beforeAll(async () => {
    // Nothing listens on port 1: the engine is unreachable, fast.
    process.env.DOCKER_HOST = 'tcp://127.0.0.1:1';
    home = mkdtempSync(join(tmpdir(), 'stepbox-nodocker-'));
    server = await startServer({ port: 0, home });
    client = createClient(createMemoryTransport(server.services));
  });
  afterAll(async () => {
    await server?.close();
    if (saved === undefined) delete process.env.DOCKER_HOST;
    else process.env.DOCKER_HOST = saved;
    rmSync(home, { recursive: true, force: true });
  });

  it('reports Docker down with its fix in sandbox.info, doctor and episode.start', async () => {
    const info = await client.sandbox.info({});
    expect(info).toMatchObject({ ok: true, value: { docker: { ok: false }, sandbox: null } });
    assert(info.ok);
    expect(info.value.docker.message).toContain('127.0.0.1:1');
    expect(info.value.docker.fix).toContain('DOCKER_HOST');

    // The doctor itself answers (ok: true); what it reports is that Docker is down.
    const doctor = await client.system.doctor();
    expect(doctor).toMatchObject({ ok: true, value: { ok: false } });
    assert(doctor.ok);
    expect(doctor.value.checks.find((c) => c.name === 'docker')).toMatchObject({
      ok: false,
      fix: expect.stringContaining('DOCKER_HOST'),
    });

    const started = await client.episode.start({ task: { kind: 'sample', id: 'hello-python' } });
    expect(started).toMatchObject({ ok: false, error: { code: 'docker_unreachable' } });
    assert(!started.ok);
    expect(started.error.message).toMatch(/Fix: .*DOCKER_HOST/);

    // The library and the cases do not need Docker.
    expect((await client.library.list({})).ok).toBe(true);
    expect((await client.cases.list()).ok).toBe(true);
    const health = await fetch(new URL(`/api/health?token=${server.token}`, server.url));
    expect(health.status).toBe(200);
  });
});
