import { createInterface } from 'node:readline';
import type { EpisodeRunner } from '../engine/harness/episode-runner.js';
import { HarnessError } from '../engine/harness/harness-error.js';
import type { CliIo } from './command.js';
import type { StopReason } from '../engine/harness/episode-controller.js';
import type { HeldAction } from '../../shared/held-action.js';
import type { ToolResult } from '../../shared/tool-result.js';
import { oneLineJson } from '../../shared/step-summary.js';
import { oneLine } from '../../shared/one-line.js';
import { manualAgentOf } from '../engine/agents/manual-agent.js';
import { droppedSentence } from '../../shared/rollback-dropped.js';

/** The keys of `--step` mode, as its prompt shows them. */
export const STEP_KEYS =
  'Enter step · c continue · i inject · r N roll back to step N · t stop before tools on/off · a stop before answers on/off · q stop';

/** `--step` in the help of run, fork and resume: its keys, and what the end of input does. */
export const STEP_FLAG_HELP = `  --step            step in the terminal: ${STEP_KEYS}
                    (keys are read from stdin: at its end the episode stops as q does,
                    interrupted with end_reason input_ended; leave out --step to run unattended)`;

/** The keys at a stop inside a step (before the answer or before the tools), as its prompt shows them. */
export const HELD_KEYS =
  'Enter run it · edit [CALL] JSON edit arguments · answer JSON edit the answer · replace [CALL] JSON|TEXT give the result instead · c continue · r N roll back · q stop';

/** What `--step` mode prints for each key, for `?` and `help`. */
const HELP_TEXT = `Between steps:
  Enter            one step (F10)
  c                continue to a breakpoint, a stop or the end (F5)
  i                inject a message (asks for the role and the text)
  r N              roll back to step N (continuing then forks a branch)
  t                stop before each tool runs: on/off
  a                stop before each answer reaches the agent: on/off
  q                stop the episode (the trace closes as interrupted); so does the end of input
At a stop inside a step (the agent's decided action is shown):
  Enter | run      run it as decided (or as edited)
  edit [CALL] JSON        new arguments for a call, e.g. edit {"command": "ls -la"}
  answer JSON             a new assistant message, e.g. answer {"content": "done"}
  replace [CALL] JSON|TEXT  the result the agent sees instead of running the call:
                   a tool result object, or text shown as its stdout
  CALL is the call id (needed only when the step makes several calls).
`;

/**
 * Steps an episode from the terminal like a debugger: Enter steps, `c` continues to a
 * breakpoint or the end, `i` injects a message (asks for the role and the text), `r N`
 * rolls back to step N (continuing then forks a branch), `t`/`a` turn the stops
 * before each tool / each answer on and off, `q` stops (the trace closes as
 * `interrupted`). At a stop inside a step the decided action is shown and can be run,
 * edited or given its result. Prompts go to stderr so `--json` keeps stdout to one document.
 */
export async function stepRepl(c: EpisodeRunner, io: CliIo, reader: LineReader): Promise<void> {
  const ask = (prompt: string) => reader.ask(prompt);
  while (!c.ended()) {
    const held = c.held();
    const line = await ask(
      held
        ? `[step ${held.step} waiting before its ${held.stage === 'before_answer' ? 'answer' : 'tools'}] ${HELD_KEYS}> `
        : `[step ${c.currentStep()}] ${STEP_KEYS}> `,
    );
    if (line === null) {
      await stopAtEndOfInput(c, io, 'step');
      break;
    }
    const cmd = line.trim();
    try {
      if (cmd === '' || (held && cmd === 'run')) report(io, await c.step());
      else if (cmd === 'c') report(io, await c.run());
      else if (cmd === 'q') await c.stop();
      else if (cmd === '?' || cmd === 'help') io.stderr.write(HELP_TEXT);
      else if (cmd === 't' || cmd === 'a') {
        const key = cmd === 't' ? 'before_tool' : 'before_answer';
        const points = c.setStopPoints({ [key]: !c.stopPoints()[key] });
        io.stderr.write(
          `stop before each ${cmd === 't' ? 'tool runs' : 'answer reaches the agent'}: ${points[key] ? 'on' : 'off'}\n`,
        );
      } else if (cmd === 'i') {
        const role = ((await ask('role (user/system) [user]: ')) ?? '').trim() || 'user';
        if (role !== 'user' && role !== 'system') {
          io.stderr.write(`role must be user or system, not "${role}"\n`);
          continue;
        }
        const text = await ask('text: ');
        if (text === null || text.trim() === '') continue;
        c.inject(role, text);
        io.stderr.write(`injected ${role} message; the agent sees it before step ${c.currentStep() + 1}\n`);
      } else if (/^r\s+\d+$/.test(cmd)) {
        const k = Number(cmd.split(/\s+/)[1]);
        const rolled = await c.rollbackTo(k);
        // What of a person's the new branch leaves out, in the window's words; nothing when nothing.
        const dropped = droppedSentence(rolled.dropped);
        io.stderr.write(
          `rolled back to step ${k}; continuing creates a new branch${dropped ? `\n${dropped}` : ''}\n`,
        );
      } else if (held && /^(edit|answer|replace)\b/.test(cmd)) {
        const after = heldCommand(c, cmd);
        io.stderr.write(describeHeld(after));
      } else io.stderr.write(`unknown key "${cmd}": ${held ? HELD_KEYS : STEP_KEYS} (? for help)\n`);
    } catch (e) {
      if (!(e instanceof HarnessError)) throw e;
      io.stderr.write(`${e.message}\n`);
    }
  }
}

