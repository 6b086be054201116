import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJsonOutput, runCli } from '../support/cli.js';

interface DoctorJson {
  ok: boolean;
  checks: { id: string; ok: boolean; detail: string; fix: string }[];
  store: { path: string; bytes: number };
}

describe('stepbox doctor', () => {
  let home: string;
  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), 'stepbox-doctor-'));
    writeFileSync(join(home, 'blob'), Buffer.alloc(12_345));
  });
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it('passes every check against the running engine and reports the store', async () => {
    const run = await runCli(['doctor', '--json'], { env: { STEPBOX_HOME: home } });
    const report = parseJsonOutput<DoctorJson>(run);
    expect(run.code, run.stderr).toBe(0);
    expect(report.ok).toBe(true);
    expect(report.checks.map((c) => c.id)).toEqual(['docker', 'image', 'image_version', 'sandbox', 'store']);
    for (const c of report.checks)
      expect(c).toEqual({ id: c.id, ok: true, detail: expect.any(String), fix: '' });
    expect(report.store).toEqual({ path: home, bytes: 12_345 });
  });

  it('exits 3 fast with the docker check failing and a fix when the engine refuses connections', async () => {
    const run = await runCli(['doctor', '--json'], {
      env: { DOCKER_HOST: 'tcp://127.0.0.1:1', STEPBOX_HOME: home },
    });
    const report = parseJsonOutput<DoctorJson>(run);
    expect(run.code).toBe(3);
    expect(report.ok).toBe(false);
    const docker = report.checks.find((c) => c.id === 'docker');
    expect(docker).toMatchObject({ ok: false, detail: expect.stringContaining('127.0.0.1:1') });
    expect(docker?.fix).toMatch(/DOCKER_HOST/);
    expect(report.checks.find((c) => c.id === 'sandbox')?.ok).toBe(false);
    expect(run.durationMs).toBeLessThan(10_000);
  });

  describe('against an engine that never answers', () => {
    let server: Server;
    const sockets: Socket[] = [];
    let port = 0;
    beforeAll(async () => {
      server = createServer((s) => sockets.push(s));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as { port: number }).port;
    });
    afterAll(async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    });

    it('gives up within its bound and explains in plain text', async () => {
      const run = await runCli(['doctor'], {
        env: { DOCKER_HOST: `tcp://127.0.0.1:${port}`, STEPBOX_HOME: home },
      });
      expect(run.code).toBe(3);
      expect(run.stdout).toMatch(/FAIL\s+docker\s+Docker is unreachable .*no answer within 3 s/);
      expect(run.stdout).toMatch(/fix: start the engine at DOCKER_HOST=/);
      // The store is said once, by its check (npm start printed a second "store: 0 B in …" line).
      expect(run.stdout.split('\n').filter((line) => line.includes(home))).toEqual([
        expect.stringMatching(/^ok\s+store\s+12\.1 KiB in /),
      ]);
      expect(run.stderr).toMatch(/docker.*failed/);
      expect(run.durationMs).toBeLessThan(10_000);
    });
  });

  describe('against an engine without the right image', () => {
    /** A stand-in Docker API on loopback: answers ping and version, and has the image with `label` (or none). */
    const fakeEngine = async (label: string | null) => {
      const server = createHttpServer((req, res) => {
        const json = (code: number, body: unknown) =>
          res.writeHead(code, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
        if (req.url?.endsWith('/_ping')) return res.writeHead(200).end('OK');
        if (req.url?.endsWith('/version')) return json(200, { Version: '99.0-fake', ApiVersion: '1.41' });
        if (req.url?.includes('/images/') && label !== null)
          return json(200, { Config: { Labels: { 'stepbox.image.version': label } } });
        return json(404, { message: 'No such image' });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return { server, host: `tcp://127.0.0.1:${(server.address() as { port: number }).port}` };
    };

    it('fails the image check with `npx stepbox image build` when the image is missing', async () => {
      const { server, host } = await fakeEngine(null);
      try {
        const run = await runCli(['doctor', '--json'], { env: { DOCKER_HOST: host, STEPBOX_HOME: home } });
        const report = parseJsonOutput<DoctorJson>(run);
        expect(run.code).toBe(3);
        expect(report.checks.find((c) => c.id === 'docker')).toMatchObject({ ok: true });
        expect(report.checks.find((c) => c.id === 'image')).toMatchObject({
          ok: false,
          fix: 'npx stepbox image build',
        });
        expect(report.checks.find((c) => c.id === 'sandbox')?.ok).toBe(false);
      } finally {
        server.close();
      }
    });

    it('fails the image_version check when the label is outdated', async () => {
      const { server, host } = await fakeEngine('0');
      try {
        const run = await runCli(['doctor'], { env: { DOCKER_HOST: host, STEPBOX_HOME: home } });
        expect(run.code).toBe(3);
        expect(run.stdout).toMatch(/ok\s+image\s/);
        expect(run.stdout).toMatch(
          /FAIL\s+image_version\s+label stepbox.image.version=0.*\n\s+fix: npx stepbox image build/,
        );
      } finally {
        server.close();
      }
    });
  });

  it('rejects an unknown flag as a usage error', async () => {
    const run = await runCli(['doctor', '--bogus']);
    expect(run.code).toBe(2);
  });
});
