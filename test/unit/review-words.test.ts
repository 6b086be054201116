// Words the window shows a person in place of internal ones (a review of the window in
// Chromium): each rule in one place, tested here.
import { describe, expect, it } from 'vitest';
import { SandboxSpec } from '../../shared/task';
import { consentMessage, widerThanDefaults } from '../../shared/isolation-policy';
import { marksShown, markWords, ROW_MARKS, shortMark } from '../../renderer/src/model/row-marks';
import { stepRowsOf } from '../../shared/contract/step-rows';
import { traceEvent } from '../support/renderer-fixtures';
import { overrideWords } from '../../renderer/src/model/override-words';
import { createInjectStore } from '../../renderer/src/stores/inject/inject-store';
import { createFakeBackend } from '../support/renderer-fake-client';
import { AGENT_SPEC_FORMS, parseAgentSpec } from '../../electron/engine/agents/agent-spec';
import { splitForms } from '../../shared/agent-kind';
import { inWindowWords } from '../../renderer/src/stores/window-words';
import { commonPlaces, placesTitle, sameForAll, scriptPlaceProblem } from '../../shared/start-paths';
import { episodesApart, mainReturnText } from '../../renderer/src/model/episode-heading';
import { installLineWords } from '../../renderer/src/model/install-words';
import type { BranchSummary } from '../../shared/contract/models';
import { settingKeysIn, settingText, sizeWords, SETTING_WORDS } from '../../shared/setting-words';

