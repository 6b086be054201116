import { afterEach, describe, expect, it } from 'vitest';
import { replayVerify } from '../../electron/engine/harness/index.js';
import { SandboxFailure } from '../../electron/engine/sandbox/sandbox.js';
import type { TraceEvent } from '../../shared/trace-events.js';
import {
  call,
  final,
  memorySupply,
  memoryTask,
  ofType,
  tempHome,
  startScripted,
} from '../support/harness.js';

let env: ReturnType<typeof tempHome>;
afterEach(() => env?.cleanup());

/** Replay --verify of `episode` matches its recording: every step, the workspace, the verifier. */
async function expectReplayMatches(episode: string): Promise<void> {
  const report = await replayVerify({
    id: episode,
    store: env.store,
    parts: env.parts,
    supply: memorySupply,
  });
  expect(report).toMatchObject({ diverged_at: null, workspace_diverged_at: null, verifier_match: true });
}

describe('fatal errors and human commands (memory sandbox)', () => {
  it('a sandbox that dies ends the episode with error, its cause, the last tool payloads and the memory', async () => {
    env = tempHome();
    const c = await startScripted(env, { task: memoryTask() }, [
      call('memory_write', { key: 'k', value: 'v' }),
      call('execute_shell', { command: 'echo one' }),
      call('execute_shell', { command: 'echo two' }),
      final('never'),
    ]);
    await c.step();
    await c.step();
    await c.sandbox()!.destroy();
    await c.run();
    expect(c.ended()).toMatchObject({ status: 'error', end_reason: 'sandbox_lost', verifier: null });
    const error = ofType(c.history(), 'error').at(-1)!;
    expect(error.fatal).toBe(true);
    const context = error.context as {
      last_tool_payloads: { name: string }[];
      memory: Record<string, unknown>;
    };
    expect(context.memory).toEqual({ k: 'v' });
    expect(context.last_tool_payloads.map((p) => p.name)).toEqual([
      'memory_write',
      'execute_shell',
      'execute_shell',
    ]);
    await c.dispose();
  });

  it('a snapshot that fails in step 3 is a fatal error of step 3 (not of step 2, the last complete one)', async () => {
    env = tempHome();
    const c = await startScripted(env, { task: memoryTask() }, [
      call('execute_shell', { command: 'echo one > one.txt' }),
      call('execute_shell', { command: 'echo two > two.txt' }),
      call('execute_shell', { command: 'echo three > three.txt' }),
      final('never'),
    ]);
    await c.step();
    await c.step();
    const box = c.sandbox()!;
    box.snapshot = () =>
      Promise.reject(
        new SandboxFailure('snapshot_failed', 'the snapshot of the workspace could not be read'),
      );
    await c.run();
    expect(c.ended()).toMatchObject({ status: 'error', end_reason: 'snapshot_failed', steps: 2 });
    const error = ofType(c.history(), 'error').at(-1)!;
    expect(error).toMatchObject({ step: 3, code: 'snapshot_failed', fatal: true });
    // Step 3's tool ran and is recorded at step 3, beside its error.
    expect(ofType(c.history(), 'tool_result').map((r) => r.step)).toEqual([1, 2, 3]);
    await c.dispose();
  });

  it('human commands are recorded between steps and re-applied by replay --verify', async () => {
    env = tempHome();
    const c = await startScripted(env, { task: memoryTask() }, [
      call('execute_shell', { command: 'echo one > one.txt' }),
      call('execute_shell', { command: 'cat human.txt' }),
      call('write_file', { path: 'done.txt', content: 'ok' }),
      final('done'),
    ]);
    await c.step();
    // What the terminal does: the person's command runs in the sandbox, the hook reports it.
    await c.sandbox()!.exec({ command: 'echo typed > human.txt', timeoutMs: 5_000, fresh: true });
    c.recordHumanCommand({ command: 'echo typed > human.txt', cwd: '/workspace', exit_code: 0 });
    await c.run();
    expect(c.ended()?.status).toBe('succeeded');
    expect(ofType(c.history(), 'human_command')[0]).toMatchObject({ step: 1, source: 'human' });
    expect(ofType(c.history(), 'tool_result')[1].result.stdout).toBe('typed\n');
    await c.dispose();
    await expectReplayMatches(c.episode);
  });

  it('a command typed while a step runs is recorded at once, at the last complete step, and survives a stop right after', async () => {
    env = tempHome();
    const c = await startScripted(env, { task: memoryTask() }, [
      call('execute_shell', { command: 'echo one > one.txt' }),
      call('execute_shell', { command: 'echo two > two.txt' }),
      call('execute_shell', { command: 'echo three' }),
      final('done'),
    ]);
    await c.step();
    // The terminal's hook reports the command while step 2's tool runs (its own tick).
    const typed = new Promise<{ state: string; recorded: number[] }>((resolve) => {
      const off = c.onEvent((e) => {
        if (e.type !== 'tool_call' || e.step !== 2) return;
        off();
        queueMicrotask(() => {
          const state = c.state();
          c.recordHumanCommand({ command: 'echo typed > typed.txt', cwd: '/workspace', exit_code: 0 });
          resolve({ state, recorded: ofType(c.history(), 'human_command').map((h) => h.step) });
        });
      });
    });
    await c.step();
    // In the trace (and so the window) at once, at step 1 (snapshot 1 was the last taken): held
    // for the next step, it reached neither until step 3 began.
    expect(await typed).toEqual({ state: 'running', recorded: [1] });
    await c.stop();
    const trace = env.store.readTrace(env.store.resolve(c.branch));
    expect(trace.events.filter((e) => e.type === 'human_command')).toMatchObject([
      { step: 1, source: 'human', command: 'echo typed > typed.txt' },
    ]);
    await c.dispose();
  });

  /**
   * When, around step 2's snapshot, the terminal reports a command a person ran: `before` the
   * snapshot is taken; `reread` after a read the capture then started over (read again with
   * the command's file); `taken` once the workspace is read, while its content is stored;
   * `answered` once the snapshot answered, before the session did (the helper answers the two
   * in order) and the step is committed; `reported` run and reported by its shell before the
   * snapshot reads the workspace, but recorded only once the snapshot answered (its terminal
   * was still asking the sandbox who else ran: up to WRITERS_WAIT_MS, longer under load).
   */
  type Moment = 'before' | 'reread' | 'taken' | 'answered' | 'reported';

  /**
   * A four-step episode whose step 2's snapshot is wrapped so a person's command
   * (`echo typed > typed.txt`) is reported at `when`; step 3 reads the file. Returns the
   * runner, ended, and its trace as read back.
   */
  async function typedAroundSnapshot(when: Moment) {
    env = tempHome();
    const c = await startScripted(env, { task: memoryTask() }, [
      call('execute_shell', { command: 'echo one > one.txt' }),
      call('execute_shell', { command: 'echo two > two.txt' }),
      call('execute_shell', { command: 'cat typed.txt' }),
      call('write_file', { path: 'done.txt', content: 'ok' }),
      final('done'),
    ]);
    await c.step();
    const box = c.sandbox()!;
    const snapshot = box.snapshot.bind(box);
    const sessionState = box.sessionState.bind(box);
    const type = async () => {
      await box.exec({ command: 'echo typed > typed.txt', timeoutMs: 5_000, fresh: true });
      c.recordHumanCommand({ command: 'echo typed > typed.txt', cwd: '/workspace', exit_code: 0 });
    };
    let answered: Promise<unknown> | null = null;
    let typed: Promise<void> | null = null;
    box.snapshot = async (store, options) => {
      if (c.currentStep() !== 1 || answered) return snapshot(store, options);
      if (when === 'reported') {
        await box.exec({ command: 'echo typed > typed.txt', timeoutMs: 5_000, fresh: true });
        // Registered before the snapshot starts: the memory sandbox reads the workspace at once.
        let recorded = false;
        const asked: { snapshot?: ReturnType<typeof snapshot> } = {};
        const report = Promise.resolve().then(async () => {
          await asked.snapshot;
          await new Promise((resolve) => setImmediate(resolve));
          c.recordHumanCommand({ command: 'echo typed > typed.txt', cwd: '/workspace', exit_code: 0 });
          recorded = true;
        });
        c.awaitHumanReports(() => (recorded ? null : report));
        asked.snapshot = snapshot(store, options);
        answered = asked.snapshot;
        return asked.snapshot;
      }
      if (when === 'before') await type();
      if (when === 'reread') {
        options?.onTaken?.();
        await type();
      }
      const taken =
        when === 'taken'
          ? { ...options, onTaken: () => void (options?.onTaken?.(), (typed ??= type())) }
          : options;
      answered = snapshot(store, taken).then(async (info) => (await typed, info));
      return answered as ReturnType<typeof snapshot>;
    };
    box.sessionState = async () => {
      if (when === 'answered' && answered && !typed) {
        typed = Promise.resolve();
        await answered;
        // Once everything the snapshot's answer set off has run (no timer: the next turn of the loop).
        await new Promise((resolve) => setImmediate(resolve));
        await type();
      }
      return sessionState();
    };
    await c.run();
    expect(c.ended()?.status).toBe('succeeded');
    // Step 3 saw the file either way: the command ran before it.
    expect(ofType(c.history(), 'tool_result')[2].result.stdout).toBe('typed\n');
    await c.dispose();
    const events = env.store.readTrace(env.store.resolve(c.branch)).events;
    const at = (p: (e: TraceEvent) => boolean) => events.findIndex(p);
    return {
      c,
      human: events.filter((e) => e.type === 'human_command'),
      // Where the command is written against step 2's snapshot event.
      afterSnapshot2:
        at((e) => e.type === 'human_command') > at((e) => e.type === 'snapshot' && e.step === 2),
      changed: ofType(events, 'snapshot').map((s) => [s.step, s.changed.map((f) => f.path)]),
    };
  }

  it.each<[Moment, string]>([
    ['taken', "once step 2's snapshot has read the workspace, while it stores it"],
    ['answered', "once step 2's snapshot has answered, before the step is committed"],
  ])("a command reported %s (%s) is step 2's, written after that snapshot, and replays", async (when) => {
    const { c, human, afterSnapshot2, changed } = await typedAroundSnapshot(when);
    // Its file is in step 3's diff, not in snapshot 2. At step 1 (the step not yet committed),
    // replay ran it before step 2 and diverged there.
    expect(human).toMatchObject([{ step: 2, source: 'human', command: 'echo typed > typed.txt' }]);
    expect(afterSnapshot2).toBe(true);
    expect(changed).toEqual([
      [0, []],
      [1, ['one.txt']],
      [2, ['two.txt']],
      [3, ['typed.txt']],
      [4, ['done.txt']],
      [5, []],
    ]);
    await expectReplayMatches(c.episode);
  });

  it.each<[Moment, string]>([
    ['before', 'during step 2, before its snapshot reads the workspace'],
    ['reread', "between two reads of step 2's snapshot (its capture started over)"],
    ['reported', 'by its shell before the read, recorded only after the snapshot answered'],
  ])("a command reported %s (%s) stays step 1's (its file is in snapshot 2), and replays", async (when) => {
    const { c, human, afterSnapshot2, changed } = await typedAroundSnapshot(when);
    expect(human).toMatchObject([{ step: 1, source: 'human' }]);
    expect(afterSnapshot2).toBe(false);
    expect(changed[2]).toEqual([2, ['two.txt', 'typed.txt']]);
    await expectReplayMatches(c.episode);
  });

  it("a command run after step 2's read, recorded while an earlier terminal's report still drains, is step 2's (after its snapshot)", async () => {
    // flake9's drain: everything recorded while a report in flight at the read drained went to
    // the step before, so a second terminal's command run after the read was put a step early.
    env = tempHome();
    const c = await startScripted(env, { task: memoryTask() }, [
      call('execute_shell', { command: 'echo one > one.txt' }),
      call('execute_shell', { command: 'echo two > two.txt' }),
      call('execute_shell', { command: 'cat typed.txt later.txt' }),
      call('write_file', { path: 'done.txt', content: 'ok' }),
      final('done'),
    ]);
    await c.step();
    const box = c.sandbox()!;
    const snapshot = box.snapshot.bind(box);
    let wrapped = false;
    let later: Promise<void> = Promise.resolve();
    box.snapshot = async (store, options) => {
      if (c.currentStep() !== 1 || wrapped) return snapshot(store, options);
      wrapped = true;
      // Terminal A: run and reported by its shell before the read; its report then waits (for
      // the sandbox's answer of who else ran) until terminal B's command is recorded.
      await box.exec({ command: 'echo typed > typed.txt', timeoutMs: 5_000, fresh: true });
      const reportedAt = performance.now();
      let answer!: () => void;
      let recorded = false;
      const report = new Promise<void>((resolve) => (answer = resolve)).then(() => {
        c.recordHumanCommand({
          command: 'echo typed > typed.txt',
          cwd: '/workspace',
          exit_code: 0,
          reportedAt,
        });
        recorded = true;
      });
      c.awaitHumanReports(() => (recorded ? null : report));
      return snapshot(store, {
        ...options,
        onTaken: () => {
          options?.onTaken?.();
          // Terminal B: run after the read, reported and recorded while A's report drains.
          later = box.exec({ command: 'echo later > later.txt', timeoutMs: 5_000, fresh: true }).then(() => {
            c.recordHumanCommand({
              command: 'echo later > later.txt',
              cwd: '/workspace',
              exit_code: 0,
              reportedAt: performance.now(),
            });
            answer();
          });
        },
      });
    };
    await c.run();
    await later;
    expect(c.ended()?.status).toBe('succeeded');
    expect(ofType(c.history(), 'tool_result')[2].result.stdout).toBe('typed\nlater\n');
    await c.dispose();
    const events = env.store.readTrace(env.store.resolve(c.branch)).events;
    const at = (p: (e: TraceEvent) => boolean) => events.findIndex(p);
    const snapshot2 = at((e) => e.type === 'snapshot' && e.step === 2);
    expect(events.filter((e) => e.type === 'human_command')).toMatchObject([
      { step: 1, command: 'echo typed > typed.txt' },
      { step: 2, command: 'echo later > later.txt' },
    ]);
    expect(at((e) => e.type === 'human_command' && e.step === 1)).toBeLessThan(snapshot2);
    expect(at((e) => e.type === 'human_command' && e.step === 2)).toBeGreaterThan(snapshot2);
    // Each file in the diff of the step it is recorded at.
    const changed = ofType(events, 'snapshot').map((e) => [e.step, e.changed.map((f) => f.path)]);
    expect(changed.slice(2, 4)).toEqual([
      [2, ['two.txt', 'typed.txt']],
      [3, ['later.txt']],
    ]);
    await expectReplayMatches(c.episode);
  });

  it('a command held after a snapshot read is still written, at the step before, when that snapshot then fails', async () => {
    env = tempHome();
    const c = await startScripted(env, { task: memoryTask() }, [
      call('execute_shell', { command: 'echo one > one.txt' }),
      call('execute_shell', { command: 'echo two > two.txt' }),
      final('never'),
    ]);
    await c.step();
    c.sandbox()!.snapshot = async (_store, options) => {
      options?.onTaken?.();
      c.recordHumanCommand({ command: 'echo typed', cwd: '/workspace', exit_code: 0 });
      throw new SandboxFailure('snapshot_failed', 'the blobs could not be stored');
    };
    await c.run();
    expect(c.ended()).toMatchObject({ status: 'error', end_reason: 'snapshot_failed', steps: 1 });
    const trace = env.store.readTrace(env.store.resolve(c.branch));
    // Snapshot 2 was never recorded: the command's files are after snapshot 1, so it is step 1's.
    expect(trace.events.filter((e) => e.type === 'human_command')).toMatchObject([
      { step: 1, command: 'echo typed' },
    ]);
    await c.dispose();
  });

  it('a command typed right after a rollback is recorded at once, in the branch that goes on (no step needed)', async () => {
    env = tempHome();
    const c = await startScripted(env, { task: memoryTask() }, [
      call('execute_shell', { command: 'echo one > one.txt' }),
      call('execute_shell', { command: 'echo two > two.txt' }),
      final('done'),
    ]);
    await c.step();
    await c.step();
    const before = c.branch;
    await c.rollbackTo(1);
    await c.sandbox()!.exec({ command: 'echo typed > typed.txt', timeoutMs: 5_000, fresh: true });
    c.recordHumanCommand({
      command: 'echo typed > typed.txt',
      cwd: '/workspace',
      exit_code: 0,
      files: ['typed.txt'],
    });
    // Recorded now, in the new branch's trace on disk: not held for a next step that may never come.
    expect(c.branch).not.toBe(before);
    const trace = env.store.readTrace(env.store.resolve(c.branch));
    expect(trace.events.filter((e) => e.type === 'human_command')).toMatchObject([
      { step: 1, source: 'human', command: 'echo typed > typed.txt', files: ['typed.txt'] },
    ]);
    await c.dispose();
  });
});
