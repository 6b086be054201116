import { describe, expect, it } from 'vitest';
import { checkEpisode } from '../../shared/qa/check-episode.js';
import { checkContextOverflow } from '../../shared/qa/context-overflow.js';
import { checkDestructiveAction } from '../../shared/qa/destructive-action.js';
import { checkGaveUp } from '../../shared/qa/gave-up.js';
import { liveFlagsAt } from '../../shared/qa/live.js';
import { checkNetworkAssumption } from '../../shared/qa/network-assumption.js';
import { checkOutputFlood } from '../../shared/qa/output-flood.js';
import { checkUnknownTool } from '../../shared/qa/unknown-tool.js';
import { stepRowsOf } from '../../shared/contract/step-rows.js';
import type { TaskInput } from '../../shared/task.js';
import { QaTrace, qaTask, sh } from '../support/qa-traces.js';

const TASK: TaskInput = {
  name: 't',
  goal: 'Make python3 test_x.py print ok',
  tools: ['execute_shell', 'read_file', 'write_file', 'list_dir'],
};
const input = (t: QaTrace) => ({ events: t.events(), torn: false, task: qaTask(t.task) });
const failed = { success: false, exit_code: 1, stdout: 'FAIL' };
const rules = (t: QaTrace, rule: string) =>
  checkEpisode({ events: t.events(), torn: false }).flags.filter((f) => f.rule === rule);

/** A step whose structured call names a tool the task lacks: the parser refuses it as a parse error. */
function unknownCall(t: QaTrace, step: number, name: string, args = '{}'): void {
  t.push({
    type: 'model_output',
    step,
    source: 'agent',
    raw: '',
    message: {
      content: null,
      tool_calls: [{ id: `u${step}`, type: 'function', function: { name, arguments: args } }],
    },
  });
  t.push({
    type: 'parse_error',
    step,
    source: 'harness',
    message: `tool call 1: "${name}" is not an enabled tool (enabled: execute_shell, read_file)`,
    raw: '',
    call_ids: [`u${step}`],
  });
  t.push({
    type: 'snapshot',
    step,
    source: 'harness',
    tree_hash: `h${step}`,
    manifest: `m${step}`,
    changed: [],
    bytes: 0,
  });
}

describe('unknown_tool rule', () => {
  it('flags each step that calls a tool the task does not offer, and says which', () => {
    const t = new QaTrace(TASK);
    unknownCall(t, 1, 'run_tests');
    unknownCall(t, 2, 'run_tests');
    t.step({ final: 'The code looks correct to me.' }).end('failed', failed);
    const flags = checkUnknownTool(input(t));
    expect(flags.map((f) => [f.step, f.severity])).toEqual([
      [1, 'warning'],
      [2, 'warning'],
    ]);
    expect(flags[0].message).toMatch(/"run_tests".*does not offer/);
    expect(flags[0].evidence.tools).toEqual(['run_tests']);
    // It is a live rule: the breakpoint fires at step 1, before the agent loops.
    expect(liveFlagsAt(qaTask(TASK), t.events().slice(0, 4), 1, 'unknown_tool')).toHaveLength(1);
    // The rows name the tool the agent asked for, marked as not offered (the TOOL column was empty).
    const calls = new QaTrace(TASK);
    unknownCall(calls, 1, 'run_tests');
    unknownCall(calls, 2, 'run_tests', '{"path": "tests/"}');
    const rows = stepRowsOf(calls.events());
    expect(rows.map((r) => [r.step, r.tools, r.not_offered])).toEqual([
      [0, [], undefined],
      [1, ['run_tests'], ['run_tests']],
      [2, ['run_tests'], ['run_tests']],
    ]);
    // Their arguments are the call as the agent made it, not the parser's words
    // ('tool call 1: "run_tests" is not an enabled tool …' filled the cell).
    expect(rows.slice(1).map((r) => r.summary)).toEqual(['{}', 'tests/']);
  });
  it('flags a call that reached the registry and came back unknown_tool (an external agent)', () => {
    const t = new QaTrace(TASK).step({
      calls: [
        {
          name: 'web_search',
          args: { q: 'x' },
          result: { ok: false, error: { code: 'unknown_tool', message: 'unknown tool "web_search"' } },
        },
      ],
    });
    expect(checkUnknownTool(input(t))[0].evidence.tools).toEqual(['web_search']);
    const row = stepRowsOf(t.events()).find((r) => r.step === 1);
    expect([row?.tools, row?.not_offered]).toEqual([['web_search'], ['web_search']]);
  });
  it('clean: offered tools only, and a parse error about arguments, are not flagged', () => {
    const t = new QaTrace(TASK).step({ calls: [sh('ls'), { name: 'read_file', args: { path: 'x' } }] });
    t.push({ type: 'model_output', step: 2, source: 'agent', raw: '{' });
    t.push({ type: 'parse_error', step: 2, source: 'harness', message: 'the output is not JSON', raw: '{' });
    t.step({ final: 'done' }).end();
    expect(checkUnknownTool(input(t))).toEqual([]);
    expect(rules(t, 'unknown_tool')).toEqual([]);
    expect(stepRowsOf(t.events()).some((r) => r.not_offered)).toBe(false);
  });
});

