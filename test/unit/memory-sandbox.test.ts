import { describe, expect, it } from 'vitest';
import { createMemoryProvider, memorySandboxConfig } from '../../electron/engine/sandbox/memory-provider.js';
import { sandboxConformance } from '../support/sandbox-conformance.js';
import { MemorySnapshotStore } from '../../electron/engine/sandbox/memory-snapshot-store.js';

sandboxConformance('memory', createMemoryProvider, () => new MemorySnapshotStore());

describe('memory sandbox shell subset', () => {
  const make = () => createMemoryProvider().create(memorySandboxConfig());
  const run = async (command: string) => (await make()).exec({ command, timeoutMs: 5_000 });

  it('sequences with ; && || and expands $? and variables', async () => {
    expect((await run('false || echo rescued; true && echo yes')).stdout).toBe('rescued\nyes\n');
    expect((await run('false; echo $?')).stdout).toBe('1\n');
    expect((await run("A='x y'; echo \"[$A]\" '[$A]' ${A}")).stdout).toBe('[x y] [$A] x y\n');
  });

  it('redirects to files and appends', async () => {
    const s = await make();
    await s.exec({ command: 'echo one > f.txt; echo two >> f.txt; cat nope 2>/dev/null', timeoutMs: 1000 });
    expect((await s.exec({ command: 'cat f.txt', timeoutMs: 1000 })).stdout).toBe('one\ntwo\n');
  });

  it('printf formats %s and %d and escapes', async () => {
    expect((await run("printf '%s=%d\\n' a 1 b 2")).stdout).toBe('a=1\nb=2\n');
  });

  it('refuses pipes and command substitution instead of running them half-understood', async () => {
    const r = await run('echo hi | cat');
    expect(r).toMatchObject({ ok: true, exit_code: 2 });
    expect(r.stderr).toContain("'|' is not supported");
    expect((await run('echo $(id)')).stderr).toContain('$(...) is not supported');
  });

  it('tests files and strings, greps, moves and copies', async () => {
    const s = await make();
    const sh = async (command: string) => (await s.exec({ command, timeoutMs: 1000 })).stdout;
    await sh('echo "ok: 3 passed" > out.txt && mkdir d');
    expect(await sh('test -f out.txt && echo f; [ -d d ] && echo d; [ ! -e nope ] && echo none')).toBe(
      'f\nd\nnone\n',
    );
    expect(await sh('[ "a" = "b" ] || echo differ; test -z "" && echo empty')).toBe('differ\nempty\n');
    expect(
      await sh('grep -q "3 passed" out.txt && echo found; grep -c ok out.txt; grep nothing out.txt; echo $?'),
    ).toBe('found\n1\n1\n');
    expect(await sh('cp out.txt d && mv out.txt moved.txt && ls . d')).toBe(
      '.:\nd\nmoved.txt\n\nd:\nout.txt\n',
    );
    expect((await s.exec({ command: 'mv d d/inner', timeoutMs: 1000 })).exit_code).toBe(1);
  });

  it('reports a full workspace as disk_full', async () => {
    const s = await createMemoryProvider().create(memorySandboxConfig({ diskBytes: 100 }));
    const r = await s.writeFile('big', new Uint8Array(200));
    expect(r.ok ? 'ok' : r.error.code).toBe('disk_full');
  });
});