describe('the consent question names settings in words', () => {
  it('says every setting a recorded task may widen from one table, the key kept for the tooltip', () => {
    expect(sizeWords('1536m')).toBe('1.5 GiB');
    expect(sizeWords('1g')).toBe('1 GiB');
    expect(sizeWords('1m')).toBe('1 MiB');
    expect(sizeWords('100k')).toBe('100 KiB');
    expect(settingText('sandbox.limits.memory', '1536m', '1g')).toBe(
      "memory limit 1.5 GiB (stepbox's default: 1 GiB)",
    );
    const wide = widerThanDefaults(
      SandboxSpec.parse({
        network: 'bridge',
        image: 'python:3.12',
        runtime: 'crun',
        build: 'Dockerfile',
        limits: { cpus: 4, pids: 1024, memory: '1536m', disk: '2g', output: '4m' },
      }),
    );
    // Every field the policy can name has its words: none is left as the task file's key.
    for (const w of wide) expect(Object.keys(SETTING_WORDS), w.field).toContain(w.field);
    const said = consentMessage('the task recorded in ep-1', wide, 'window');
    expect(said).not.toMatch(/sandbox\.|\(default "/);
    expect(said).toContain("network bridge (stepbox's default: none (offline))");
    expect(said).toContain("CPU limit 4 CPUs (stepbox's default: 1 CPU)");
    expect(said).toContain("process limit 1024 processes (stepbox's default: 256 processes)");
    expect(said).toContain("workspace disk limit 2 GiB (stepbox's default: 1 GiB)");
    expect(settingKeysIn(said).sort()).toEqual(wide.map((w) => w.field).sort());
    // The CLI keeps the task file's keys and its flags.
    expect(consentMessage('the task recorded in ep-1', wide)).toContain(
      'sandbox.limits.memory "1536m" (default "1g")',
    );
  });
});

describe('the timeline legend says every mark a row carries', () => {
  it('puts ROLLBACK/↺ and ≠ in the marks table beside INJ/HUM/OVR/EDIT, with their narrow forms', () => {
    const row = { injected: false, human: false, overridden: false, edited: false };
    // A hard timeout: the workspace restored inside the step, the agent shown a fallback.
    const timedOut = { ...row, rollbacks: 1, real: 'error timeout, exit 137' };
    expect(marksShown([timedOut])).toEqual(['rollback', 'fallback']);
    expect(marksShown([{ ...row, overridden: true, real: 'ok' }])).toEqual(['overridden', 'shownOther']);
    expect(marksShown([row])).toEqual([]);
    expect(shortMark('rollback')).toBe('↺');
    expect(shortMark('fallback')).toBe('≠');
    expect(shortMark('injected')).toBeNull();
    expect(ROW_MARKS.rollback.words).toBe('workspace restored mid-step');
    expect(ROW_MARKS.fallback.words).toBe('agent shown a fallback');
    for (const k of Object.keys(ROW_MARKS) as (keyof typeof ROW_MARKS)[]) {
      expect(ROW_MARKS[k].words, k).toMatch(/^[a-z]/);
      expect(ROW_MARKS[k].title, k).toContain(ROW_MARKS[k].mark);
    }
  });
});

describe('a ROLLBACK mark says mid-step only of a step that had not finished', () => {
  /** Step 1 and step 2 ran (each with its snapshot); `between` comes where the trace has it. */
  function trace(rollbackBeforeSnapshot2: boolean) {
    const rollback = traceEvent({ type: 'rollback', step: 2, source: 'human', to_step: 1, reason: 'user' });
    const snap = (step: number) =>
      traceEvent({
        type: 'snapshot',
        step,
        tree_hash: `h${step}`,
        manifest: `m${step}`,
        changed: [],
        bytes: 0,
      });
    return [
      snap(0),
      traceEvent({ type: 'action', step: 1, source: 'agent', calls: [], final: 'x' }),
      snap(1),
      traceEvent({ type: 'action', step: 2, source: 'agent', calls: [], final: 'y' }),
      ...(rollbackBeforeSnapshot2 ? [rollback, snap(2)] : [snap(2), rollback]),
    ];
  }

  it("a person's rollback after step 2 finished: rolled back to step 1 after it, not mid-step", () => {
    const row2 = stepRowsOf(trace(false)).find((r) => r.step === 2)!;
    expect(row2).toMatchObject({ rollbacks: 0, rolled_back_to: 1 });
    expect(marksShown([row2])).toEqual(['rolledBack']);
    expect(markWords('rolledBack', row2)).toBe('rolled back to step 1 after this step');
    expect(ROW_MARKS.rolledBack.words).toBe('sandbox rolled back after the step');
  });

  it('a restore inside step 2, before its snapshot (a hard timeout), is mid-step', () => {
    const row2 = stepRowsOf(trace(true)).find((r) => r.step === 2)!;
    expect(row2).toMatchObject({ rollbacks: 1, rolled_back_to: null });
    expect(marksShown([row2])).toEqual(['rollback']);
    expect(markWords('rollback', row2)).toBe('workspace restored mid-step');
  });
});

describe("the Inject panel's override says what it does of a step that ran", () => {
  it('names the step and tool whose result the agent reads in place of the real one', () => {
    const w = overrideWords({ step: 1, tool: 'list_dir' });
    expect(w.copy).toBe("Copy step 1's result to edit");
    expect(w.done).toBe("The agent reads yours as step 1's result next.");
    expect(`${w.copy} ${w.copyTitle} ${w.done}`).not.toMatch(/pending|overridden|Load/);
    expect(overrideWords(null).copy).toBe('Copy the result to edit');
  });

  it("answers an override in the panel's words, naming the step", async () => {
    const fake = createFakeBackend();
    fake.on('episode.override', () => ({}));
    const store = createInjectStore(fake.client);
    store.getState().setOverrideText('rain');
    expect(await store.getState().override('b1', null, { step: 2, tool: 'search' })).toBe(true);
    expect(store.getState().notice).toBe(overrideWords({ step: 2, tool: 'search' }).done);
  });
});

describe("the start form's agent error is one sentence, the forms behind Details", () => {
  it('names what the spec lacks and how it is written, the forms after it for the window to fold', () => {
    const bad = (spec: string) => {
      try {
        parseAgentSpec(spec);
      } catch (e) {
        return (e as Error).message;
      }
      throw new Error(`${spec} parsed`);
    };
    const missing = splitForms(bad('scripted:'));
    expect(missing.text).toBe('agent spec "scripted:" needs a file after the colon: scripted:FILE.');
    expect(missing.forms).toBe(AGENT_SPEC_FORMS);
    expect(splitForms(bad('replay:')).text).toBe(
      'agent spec "replay:" needs an episode id after the colon: replay:EPISODE.',
    );
    expect(splitForms(bad('openai:')).text).toBe(
      'agent spec "openai:" needs a model name after the colon: openai:MODEL@URL.',
    );
    expect(splitForms(bad('exec:')).text).toBe(
      'agent spec "exec:" needs a command after the colon: exec:CMD.',
    );
    expect(splitForms(bad('foo:bar')).text).toBe(
      'agent spec "foo:bar": "foo" is not a kind of agent; write e.g. openai:MODEL@URL or scripted:FILE.',
    );
    // In the window's words, one sentence: no list of syntax in it.
    const said = inWindowWords(missing.text);
    expect(said).toBe('“Agent” "scripted:" needs a file after the colon: scripted:FILE.');
    expect(said.split(/[.;] /).length).toBe(1);
    expect(splitForms('no forms here')).toEqual({ text: 'no forms here', forms: null });
  });
});

describe("a start's path refusal is said once, the folders in words", () => {
  it('names the folders by name (paths in the tooltip) and says a refusal every card shares once', () => {
    const common = commonPlaces('/store', '/w/resources', ['/p/a/task.json', '/p/b']);
    const refusal = (folder: string) => scriptPlaceProblem('Agent', 'scripted:/etc/hosts', folder, common);
    const said = refusal('/w/resources/tasks/hello-python');
    expect(said).toBe(
      "Agent: scripted:/etc/hosts is outside the folders stepbox reads files from (the task's folder, the store, " +
        "stepbox's bundled files, an opened project); pick the file with Choose… → Your folders to let stepbox read it, or give a path inside one of them",
    );
    expect(placesTitle(common)).toBe(
      "the store: /store\nstepbox's bundled files: /w/resources\nan opened project: /p/a\nan opened project: /p/b",
    );
    // The same refusal on every card: said once. Another on one card, or none: each card its own.
    expect(sameForAll([said, refusal('/w/resources/tasks/notes-memory')])).toBe(said);
    expect(sameForAll([said, null])).toBeNull();
    expect(sameForAll([said, `${said}.`])).toBeNull();
    expect(sameForAll([])).toBeNull();
  });
});

describe('the library tells episodes of one task apart in their headings', () => {
  it('names whose return the heading shows as a person reads it (it read "main return 1.61")', () => {
    expect(mainReturnText({ return: 1.61, gamma: 1 })).toBe('main branch: return 1.61');
    expect(mainReturnText({ return: 27.4321, gamma: 0.99 })).toBe('main branch: return 27.43 (γ=0.99)');
  });

  const entry = (episode: string, created: number, agent: string) => ({
    episode,
    task: 'hello-python',
    created,
    branches: [{ agent } as BranchSummary],
  });
  const at = (h: number, m: number, s = 0) => new Date(2026, 11, 6, h, m, s).getTime();
  it('says the first of agent, start time or run number that differs for each, by one rule', () => {
    const script = 'scripted:/work/main/resources/tasks/hello-python/agent.jsonl';
    // One episode of a task: its name is enough.
    expect(episodesApart([entry('a', at(16, 8), script)]).size).toBe(0);
    // Different agents: the agent, a script by its file's name (no host path).
    expect([
      ...episodesApart([entry('a', at(16, 8), script), entry('b', at(16, 8), 'openai:qwen')]).values(),
    ]).toEqual(['scripted:agent.jsonl', 'openai:qwen']);
    // The same agent: when it started, to the minute, else to the second.
    expect([
      ...episodesApart([entry('a', at(16, 8), script), entry('b', at(16, 9), script)]).values(),
    ]).toEqual(['started 16:08', 'started 16:09']);
    expect([
      ...episodesApart([entry('a', at(16, 8, 1), script), entry('b', at(16, 8, 30), script)]).values(),
    ]).toEqual(['started 16:08:01', 'started 16:08:30']);
    // Started in the same second (a batch): its place among the task's runs, oldest first.
    const same = episodesApart([entry('b', at(16, 8) + 5, script), entry('a', at(16, 8), script)]);
    expect(same.get('a')).toBe('run 1 of 2');
    expect(same.get('b')).toBe('run 2 of 2');
    // Other tasks are apart by their names already.
    const other = { ...entry('c', at(16, 8), script), task: 'notes-memory' };
    expect(episodesApart([entry('a', at(16, 8), script), other]).size).toBe(0);
  });
});

describe("an agent's install says what npm is doing in words (installLineWords)", () => {
  it("turns npm's fetch lines into words; the raw line is for Details", () => {
    expect(
      installLineWords(
        'npm http fetch GET 200 https://registry.npmjs.org/@demo/slow-agent/-/_demo_slow-agent-1.0.0.tgz 31ms',
      ),
    ).toBe('downloaded @demo/slow-agent from the npm registry');
    expect(installLineWords('npm http fetch GET 200 https://registry.npmjs.org/@openai%2fcodex 12ms')).toBe(
      'looked up @openai/codex in the npm registry',
    );
    expect(installLineWords('npm http fetch GET 404 https://registry.npmjs.org/nope 9ms')).toBe(
      'the npm registry answered 404 for nope',
    );
    expect(installLineWords('npm warn deprecated glob@7.2.3: no longer supported')).toBe(
      'npm warns: deprecated glob@7.2.3: no longer supported',
    );
    // stepbox's own words pass as they are; a line with nothing to say in words is left to Details.
    expect(installLineWords('installed codex@0.171.0')).toBe('installed codex@0.171.0');
    expect(installLineWords('npm http fetch GET 200 done')).toBeNull();
    expect(installLineWords('npm sill idealTree buildDeps')).toBeNull();
  });
});
