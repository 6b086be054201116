import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { validateFineTuneRecord } from '../../electron/engine/export/openai-jsonl.js';
import type { OtlpTraces } from '../../electron/engine/export/otel-json.js';
import type { BatchFile } from '../../electron/engine/batch/batch-file.js';
import { readTraceFile } from '../../electron/engine/trace/trace-reader.js';
import { parseJsonOutput, runCli, startCli, waitFor } from '../support/cli.js';
import { describeDocker } from '../support/docker.js';
import { call, final, script, tempHome } from '../support/harness.js';

let env: ReturnType<typeof tempHome>;
beforeAll(() => {
  env = tempHome();
});
afterAll(() => env?.cleanup());

function readBatch(dir: string): BatchFile | null {
  try {
    return JSON.parse(readFileSync(join(dir, 'batch.json'), 'utf8')) as BatchFile;
  } catch {
    return null;
  }
}

describeDocker('batch: interrupted, resumed, reported and exported', () => {
  it('loses and duplicates no episode, and the report and all three exports hold the batch', async () => {
    const taskPath = join(env.dir, 'task.json');
    writeFileSync(
      taskPath,
      JSON.stringify({
        name: 'count-to-three',
        goal: 'Write 1, 2 and 3 to count.txt, one per line',
        verifier: { command: 'test "$(cat count.txt)" = "$(printf "1\\n2\\n3")"' },
      }),
    );
    const agent = script(env.dir, 'agent.jsonl', [
      call('execute_shell', { command: 'echo 1 > count.txt' }),
      call('execute_shell', { command: 'sleep 0.4; echo 2 >> count.txt' }),
      call('write_file', { path: 'notes.md', content: 'half way' }),
      call('execute_shell', { command: 'echo 3 >> count.txt; cat count.txt' }),
      final('count.txt holds 1, 2 and 3'),
    ]);
    const dir = join(env.dir, 'batch');
    const home = { STEPBOX_HOME: env.home };
    const child = startCli(
      [
        'batch',
        taskPath,
        '--agent',
        `scripted:${agent}`,
        '--episodes',
        '6',
        '--concurrency',
        '2',
        '--out',
        dir,
      ],
      { env: home, timeoutMs: 240_000 },
    );
    // Kill it hard once some slots are done and another is mid-episode.
    await waitFor(
      'two finished slots and one running',
      () => {
        const b = readBatch(dir);
        if (!b) return null;
        const done = b.slots.filter((s) => s.status !== null).length;
        const running = b.slots.filter(
          (s) => s.status === null && s.episode !== null && existsSync(join(env.home, 'episodes', s.episode)),
        ).length;
        return done >= 2 && running >= 1 && done < 6 ? true : null;
      },
      180_000,
    );
    child.child.kill('SIGKILL');
    await child.done;
    const cut = readBatch(dir)!;
    // A slot's id is recorded before its episode exists: the cut-off ones are those the store holds.
    const partial = cut.slots
      .filter((s) => s.status === null && s.episode !== null)
      .map((s) => s.episode!)
      .filter((ep) => existsSync(join(env.home, 'episodes', ep)));
    const finishedBefore = cut.slots.filter((s) => s.status !== null).map((s) => [s.index, s.episode]);
    expect(partial.length).toBeGreaterThan(0);

    const resumed = await runCli(['batch', '--resume', dir, '--json'], { env: home, timeoutMs: 240_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    const out = parseJsonOutput<{ slots: BatchFile['slots'] }>(resumed);
    const after = readBatch(dir)!;
    expect(out.slots).toEqual(after.slots);
    // Nothing duplicated: six slots, six distinct episodes, all succeeded; finished slots untouched.
    const episodes = after.slots.map((s) => s.episode);
    expect(new Set(episodes).size).toBe(6);
    expect(after.slots.every((s) => s.status === 'succeeded')).toBe(true);
    for (const [index, episode] of finishedBefore) expect(after.slots[index as number].episode).toBe(episode);
    // Nothing lost: every episode in the store is a slot's or a superseded one, and the cut-off ones are kept as interrupted.
    const superseded = after.slots.flatMap((s) => s.superseded);
    // Exactly the cut-off episodes: an id recorded for an episode never created is not kept.
    expect(superseded.sort()).toEqual([...partial].sort());
    const stored = readdirSync(join(env.home, 'episodes')).filter((e) => e.startsWith('ep-'));
    expect(stored.sort()).toEqual([...episodes, ...superseded].sort() as string[]);
    for (const ep of superseded) {
      const path = join(env.home, 'episodes', ep, 'branches', `${ep}.jsonl.gz`);
      const plain = path.replace(/\.gz$/, '');
      // An episode comes to exist whole (meta and header): a superseded one always has its trace.
      expect(existsSync(path) || existsSync(plain), ep).toBe(true);
      const trace = readTraceFile(existsSync(path) ? path : plain);
      expect(trace.end?.status).toBe('interrupted');
      expect(episodes).not.toContain(ep);
    }

    // A fork of one episode with a worse agent (it fails).
    const worse = script(env.dir, 'worse.jsonl', [
      call('execute_shell', { command: 'echo 9 >> count.txt' }),
      final('done'),
    ]);
    const fork = await runCli(['fork', episodes[0]!, '--at', '1', '--agent', `scripted:${worse}`, '--json'], {
      env: home,
    });
    expect(fork.code, fork.stderr).toBe(1);

    // The report: one self-contained file with the batch's numbers.
    const html = join(env.dir, 'report.html');
    const rep = await runCli(['report', dir, '--out', html], { env: home });
    expect(rep.code, rep.stderr).toBe(0);
    const page = readFileSync(html, 'utf8');
    expect(page).toContain('100.0%');
    expect(page).not.toMatch(/https?:\/\//);
    expect(page).not.toMatch(/<script|<link/);
    expect((page.match(/<svg /g) ?? []).length).toBeGreaterThanOrEqual(4);

    // OpenAI fine-tuning JSONL: valid by the rules, quality in the sidecar.
    const ft = join(env.dir, 'ft.jsonl');
    // By default only succeeded episodes are training data: the failed fork is left out.
    const ftDefault = await runCli(['export', dir, '--format', 'openai-jsonl', '--out', ft], { env: home });
    expect(ftDefault.code, ftDefault.stderr).toBe(0);
    expect(readFileSync(ft, 'utf8').trim().split('\n')).toHaveLength(6);
    const ftRun = await runCli(['export', dir, '--format', 'openai-jsonl', '--out', ft, '--include-failed'], {
      env: home,
    });
    expect(ftRun.code, ftRun.stderr).toBe(0);
    const records = readFileSync(ft, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const meta = readFileSync(join(env.dir, 'ft.meta.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    // Six batch episodes plus the fork (with the parent's step 1 before its own).
    expect(records).toHaveLength(7);
    expect(meta).toHaveLength(records.length);
    records.forEach((r, i) => {
      const main = meta[i].branch === meta[i].episode;
      expect(validateFineTuneRecord(r)).toEqual([]);
      for (const m of r.messages) if ('weight' in m) expect([0, 1]).toContain(m.weight);
      const calls = r.messages.flatMap(
        (m: { tool_calls?: { function: { arguments: unknown } }[] }) => m.tool_calls ?? [],
      );
      expect(calls.length).toBe(main ? 4 : 2);
      for (const c of calls) expect(typeof c.function.arguments).toBe('string');
      expect(meta[i].quality).toBeGreaterThan(main ? 0.9 : 0);
    });

    // OTLP JSON parsed back: every span's parent exists and has the right operation.
    const otel = join(env.dir, 'otel.json');
    const otelRun = await runCli(['export', dir, '--format', 'otel-json', '--out', otel], { env: home });
    expect(otelRun.code, otelRun.stderr).toBe(0);
    const doc = JSON.parse(readFileSync(otel, 'utf8')) as OtlpTraces;
    const spans = doc.resourceSpans[0].scopeSpans[0].spans;
    const op = (s: (typeof spans)[number]) =>
      (s.attributes.find((a) => a.key === 'gen_ai.operation.name')!.value as { stringValue: string })
        .stringValue;
    const byId = new Map(spans.map((s) => [`${s.traceId}/${s.spanId}`, s]));
    const roots = spans.filter((s) => op(s) === 'invoke_agent');
    expect(roots.length).toBeGreaterThanOrEqual(6);
    for (const s of spans) {
      expect(s.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(s.spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(s.startTimeUnixNano).toMatch(/^\d{19}$/);
      const parent = s.parentSpanId ? byId.get(`${s.traceId}/${s.parentSpanId}`) : undefined;
      if (op(s) === 'invoke_agent') expect(s.parentSpanId).toBeUndefined();
      if (op(s) === 'chat') expect(op(parent!)).toBe('invoke_agent');
      if (op(s) === 'execute_tool') {
        expect(op(parent!)).toBe('chat');
        expect(s.attributes.map((a) => a.key)).toEqual(
          expect.arrayContaining(['gen_ai.tool.name', 'gen_ai.tool.call.id']),
        );
      }
    }

    // Preference pairs come only from a person's choice or correction: a fork that merely
    // swapped the agent is neither, so the batch gives none (candidates-compare tests the pairs).
    const dpo = join(env.dir, 'dpo.jsonl');
    const d = await runCli(['export', dir, '--format', 'dpo-jsonl', '--out', dpo, '--json'], { env: home });
    expect(parseJsonOutput<{ count: number }>(d).count).toBe(0);
  }, 600_000); // A loaded CI machine (2 cores, load ~7, a CPU hog beside it) takes minutes.
});