describe('unknown_tool and context_overflow on an agent that runs its own tools (Codex CLI)', () => {
  it('a tool its own request offered is no unknown tool, and its result carried as parts is shown', () => {
    const t = new QaTrace(TASK);
    const tools = [{ type: 'function', function: { name: 'exec_command', parameters: {} } }];
    const stdout = 'Chunk ID: 1\nWall time: 0.01 seconds\nOutput:\n"hi"\n';
    t.push({
      type: 'model_request',
      step: 1,
      source: 'harness',
      request: { messages: [{ role: 'user', content: TASK.goal }], tools },
    });
    t.step({
      calls: [{ name: 'exec_command', args: { cmd: 'echo hi' }, result: { ok: true, exit_code: 0, stdout } }],
    });
    const callId = t.events().find((e) => e.type === 'tool_call')?.call_id;
    t.push({
      type: 'model_request',
      step: 2,
      source: 'harness',
      request: {
        messages: [
          { role: 'user', content: TASK.goal },
          { role: 'tool', tool_call_id: callId, content: [{ type: 'text', text: stdout }] },
        ],
        tools,
      },
    });
    t.step({ final: 'done' }).end();
    expect(checkUnknownTool(input(t))).toEqual([]);
    expect(checkContextOverflow(input(t))).toEqual([]);
    // The same call with no request offering it is flagged.
    const bare = new QaTrace(TASK).step({ calls: [{ name: 'exec_command', args: { cmd: 'echo hi' } }] });
    expect(checkUnknownTool(input(bare))[0].evidence.tools).toEqual(['exec_command']);
  });
});

const added = (...paths: string[]) => paths.map((path) => ({ path, change: 'added' as const }));
const deleted = (...paths: string[]) => paths.map((path) => ({ path, change: 'deleted' as const }));

