import { describe, expect, it } from 'vitest';
import { createMemoryProvider, memorySandboxConfig } from '../support/memory-sandbox/provider.js';
import { sandboxConformance } from '../support/sandbox-conformance.js';
import { MemorySnapshotStore } from '../../electron/engine/sandbox/memory-snapshot-store.js';

sandboxConformance('memory', createMemoryProvider, () => new MemorySnapshotStore());

// The shell forms the harness tests use are in the conformance suite, which Docker runs too;
// here only what is particular to the test double.
describe('memory sandbox shell subset', () => {
  const make = () => createMemoryProvider().create(memorySandboxConfig());
  const run = async (command: string) => (await make()).exec({ command, timeoutMs: 5_000 });

  it('refuses pipes and command substitution instead of running them half-understood', async () => {
    const r = await run('echo hi | cat');
    expect(r).toMatchObject({ ok: true, exit_code: 2 });
    expect(r.stderr).toContain("'|' is not supported");
    expect((await run('echo $(id)')).stderr).toContain('$(...) is not supported');
  });

  it('reports a full workspace as disk_full', async () => {
    const s = await createMemoryProvider().create(memorySandboxConfig({ diskBytes: 100 }));
    const r = await s.writeFile('big', new Uint8Array(200));
    expect(r.ok ? 'ok' : r.error.code).toBe('disk_full');
  });
});
