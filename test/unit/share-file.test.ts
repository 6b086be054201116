import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { writeLongTrace } from '../../electron/bench/ui-trace.js';
import { parseRedactions, redactValue } from '../../electron/engine/export/redact.js';
import { openEngine } from '../../electron/engine/open-engine.js';
import { shareData } from '../../electron/engine/share/share-data.js';
import { shareHtml } from '../../electron/engine/share/share-html.js';
import { hostPlaces, sharedAgentSpec } from '../../electron/engine/share/host-paths.js';
import { SANDBOX_IMAGE } from '../../shared/constants.js';
import { runCli } from '../support/cli.js';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { writeSampleEpisode } from '../support/traces.js';
import { LONG_TEXT_HEAD, LONG_TEXT_TAIL } from '../../shared/long-text.js';
import type { SharedStep } from '../../electron/engine/share/share-data.js';

/** The JSON documents a share file embeds (the index, then the step chunks). */
function embedded(html: string): unknown[] {
  return [...html.matchAll(/<script type="application\/octet-stream"[^>]*>([^<]*)<\/script>/g)].map((m) =>
    JSON.parse(gunzipSync(Buffer.from(m[1], 'base64')).toString('utf8')),
  );
}

describe('--redact @secrets', () => {
  const secrets = parseRedactions(['@secrets']);
  it('hides keys, tokens and passwords, the value only', () => {
    const shared: readonly (readonly [string, string])[] = [
      ['export OPENAI_API_KEY=sk-proj-abcdefghij0123456789XYZ', 'export OPENAI_API_KEY=[REDACTED]'],
      [
        'git clone https://ghp_0123456789abcdefghijABCDEFGHIJ@github.com/x',
        'git clone https://[REDACTED]@github.com/x',
      ],
      ['Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc.def', 'Authorization: Bearer [REDACTED]'],
      ['aws_access_key_id = AKIAABCDEFGHIJKLMNOP', 'aws_access_key_id = [REDACTED]'],
      ['mysql --password=hunter2 -e "select 1"', 'mysql --password=[REDACTED] -e "select 1"'],
      ['{"api_key": "abc123def"}', '{"api_key": "[REDACTED]"}'],
    ];
    for (const [text, redacted] of shared) expect(redactValue(text, secrets)).toBe(redacted);
  });
  it('reads a megabyte of blanks after each name once, not once per position (recorded text is untrusted)', () => {
    // As lookbehinds these took minutes (quadratic: 40,000 blanks a second); the test's own
    // time limit is the bound, no clock is read.
    for (const blanks of [' ', '\t', '\n', ' \t\n']) {
      const run = blanks.repeat(Math.ceil(1_000_000 / blanks.length));
      for (const name of ['Bearer', 'password', 'api_key=', 'x'])
        expect(redactValue(`${name}${run}value0123456789abcdef`, secrets)).toMatch(
          /value0123456789abcdef$|\[REDACTED\]$/,
        );
    }
    expect(redactValue(`Bearer${' '.repeat(100_000)}abcdefghijklmnop0123`, secrets)).toMatch(
      / \[REDACTED\]$/,
    );
  });
  it('leaves harmless text as it was (a share read "still prints [REDACTED]")', () => {
    for (const text of [
      'Remove the stale build output in build/, then check that `python3 src/app.py` still prints ready.',
      'the token budget ran out; a password reset page; keyboard shortcuts',
      'task-runner and sk-1 are short names',
    ])
      expect(redactValue(text, secrets)).toBe(text);
  });
});

