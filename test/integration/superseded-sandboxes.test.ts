// Issue 19, item 5: live sandboxes do not pile up out of sight. A fork that goes on stops
// the live branch it was made from (unless a person views it: a terminal is open into it),
// keeping its trace; a picked candidate leaves no other candidate's sandbox running. Counted
// two ways: the engine's Running list (live branches in library.list) and `docker ps`
// filtered by the stepbox label and this process's owner label.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Result } from '../../shared/result.js';
import { ownerLabel } from '../../electron/engine/docker/owner.js';
import { OWNER_LABEL, STEPBOX_LABEL } from '../../electron/engine/docker/container-spec.js';
import { createAppServices, type AppServices } from '../../electron/services/app-services.js';
import { engineServicesPorts } from '../../electron/services/engine-ports.js';

function value<T>(r: Result<unknown>): T {
  if (!r.ok) throw new Error(`expected ok, got ${r.error.code}: ${r.error.message}`);
  return r.value as T;
}

/** This process's running stepbox containers (the shared engine runs others' too). */
function dockerPs(): string[] {
  return execFileSync(
    'docker',
    ['ps', '-q', '--filter', `label=${STEPBOX_LABEL}`, '--filter', `label=${OWNER_LABEL}=${ownerLabel()}`],
    { encoding: 'utf8' },
  )
    .split('\n')
    .filter(Boolean);
}

interface Listed {
  episodes: {
    branches: { branch: string; live: boolean; status: string | null; end_reason: string | null }[];
  }[];
}

describe('live sandboxes stop when superseded (real engine)', () => {
  let home: string;
  let services: AppServices;

  /** The engine's Running list: every live branch. */
  const running = async (): Promise<string[]> =>
    value<Listed>(await services.handle('library.list', {}))
      .episodes.flatMap((e) => e.branches)
      .filter((b) => b.live)
      .map((b) => b.branch)
      .sort();
  /** `status (end_reason)` of a branch, as the list has it. */
  const statusOf = async (branch: string): Promise<string | null> => {
    const b = value<Listed>(await services.handle('library.list', {}))
      .episodes.flatMap((e) => e.branches)
      .find((x) => x.branch === branch);
    return b ? `${b.status} (${b.end_reason})` : null;
  };

  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), 'stepbox-superseded-'));
    // No warm pool: a released sandbox is destroyed, so `docker ps` counts live branches only.
    services = createAppServices(
      engineServicesPorts({ home, env: { ...process.env, STEPBOX_POOL_SIZE: '0' } }),
    );
  });
  afterAll(async () => {
    await services?.dispose();
    expect(dockerPs()).toEqual([]);
    rmSync(home, { recursive: true, force: true });
  });

  it('a fork that goes on stops the branch it was forked from (trace kept); a viewed one is kept', async () => {
    const a = value<{ branch: string }>(
      await services.handle('episode.start', { task: { kind: 'sample', id: 'hello-python' } }),
    ).branch;
    value(await services.handle('episode.step', { id: a }));
    value(await services.handle('episode.step', { id: a }));
    const b = value<{ branch: string }>(await services.handle('episode.fork', { id: a, step: 1 })).branch;
    expect(await running()).toEqual([a, b].sort());
    expect(dockerPs()).toHaveLength(2);

    // Forked and not yet gone on: both stay (the person may go back to the parent).
    // The fork's first step supersedes the parent: its sandbox stops, its trace stays.
    value(await services.handle('episode.step', { id: b }));
    await services.episodes.settled();
    expect(await running()).toEqual([b]);
    expect(dockerPs()).toHaveLength(1);
    // Said as what happened (the window words it), not as a person's stop.
    expect(await statusOf(a)).toBe('interrupted (superseded_by_fork)');
    const parent = value<{ rows: { step: number }[] }>(await services.handle('episode.open', { id: a }));
    expect(parent.rows.map((r) => r.step)).toContain(2);

    // A branch a person views (a terminal open into it) is not stopped by a fork going on.
    const c = value<{ branch: string }>(await services.handle('episode.fork', { id: b, step: 1 })).branch;
    const term = value<{ terminal: string }>(
      await services.handle('terminal.open', { id: b, cols: 80, rows: 24 }),
    ).terminal;
    value(await services.handle('episode.step', { id: c }));
    await services.episodes.settled();
    expect(await running()).toEqual([b, c].sort());
    expect(dockerPs()).toHaveLength(2);
    value(await services.handle('terminal.close', { terminal: term }));
    value(await services.handle('episode.stop', { id: b }));
    value(await services.handle('episode.stop', { id: c }));
    expect(await running()).toEqual([]);
    expect(dockerPs()).toEqual([]);
  }, 300_000);

  it('picking a candidate leaves only the picked branch running', async () => {
    const a = value<{ branch: string }>(
      await services.handle('episode.start', { task: { kind: 'sample', id: 'hello-python' } }),
    ).branch;
    value(await services.handle('episode.step', { id: a }));
    const call = (command: string) => ({
      tool_calls: [{ function: { name: 'execute_shell', arguments: { command } } }],
    });
    const set = value<{ group: string; candidates: { branch: string }[] }>(
      await services.handle('episode.candidates', {
        id: a,
        step: 1,
        actions: [call('echo one'), call('echo two'), call('echo three')],
      }),
    );
    expect(set.candidates).toHaveLength(3);
    const before = dockerPs().length;
    // The parent and every held candidate have a sandbox.
    expect(before).toBe(4);
    const picked = value<{ branch: string }>(
      await services.handle('episode.pickCandidate', { group: set.group, index: 1 }),
    ).branch;
    expect(picked).toBe(set.candidates[1].branch);
    expect(await running()).toEqual([picked]);
    expect(dockerPs()).toHaveLength(1);
    // The parent went on in the candidate: it says so, not "stopped" as if a person had.
    expect(await statusOf(a)).toBe('interrupted (continued_in_candidate)');
    value(await services.handle('episode.stop', { id: picked }));
    expect(dockerPs()).toEqual([]);
  }, 300_000);
});