describe('destructive_action rule', () => {
  const files = ['src/app.py', 'src/util.py', 'notes.md', 'data.csv', 'build/out.o'];
  it('flags a step that deletes most of the workspace, at that step, as an error naming the rollback', () => {
    const t = new QaTrace(TASK, { initialChanged: added(...files) })
      .step({ calls: [sh('ls')] })
      .step({ calls: [sh('rm -rf ./*')], changed: deleted(...files) })
      .step({ final: 'Cleaned up.' })
      .end('failed', failed);
    const flags = checkDestructiveAction(input(t));
    expect(flags).toHaveLength(1);
    expect(flags[0]).toMatchObject({ step: 2, severity: 'error' });
    expect(flags[0].message).toMatch(/deleted 5 of the workspace's 5 paths.*roll back to step 1/);
    expect(liveFlagsAt(qaTask(TASK), t.events(), 2, 'destructive_action')).toHaveLength(1);
  });
  it('thresholds come from the task: qa.destructive_share and qa.destructive_min_files', () => {
    const task = { ...TASK, qa: { destructive_share: 0.9 } };
    const t = new QaTrace(task, { initialChanged: added(...files) }).step({
      calls: [sh('rm -rf src notes.md')],
      changed: deleted('src/app.py', 'src/util.py', 'notes.md'),
    });
    expect(checkDestructiveAction(input(t))).toEqual([]);
    const loose = { ...TASK, qa: { destructive_share: 0.5 } };
    const t2 = new QaTrace(loose, { initialChanged: added(...files) }).step({
      calls: [sh('rm -rf src notes.md')],
      changed: deleted('src/app.py', 'src/util.py', 'notes.md'),
    });
    expect(checkDestructiveAction(input(t2))).toHaveLength(1);
  });
  it('clean: removing the build folder, a small workspace, or a person at the terminal is not flagged', () => {
    const t = new QaTrace(TASK, { initialChanged: added(...files) })
      .step({ calls: [sh('rm -rf build')], changed: deleted('build/out.o') })
      .step({ final: 'done' })
      .end();
    expect(checkDestructiveAction(input(t))).toEqual([]);
    expect(rules(t, 'destructive_action')).toEqual([]);
    const tiny = new QaTrace(TASK, { initialChanged: added('a.txt', 'b.txt') }).step({
      calls: [sh('rm a.txt b.txt')],
      changed: deleted('a.txt', 'b.txt'),
    });
    expect(checkDestructiveAction(input(tiny))).toEqual([]);
    const human = new QaTrace(TASK, { initialChanged: added(...files) }).step({ changed: deleted(...files) });
    expect(checkDestructiveAction(input(human))).toEqual([]);
  });
});

const resolveError = {
  exit_code: 128,
  stderr:
    "Cloning into 'requests'...\nfatal: unable to access 'https://github.com/psf/requests/': Could not resolve host: github.com\n",
};

describe('network_assumption rule', () => {
  it('flags a success claim after a name-resolution failure (error), and the work that depended on it (warning)', () => {
    const t = new QaTrace(TASK)
      .step({ calls: [sh('git clone https://github.com/psf/requests', resolveError)] })
      .step({
        calls: [
          sh('python3 -c "import requests"', {
            exit_code: 1,
            stderr: "ModuleNotFoundError: No module named 'requests'",
          }),
        ],
      })
      .step({ final: 'Installed requests and fetched the data.' })
      .end('failed', failed);
    const flags = checkNetworkAssumption(input(t));
    expect(flags.map((f) => [f.step, f.severity])).toEqual([
      [2, 'warning'],
      [3, 'error'],
    ]);
    expect(flags[1].evidence.network_step).toBe(1);
    expect(liveFlagsAt(qaTask(TASK), t.events().slice(0, -1), 3, 'network_assumption')).toHaveLength(1);
  });
  it('flags a network_unavailable tool error and "network is unreachable"', () => {
    for (const result of [
      { ok: false, error: { code: 'network_unavailable' as const, message: 'no network' } },
      { exit_code: 1, stderr: 'connect: Network is unreachable' },
      { exit_code: 1, stderr: '<urlopen error [Errno -3] Temporary failure in name resolution>' },
    ]) {
      const t = new QaTrace(TASK)
        .step({ calls: [sh('fetch', result)] })
        .step({ final: 'Fetched.' })
        .end('failed', failed);
      expect(checkNetworkAssumption(input(t)), JSON.stringify(result)).toHaveLength(1);
    }
  });
  it('clean: owning up to the missing network, a verified way around, or no network error at all', () => {
    const honest = new QaTrace(TASK)
      .step({ calls: [sh('git clone https://github.com/psf/requests', resolveError)] })
      .step({ final: 'The sandbox has no network, so I could not install requests.' })
      .end('failed', failed);
    expect(checkNetworkAssumption(input(honest))).toEqual([]);
    const around = new QaTrace(TASK)
      .step({ calls: [sh('git clone https://github.com/psf/requests', resolveError)] })
      .step({ calls: [sh('cp -r vendor/requests .')] })
      .step({ final: 'Installed requests from vendor/.' })
      .end();
    expect(checkNetworkAssumption(input(around))).toEqual([]);
    const none = new QaTrace(TASK)
      .step({
        calls: [
          sh('ls nothing', { exit_code: 2, stderr: 'ls: cannot access nothing: No such file or directory' }),
        ],
      })
      .step({ final: 'Done' })
      .end('failed', failed);
    expect(checkNetworkAssumption(input(none))).toEqual([]);
    expect(rules(none, 'network_assumption')).toEqual([]);
  });
});

/** Records what the model was shown at `step`: these messages. */
function shown(t: QaTrace, step: number, messages: unknown[]): void {
  t.push({ type: 'model_request', step, source: 'harness', request: { messages, tools: [] } });
}
const sys = { role: 'system', content: 'You are an agent.' };
const goal = { role: 'user', content: TASK.goal };
const toolMsg = (id: string, stdout: string) => ({
  role: 'tool',
  tool_call_id: id,
  content: JSON.stringify({ ok: true, exit_code: 0, stdout, stderr: '' }),
});

describe('context_overflow rule', () => {
  it('flags the first step whose request no longer holds the goal, and one missing the latest result', () => {
    const t = new QaTrace(TASK);
    shown(t, 1, [sys, goal]);
    t.step({ calls: [sh('cat big.log', { stdout: 'line 1 of a very long log\n'.repeat(50) })] });
    // A truncating policy kept only the newest messages: the goal is gone.
    shown(t, 2, [toolMsg('c1_0', 'line 1 of a very long log\n'.repeat(50))]);
    t.step({ calls: [sh('cat other.log', { stdout: 'other log' })] });
    // Now even the latest result is gone.
    shown(t, 3, [toolMsg('c1_0', 'line 1 of a very long log\n')]);
    t.step({ final: 'Summarised the logs.' }).end('failed', failed);
    const flags = checkContextOverflow(input(t));
    expect(flags.map((f) => [f.step, f.evidence.lost])).toEqual([
      [2, 'goal'],
      [3, 'latest_result'],
    ]);
    expect(liveFlagsAt(qaTask(TASK), t.events(), 2, 'context_overflow')).toHaveLength(1);
  });
  it('clean: a request with the goal and the latest result, or an agent that records no request', () => {
    const t = new QaTrace(TASK);
    shown(t, 1, [sys, goal]);
    t.step({ calls: [sh('ls', { stdout: 'a.txt\n' })] });
    shown(t, 2, [sys, goal, { role: 'assistant', content: null }, toolMsg('c1_0', 'a.txt\n')]);
    t.step({ final: 'done' }).end();
    expect(checkContextOverflow(input(t))).toEqual([]);
    const scripted = new QaTrace(TASK)
      .step({ calls: [sh('ls')] })
      .step({ final: 'done' })
      .end();
    expect(checkContextOverflow(input(scripted))).toEqual([]);
    expect(rules(scripted, 'context_overflow')).toEqual([]);
  });
  it('clean: an agent that runs its own tools sends its output as plain text (Codex: newlines, quotes)', () => {
    // A clean Codex CLI run was flagged: the rule looked only for the JSON-escaped output.
    const output = 'Chunk ID: 1\nProcess exited with code 0\nOutput:\n"hello" > out.txt\n';
    const t = new QaTrace(TASK);
    shown(t, 1, [sys, goal]);
    t.step({
      calls: [{ name: 'exec_command', args: { cmd: 'echo hello > out.txt' }, result: { stdout: output } }],
    });
    shown(t, 2, [
      sys,
      goal,
      { role: 'assistant', content: null },
      { role: 'tool', tool_call_id: 'c1_0', content: output },
    ]);
    t.step({ final: 'done' }).end();
    expect(checkContextOverflow(input(t))).toEqual([]);
  });
});

const readOnly = { exit_code: 1, stderr: 'sh: 1: cannot create config/settings.ini: Permission denied' };

describe('gave_up rule', () => {
  it('flags a final answer right after a permission error, with no other way tried', () => {
    const t = new QaTrace(TASK)
      .step({ calls: [sh('echo mode=prod > config/settings.ini', readOnly)] })
      .step({ calls: [{ name: 'list_dir', args: { path: 'config' } }] })
      .step({ final: 'Done: the setting is updated.' })
      .end('failed', failed);
    const flags = checkGaveUp(input(t));
    expect(flags).toHaveLength(1);
    expect(flags[0]).toMatchObject({ rule: 'gave_up', step: 3, severity: 'warning' });
    expect(flags[0].evidence.blocked_step).toBe(1);
    expect(liveFlagsAt(qaTask(TASK), t.events().slice(0, -1), 3, 'gave_up')).toHaveLength(1);
  });
  it('flags a not_found tool error followed by giving up', () => {
    const t = new QaTrace(TASK)
      .step({
        calls: [
          {
            name: 'read_file',
            args: { path: 'x' },
            result: { ok: false, error: { code: 'not_found', message: 'x: no such file' } },
          },
        ],
      })
      .step({ final: 'I cannot continue without x.' })
      .end('failed', failed);
    expect(checkGaveUp(input(t))).toHaveLength(1);
  });
  it('clean: another way tried after the error, or a verifier that passed', () => {
    const t = new QaTrace(TASK)
      .step({ calls: [sh('echo mode=prod > config/settings.ini', readOnly)] })
      .step({ calls: [sh('chmod u+w config && echo mode=prod > config/settings.ini')] })
      .step({ final: 'Done.' })
      .end('failed', failed);
    expect(checkGaveUp(input(t))).toEqual([]);
    const verified = new QaTrace(TASK)
      .step({
        calls: [
          sh('cat missing.txt', { exit_code: 1, stderr: 'cat: missing.txt: No such file or directory' }),
        ],
      })
      .step({ final: 'Done.' })
      .end();
    expect(checkGaveUp(input(verified))).toEqual([]);
    expect(rules(verified, 'gave_up')).toEqual([]);
  });
});

describe('output_flood rule', () => {
  const flooded = {
    stdout: 'x'.repeat(4096),
    truncated: { stdout: true, stderr: false },
    bytes: 400_000,
  };
  it('flags the step that acts on a result the output cap mostly cut away', () => {
    const t = new QaTrace(TASK)
      .step({ calls: [sh('cat app.log', flooded)] })
      .step({ final: 'The log shows no errors.' })
      .end('failed', failed);
    const flags = checkOutputFlood(input(t));
    expect(flags).toHaveLength(1);
    expect(flags[0]).toMatchObject({ step: 2, severity: 'warning' });
    expect(flags[0].evidence.dropped_share as number).toBeGreaterThan(0.98);
    expect(liveFlagsAt(qaTask(TASK), t.events().slice(0, -1), 2, 'output_flood')).toHaveLength(1);
  });
  it('the share comes from qa.flood_share', () => {
    const task = { ...TASK, qa: { flood_share: 0.995 } };
    const t = new QaTrace(task).step({ calls: [sh('cat app.log', flooded)] }).step({ final: 'ok' });
    expect(checkOutputFlood(input(t))).toEqual([]);
  });
  it('clean: a slightly cut result, an uncut one, or a flood at the last step', () => {
    const slight = new QaTrace(TASK)
      .step({ calls: [sh('cat app.log', { ...flooded, bytes: 5000 })] })
      .step({ calls: [sh('grep ERROR app.log', { stdout: 'ERROR x' })] })
      .step({ final: 'one error' })
      .end();
    expect(checkOutputFlood(input(slight))).toEqual([]);
    expect(rules(slight, 'output_flood')).toEqual([]);
    const last = new QaTrace(TASK).step({ calls: [sh('cat app.log', flooded)] });
    expect(checkOutputFlood(input(last))).toEqual([]);
  });
});
