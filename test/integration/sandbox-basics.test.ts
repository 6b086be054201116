import { afterEach, beforeEach, expect, it } from 'vitest';
import type { DockerSandbox } from '../../electron/engine/sandbox/docker-sandbox.js';
import { defaultSandboxConfig } from '../../electron/engine/sandbox/limits.js';
import { useTestProvider, describeDocker } from '../support/docker.js';

describeDocker('docker sandbox basics', () => {
  const provider = useTestProvider();
  let sb: DockerSandbox;

  // Each test gets its own sandbox, so none depends on what another left in the session.
  beforeEach(async () => {
    sb = await provider().create(defaultSandboxConfig());
  });

  afterEach(async () => {
    await sb.destroy();
  });

  it('runs a command and reports its output and exit code', async () => {
    const r = await sb.exec({ command: 'echo hi; echo err >&2; exit 3', timeoutMs: 10_000 });
    expect(r).toMatchObject({ ok: true, exit_code: 3, stdout: 'hi\n', stderr: 'err\n', bytes: 7 });
  });

  it('keeps cd and export between calls', async () => {
    await sb.exec({
      command: 'mkdir -p /workspace/d && cd /workspace/d && export FOO="a b"',
      timeoutMs: 10_000,
    });
    const r = await sb.exec({ command: 'pwd; echo "$FOO"', timeoutMs: 10_000 });
    expect(r.stdout).toBe('/workspace/d\na b\n');
    const fresh = await sb.exec({ command: 'pwd; echo "[$FOO]"', timeoutMs: 10_000, fresh: true });
    expect(fresh.stdout).toBe('/workspace\n[]\n');
    expect(await sb.sessionState()).toMatchObject({ cwd: '/workspace/d', env: { FOO: 'a b' } });
  });

  it('keeps exported values byte for byte, and forgets unset ones', async () => {
    await sb.exec({ command: 'export FOO=1', timeoutMs: 10_000 });
    expect((await sb.sessionState()).env).toMatchObject({ FOO: '1' });
    await sb.exec({
      command: `export NL=$'a\\nb' Q='q"u$o\`t\\\\e' C=$'\\x01\\x7f\\t' U="日本" E= GONE=1; unset GONE; export -n FOO`,
      timeoutMs: 10_000,
    });
    const { env } = await sb.sessionState();
    expect(env).toMatchObject({ NL: 'a\nb', Q: 'q"u$o`t\\\\e', C: '\x01\x7f\t', U: '日本', E: '' });
    expect(env).not.toHaveProperty('GONE');
    expect(env).not.toHaveProperty('FOO');
    const r = await sb.exec({
      command: 'printf "%s|" "$NL" "$Q" "$U" "$E" "${GONE-unset}"',
      timeoutMs: 10_000,
    });
    expect(r.stdout).toBe('a\nb|q"u$o`t\\\\e|日本||unset|');
  });

  it('notices an env change after calls that changed nothing (the helper skips unchanged dumps)', async () => {
    for (let i = 0; i < 3; i++) await sb.exec({ command: 'true', timeoutMs: 10_000 });
    await sb.exec({ command: 'export LATE=1', timeoutMs: 10_000 });
    expect((await sb.sessionState()).env).toMatchObject({ LATE: '1' });
    await sb.exec({ command: 'true', timeoutMs: 10_000 });
    await sb.exec({ command: 'unset LATE STEPBOX_CALL', timeoutMs: 10_000 });
    expect((await sb.sessionState()).env).not.toHaveProperty('LATE');
    await sb.setSessionState({ cwd: '/workspace', env: { ...(await sb.sessionState()).env, SET: 'x' } });
    expect((await sb.exec({ command: 'echo "$SET $STEPBOX_CALL"', timeoutMs: 10_000 })).stdout).toMatch(
      /^x \d+\n$/,
    );
  });

  it('a call follows the session through changes, a rollback and fresh calls between them (the helper reuses the start of its script while the session is unchanged)', async () => {
    const run = async (command: string, fresh = false) =>
      (await sb.exec({ command, timeoutMs: 10_000, fresh })).stdout;
    const show = 'echo "${A-none} ${B-none} $PWD"';
    await run('export A=1; cd /tmp');
    expect(await run(show)).toBe('1 none /tmp\n');
    const before = await sb.sessionState();
    expect(await run(show, true)).toBe('none none /workspace\n');
    expect(await run(show)).toBe('1 none /tmp\n');
    await run('export B=2; unset A; cd /workspace');
    expect(await run(show)).toBe('none 2 /workspace\n');
    expect(await run(show, true)).toBe('none none /workspace\n');
    await sb.setSessionState(before);
    expect(await run(show)).toBe('1 none /tmp\n');
    await sb.setSessionState({ ...before, cwd: '/workspace' });
    expect(await run(show)).toBe('1 none /workspace\n');
    await run('unset A');
  });

  it('runs a command longer than a pipe page, quotes and all, and cuts a command at a NUL', async () => {
    const body = 'x\'"$`\\'.repeat(2000);
    const big = await sb.exec({ command: `cat <<'EOF' | wc -c\n${body}\nEOF`, timeoutMs: 10_000 });
    expect(big).toMatchObject({ ok: true, exit_code: 0, stdout: `${body.length + 1}\n` });
    expect((await sb.exec({ command: 'echo before\0echo after', timeoutMs: 10_000 })).stdout).toBe(
      'before\n',
    );
    expect((await sb.exec({ command: 'if then', timeoutMs: 10_000 })).stderr).toMatch(
      /^bash: eval: line 1: /,
    );
  });

  it('reads, writes and lists files with error codes', async () => {
    expect(await sb.writeFile('x/y.txt', new TextEncoder().encode('hello'))).toEqual({
      ok: true,
      value: { bytes: 5 },
    });
    const read = await sb.readFile('/workspace/x/y.txt');
    expect(read.ok && new TextDecoder().decode(read.value)).toBe('hello');
    expect(await sb.listDir('x')).toEqual({ ok: true, value: [{ name: 'y.txt', type: 'file', size: 5 }] });
    expect(await sb.readFile('nope')).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect(await sb.readFile('x')).toMatchObject({ ok: false, error: { code: 'is_directory' } });
    expect(await sb.listDir('x/y.txt')).toMatchObject({ ok: false, error: { code: 'not_a_directory' } });
    // Neither a FIFO nor an endless device may hang the helper.
    await sb.exec({ command: 'mkfifo /workspace/fifo', timeoutMs: 10_000 });
    expect(await sb.readFile('fifo')).toMatchObject({ ok: false, error: { code: 'tool_failed' } });
    expect(await sb.writeFile('fifo', new Uint8Array([1]))).toMatchObject({
      ok: false,
      error: { code: 'tool_failed' },
    });
    expect(await sb.readFile('/dev/zero')).toMatchObject({ ok: false, error: { code: 'tool_failed' } });
    expect(await sb.writeFile('/etc/passwd', new Uint8Array([1]))).toMatchObject({
      ok: false,
      error: { code: 'permission_denied' },
    });
  });
});