describe('stepbox share: the file', () => {
  it('embeds every step in chunks behind a CSP that forbids fetching anything, and redacts like export', async () => {
    const home = mkdtempSync(join(tmpdir(), 'stepbox-share-unit-'));
    const trace = await writeLongTrace(home, 1_200);
    const { store } = openEngine({ home, sweep: false });
    const data = await shareData(store, trace.branch, parseRedactions(['/counter/']));
    expect(data.steps.length).toBe(1_201);
    expect(data.redacted).toBe(true);
    const html = shareHtml(data);
    // The one inline script runs by its hash: no 'unsafe-inline' for scripts.
    const viewer = /<script>([\s\S]*?)<\/script>/.exec(html)?.[1] ?? '';
    const hash = createHash('sha256').update(viewer, 'utf8').digest('base64');
    expect(html).toContain(
      `content="default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-${hash}'; img-src data:"`,
    );
    expect(html.match(/<script(?![^>]*application\/octet-stream)[^>]*>/g)).toEqual(['<script>']);
    expect(html).not.toMatch(/script-src[^;"]*unsafe-inline/);
    // Nothing outside the file: no src= or href= to anywhere, no URL the viewer could load.
    expect(html).not.toMatch(/\s(src|href)="(?!#)/);
    const [index, ...chunks] = embedded(html) as [{ steps: { step: number }[] }, ...{ step: number }[][]];
    expect(index.steps).toHaveLength(1_201);
    expect(chunks.map((c) => [c[0].step, c[c.length - 1].step])).toEqual([
      [0, 499],
      [500, 999],
      [1000, 1200],
    ]);
    // The pattern is gone from everything embedded (the long trace writes counter.txt each step).
    expect(JSON.stringify(chunks)).not.toMatch(/counter/);
    expect(JSON.stringify(chunks)).toContain('[REDACTED]');
    // A call's time in the window's words (shared/format-duration.ts), not a raw number of ms.
    const results = chunks.flat().flatMap((s) => (s as { results?: { duration?: unknown }[] }).results ?? []);
    expect(results.length).toBeGreaterThan(1_000);
    for (const r of results) expect(r.duration).toMatch(/^\d+(\.\d)? ms$|^\d\.\d\d s$/);
  });

  it('strips control sequences from everything it shows: ESC/CSI colours, OSC-8 links, bidi overrides, C1', async () => {
    const home = mkdtempSync(join(tmpdir(), 'stepbox-share-unit-'));
    const trace = await writeLongTrace(home, 3);
    const { store } = openEngine({ home, sweep: false });
    const data = await shareData(store, trace.branch, parseRedactions([]));
    const hostile =
      '\u001b]8;;https://evil.example/\u0007click me\u001b]8;;\u0007 \u001b[31mred\u001b[0m \u202etxt.exe\u2066 \u009b2J\u0007\u0008 done';
    const planted = {
      ...data,
      task: { ...data.task, name: `task ${hostile}`, goal: hostile },
      steps: data.steps.map((s, i) => (i === 1 ? { ...s, action: hostile, [`key ${hostile}`]: hostile } : s)),
    };
    const html = shareHtml(planted);
    const all = JSON.stringify(embedded(html)) + html.replace(/<script[\s\S]*?<\/script>/g, '');
    // eslint-disable-next-line no-control-regex -- looking for control characters is the point
    expect(all).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(JSON.stringify(embedded(html))).not.toMatch(/\\u001b|\\u009b|\\u202e|evil\.example/);
    const index = embedded(html)[0] as { steps: { action: string }[]; task: { goal: string } };
    expect(index.steps[1].action).toBe('click me red txt.exe  done');
    expect(index.task.goal).toBe('click me red txt.exe  done');
  });

  it("carries no absolute path of the machine it was made on (agent spec, task folder, store, anyone's home), nor a token", async () => {
    const home = mkdtempSync(join(tmpdir(), 'stepbox-share-unit-'));
    const { store } = openEngine({ home, sweep: false });
    const folder = '/home/alice/projects/weather-bot';
    const script = '/home/alice/agents/answers.jsonl';
    const { branch, writer } = store.createEpisode({
      task: { name: 'weather-bot', goal: `Fix ${folder}/app.py`, workspace: { from: folder } },
      task_path: `${folder}/task.json`,
      agent: { spec: `scripted:${script}`, kind: 'scripted', path: script },
      image: SANDBOX_IMAGE,
      created: Date.now(),
      parent_branch: null,
      fork_step: null,
    });
    const snapshot = (step: number) =>
      writer.append({
        type: 'snapshot',
        step,
        source: 'harness',
        tree_hash: 'h',
        manifest: 'm',
        changed: [],
        bytes: 0,
      });
    snapshot(0);
    writer.commitStep();
    writer.append({
      type: 'model_request',
      step: 1,
      source: 'agent',
      request: {
        messages: [
          { role: 'system', content: `cwd ${folder}; also /Users/alice/bot and C:\\Users\\alice\\bot` },
        ],
        headers: { authorization: 'Bearer abcdefghijklmnopqrstuvwxyz012345' },
      },
    });
    const raw = `I will read ${folder}/notes.md and ${home}/cases/weather/README.md`;
    const out = writer.append({ type: 'model_output', step: 1, source: 'agent', raw, usage: null });
    const command = 'cat /home/agent/.profile /workspace/app.py';
    const calls = [{ id: 'c1', name: 'execute_shell', arguments: { command } }];
    writer.append({ type: 'action', step: 1, source: 'agent', cause: out.seq, calls, final: null });
    const call = writer.append({
      type: 'tool_call',
      step: 1,
      source: 'agent',
      call_id: 'c1',
      name: 'execute_shell',
      arguments: { command },
    });
    writer.append({
      type: 'tool_result',
      step: 1,
      source: 'environment',
      cause: call.seq,
      call_id: 'c1',
      name: 'execute_shell',
      result: {
        ok: true,
        exit_code: 0,
        stdout: 'HOME=/home/agent\n/workspace/app.py\n',
        stderr: 'OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123\n',
        duration_ms: 3,
        bytes: 60,
      },
    });
    writer.append({
      type: 'error',
      step: 1,
      source: 'harness',
      code: 'agent_error',
      message: `${script}: no line 2 (copied to ${home}/cases/weather/answers.jsonl)`,
      fatal: false,
    });
    snapshot(1);
    writer.commitStep();
    await writer.close({
      status: 'failed',
      end_reason: 'max_steps',
      verifier: null,
      steps: 1,
      return: 0,
      step: 1,
    });

    const data = await shareData(store, branch, parseRedactions([]));
    const html = shareHtml(data);
    const json = JSON.stringify(embedded(html));
    for (const text of [html, json]) {
      expect(text).not.toMatch(/alice/);
      expect(text).not.toContain(home);
      expect(text).not.toMatch(/abcdefghijklmnop/);
    }
    // One step is "1 step" (it said "1 steps"), worded by the one count helper.
    expect(html).toMatch(/data-testid="share-count">1 step · \d+ QA flags?</);
    // Every absolute path left is the sandbox's: the episode itself.
    const absolute = [...json.matchAll(/(?<![\w.~$-])\/[\w.-]+(?:\/[\w.-]+)*/g)].map((m) => m[0]);
    expect(absolute.length).toBeGreaterThan(0);
    for (const p of absolute) expect(p, `${p} in the share`).toMatch(/^\/(workspace|home\/agent)(\/|$)/);
    // The agent from the folder it is in (pathForPeople, as the window says it); the task's folder by its own name.
    expect(data.agent).toBe('scripted:agents/answers.jsonl');
    expect(data.task.goal).toBe('Fix weather-bot/app.py');
    const step1 = (
      embedded(html)[1] as {
        step: number;
        request?: { messages: { content: string }[] };
        errors?: { message: string }[];
        results?: { stdout?: string }[];
      }[]
    ).find((x) => x.step === 1);
    expect(step1?.request?.messages[0].content).toBe('cwd weather-bot; also ~/bot and ~\\bot');
    expect(step1?.errors?.[0].message).toBe(
      '~/agents/answers.jsonl: no line 2 (copied to $STEPBOX_HOME/cases/weather/answers.jsonl)',
    );
    expect(step1?.results?.[0].stdout).toBe('HOME=/home/agent\n/workspace/app.py\n');
    // Its status as the window's header says it: failed in words; a success QA flagged in amber,
    // "succeeded · ⚑ flagged", not a green "succeeded — …" beside "1 QA flag".
    expect(html).toContain(
      'class="status failed" data-testid="share-status" title="end reason: max_steps">failed — ',
    );
    const end = data.end ?? expect.fail('no end');
    const flagged = shareHtml({
      ...data,
      end: { ...end, status: 'succeeded', words: 'the agent gave its final answer' },
      flags: [
        { step: 1, rule: 'fallback_overuse', severity: 'warning', message: 'm', label: 'Fallback overuse' },
      ],
    } as unknown as typeof data);
    expect(flagged).toMatch(
      /class="status flagged" data-testid="share-status" title="[^"]*QA flagged it[^"]*">succeeded · ⚑ flagged — the agent gave its final answer</,
    );
  });

  it('says the agent spec as the window says its paths: the task folder, $STEPBOX_HOME, the folder a script is in', () => {
    const header = {
      task_path: '/work/main/resources/tasks/hello-python/task.json',
      task: {},
    } as unknown as Parameters<typeof hostPlaces>[0];
    const places = hostPlaces(header, '/tmp/stepbox-e2e-LdTQTU', '/root');
    expect(sharedAgentSpec('scripted:/work/main/resources/tasks/hello-python/agent.jsonl', places)).toBe(
      'scripted:hello-python/agent.jsonl',
    );
    // A script in the store: from $STEPBOX_HOME, as the window's cards and messages say it.
    expect(sharedAgentSpec('scripted:/tmp/stepbox-e2e-LdTQTU/scripts/walk.jsonl', places)).toBe(
      'scripted:$STEPBOX_HOME/scripts/walk.jsonl',
    );
    // Anywhere else: from the folder it is in, never the host's whole path.
    expect(sharedAgentSpec('exec:python3 /work/main/agents/bot.py --fast', places)).toBe(
      'exec:python3 agents/bot.py --fast',
    );
  });

  it('counts steps as show and the library do: share --json, its line and show all say 3 for a 3-step episode (step 0, the setup, not counted)', async () => {
    const home = mkdtempSync(join(tmpdir(), 'stepbox-share-count-'));
    try {
      const trace = await writeLongTrace(home, 3);
      const env = { env: { STEPBOX_HOME: home } };
      const out = join(home, 'three.html');
      const json = await runCli(['share', trace.branch, '--out', out, '--json'], env);
      expect(json.code, json.stderr).toBe(0);
      expect((JSON.parse(json.stdout) as { steps: number }).steps).toBe(3);
      const line = await runCli(['share', trace.branch, '--out', out], env);
      expect(line.stdout).toMatch(/, 3 steps, /);
      const shown = await runCli(['show', trace.branch], env);
      expect(shown.stdout).toMatch(/ 3 steps\n/);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

/** `n` characters of random text in lines (nothing gzip could pack), as a program's output can be. */
function randomText(n: number): string {
  return randomBytes(Math.ceil((n * 3) / 4))
    .toString('base64')
    .slice(0, n)
    .replace(/(.{76})/g, '$1\n');
}

// An agent in the sandbox writes what it likes, recorded whole: put whole in the file, a 10 MB output
// made a page that froze opening its step, and a file of 10 MB once the text did not repeat.
describe('stepbox share: a 10 MB output', () => {
  it("is in the file as its head and tail with the window's cut mark, the file stays small and says how to see it whole", async () => {
    const home = mkdtempSync(join(tmpdir(), 'stepbox-share-long-'));
    try {
      const big = `${randomText(10_000_000)}\nLAST LINE: AssertionError\n`;
      const content = randomText(10_000_000);
      const ep = await writeSampleEpisode(openEpisodeStore(home), {
        script: [
          { args: { command: 'cat big.log' }, result: { stdout: big, bytes: big.length } },
          { tool: 'write_file', args: { path: 'big.txt', content } },
          { final: 'done' },
        ],
      });
      const { store } = openEngine({ home, sweep: false });
      const data = await shareData(store, ep.branch, parseRedactions([]));
      const html = shareHtml(data);
      // Two 10 MB texts of random characters: the file is their heads and tails, not 20 MB.
      expect(html.length).toBeLessThan(600_000);
      const steps = embedded(html).slice(1).flat() as SharedStep[];
      expect(JSON.stringify(steps).length).toBeLessThan(6 * (LONG_TEXT_HEAD + LONG_TEXT_TAIL));
      const [one, two] = [1, 2].map((n) => steps.find((x) => x.step === n) ?? expect.fail(`no step ${n}`));
      const stdout = one.results?.[0].stdout ?? '';
      const omitted = big.length - LONG_TEXT_HEAD - LONG_TEXT_TAIL;
      expect(stdout.length).toBeLessThan(LONG_TEXT_HEAD + LONG_TEXT_TAIL + 200);
      expect(stdout.startsWith(big.slice(0, LONG_TEXT_HEAD))).toBe(true);
      expect(stdout.endsWith('LAST LINE: AssertionError\n')).toBe(true);
      expect(stdout).toContain(
        `… ${omitted.toLocaleString('en-US')} characters left out here (too long to show whole) …`,
      );
      // Said above the step in the window's words, with the command that prints it whole.
      expect(one.cut).toEqual({
        summary: `Too long to show whole: execute_shell's stdout, ${omitted.toLocaleString('en-US')} characters left out. How to see it whole…`,
        lines: [
          {
            what: "execute_shell's stdout",
            omitted,
            text: `is ${big.length.toLocaleString('en-US')} characters (about 9.7 MiB): shown are its first 49,152 and last 16,384 characters; the ${omitted.toLocaleString('en-US')} characters between them are left out.`,
          },
        ],
        command: `npx stepbox show ${ep.branch} --json`,
      });
      // An argument is cut the same way (the model's raw output repeating it was cut already).
      const written = two.calls?.[0].arguments.content as string;
      expect(written.length).toBeLessThan(LONG_TEXT_HEAD + LONG_TEXT_TAIL + 200);
      expect(two.cut?.lines.map((l) => l.what)).toEqual(["write_file's argument content"]);
      expect(steps.find((x) => x.step === 3)?.cut).toBeUndefined();
      // The file's header says it too, and `share --json` prints it.
      expect(data.omitted).toContainEqual(
        `the middle of long texts at 2 steps (1, 2), each shown as its first 49,152 and last 16,384 characters: npx stepbox show ${ep.branch} --json prints them whole`,
      );
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 120_000);

  it('a repetitive one too: the file was small (gzip packed it) but the page got all 10 MB', async () => {
    const home = mkdtempSync(join(tmpdir(), 'stepbox-share-long-'));
    try {
      const big = `${'PASSED tests/test_x.py::test_case\n'.repeat(300_000)}LAST LINE\n`;
      const ep = await writeSampleEpisode(openEpisodeStore(home), {
        script: [
          { args: { command: 'pytest' }, result: { stdout: big, bytes: big.length } },
          { final: 'done' },
        ],
      });
      const { store } = openEngine({ home, sweep: false });
      const html = shareHtml(await shareData(store, ep.branch, parseRedactions([])));
      const steps = embedded(html).slice(1).flat() as SharedStep[];
      // What the viewer inflates and puts on the page, not only the file's size.
      expect(JSON.stringify(steps).length).toBeLessThan(2 * (LONG_TEXT_HEAD + LONG_TEXT_TAIL));
      expect(steps.find((x) => x.step === 1)?.cut?.lines[0].what).toBe("execute_shell's stdout");
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 120_000);
});