/** Applies `edit`, `answer` or `replace` to the held step; returns it as changed. */
function heldCommand(c: EpisodeRunner, cmd: string): HeldAction {
  const held = c.held() as HeldAction;
  const [verb] = cmd.split(/\s/, 1);
  let rest = cmd.slice(verb.length).trim();
  if (verb === 'answer')
    return c.editAnswer(jsonArgument(rest, 'answer {"content": ..., "tool_calls": [...]}'));
  // An optional call id first; without it the step's only call.
  let callId: string;
  const first = rest.split(/\s/, 1)[0] ?? '';
  if (held.calls.some((k) => k.id === first)) {
    callId = first;
    rest = rest.slice(first.length).trim();
  } else if (held.calls.length === 1) callId = held.calls[0].id;
  else
    throw new HarnessError(
      'invalid_input',
      held.calls.length === 0
        ? `step ${held.step} calls no tool`
        : `step ${held.step} makes ${held.calls.length} calls; name one: ${held.calls.map((k) => k.id).join(', ')}`,
    );
  if (verb === 'edit') return c.editArguments(callId, jsonArgument(rest, 'edit [CALL] {"command": "ls"}'));
  const given = rest.startsWith('{')
    ? (jsonArgument(rest, 'replace [CALL] {"ok": true, ...}') as ToolResult)
    : { ok: true, exit_code: 0, stdout: rest, duration_ms: null, bytes: Buffer.byteLength(rest) };
  return c.replaceResult(callId, given);
}

function jsonArgument(text: string, form: string): unknown {
  if (text === '') throw new HarnessError('invalid_input', `give the JSON: ${form}`);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new HarnessError('invalid_input', `not JSON (${(e as Error).message}); the form is ${form}`);
  }
}

/** The held action as a person reads it: what the agent wants to do, and what a person changed. */
export function describeHeld(held: HeldAction): string {
  const lines = [`step ${held.step}: ${held.why}`];
  if (held.parse_error !== null) lines.push(`  the answer cannot be used: ${held.parse_error}`);
  else if (held.final !== null) lines.push(`  the agent wants to finish with: ${oneLine(held.final, 200)}`);
  for (const call of held.calls) {
    const replaced = held.replaced.find((r) => r.call_id === call.id);
    lines.push(
      `  the agent wants to run: ${call.name} ${oneLineJson(call.arguments, 300)}  (call ${call.id})` +
        (replaced
          ? `\n    result given instead (the tool will not run): ${oneLineJson(replaced.result, 200)}`
          : ''),
    );
  }
  if (held.edited) lines.push('  (edited by you)');
  return lines.join('\n') + '\n';
}

/** Reads answers to prompts from stdin, one line each (prompts on stderr). */
export class LineReader {
  private readonly rl;
  private readonly lines;

  constructor(private readonly io: CliIo) {
    this.rl = createInterface({ input: io.stdin, terminal: false });
    this.lines = this.rl[Symbol.asyncIterator]();
  }

  /** Writes `prompt` and resolves with the next line, or null at the end of input. */
  async ask(prompt: string): Promise<string | null> {
    this.io.stderr.write(prompt);
    const next = await this.lines.next();
    return next.done ? null : String(next.value);
  }

  close(): void {
    this.rl.close();
  }
}

/** The end reason of an episode stopped because the person's input (stdin) ended. */
export const INPUT_ENDED = 'input_ended';

/**
 * End of input stops the episode, as it ends `stepbox sandbox shell` (a Ctrl+D there, bash's
 * end of input): no one is left to answer, so waiting would be forever. The trace keeps every
 * step so far and closes `interrupted` (end_reason input_ended), which `stepbox resume` continues.
 * At the `--step` prompt (`asking` 'step') it says how to run without a person: `--step` asked
 * for one, and a run fed a few keys then closed (a script, CI) reads as a run that gave up.
 */
export function stopAtEndOfInput(
  c: EpisodeRunner,
  io: CliIo,
  asking: 'step' | 'agent' = 'agent',
): Promise<unknown> {
  const unattended =
    asking === 'step'
      ? `. --step waits for a person at every step: to run without stepping, leave out --step (\`stepbox resume ${c.branch}\`, without --step, continues this one to its end)`
      : '';
  io.stderr.write(
    `\nstepbox: input ended (stdin closed), so no one is left to answer: the episode stops before step ${c.currentStep() + 1}; its trace keeps the steps so far and closes as interrupted (${INPUT_ENDED})${unattended}\n`,
  );
  return c.stop(INPUT_ENDED);
}

/**
 * Lets a person be the `manual` agent at the terminal: each decision asks for one
 * assistant message — a JSON tool call such as {"name": "execute_shell", "arguments":
 * {"command": "ls"}}, or plain text as the final answer. End of input stops the episode.
 */
export function promptManualAgent(c: EpisodeRunner, io: CliIo, reader: LineReader): void {
  const agent = manualAgentOf(c.currentAgent());
  if (!agent) return;
  agent.onWaiting((step) => {
    void reader
      .ask(`step ${step} — tool call as JSON {"name": ..., "arguments": {...}}, or a final answer: `)
      .then((line) => {
        // The run waiting on this decision ends with the stop and says its failure, if any.
        if (line === null) stopAtEndOfInput(c, io).catch(() => undefined);
        else agent.provide({ content: line });
      });
  });
}

function report(io: CliIo, reason: StopReason): void {
  if (reason.held) io.stderr.write(describeHeld(reason.held));
  else if (reason.kind === 'breakpoint') io.stderr.write(`breakpoint: ${reason.message}\n`);
  else if (reason.kind === 'ended') io.stderr.write(`${reason.message}\n`);
}
