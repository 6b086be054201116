import { parseArgs } from 'node:util';
import type { IndexedFlag } from '../engine/trace/episode-index.js';
import { branchTimeline, type TimelineStep } from '../engine/trace/branch-timeline.js';
import { endDetail } from '../engine/trace/branch-outcome.js';
import { verdictWords, verifierOutputTail } from '../../shared/end-words.js';
import { terminalSafe } from '../../shared/terminal-text.js';
import { taskCheckOf } from '../../shared/task-check.js';
import { formatDuration } from '../../shared/format-duration.js';
import { discountedReturnText, finalRewardText, stepsText } from '../../shared/format-outcome.js';
import { oneLineJson, outcomeText } from '../../shared/step-summary.js';
import { oneLine } from '../../shared/one-line.js';
import { countOf } from '../../shared/count-of.js';
import { agentVersionOf, agentWords } from '../../shared/agent-kind.js';
import { execWrapperOf, execWrapperText } from '../../shared/exec-wrapper.js';
import type { ToolResult } from '../../shared/tool-result.js';
import type { CliCommand, CliIo } from './command.js';
import { EXIT, UsageError } from './command.js';
import { openStoreAndIndex, printJson, resolveArg } from './store-common.js';
import { currentFlags } from '../engine/qa/check-branches.js';
import { parseOrUsage } from './parse-or-usage.js';

const HELP = `stepbox show EPISODE [--json]

Prints the timeline of an episode or branch (any id from \`stepbox list\`, or a unique
prefix): per step the action (tool and arguments, final answer or parse error), the
result (exit code, error code, duration), injected / human / override items marked,
memory writes, reward, the snapshot's changed-file count and QA flags. A fork shows the
steps it inherited from its parent first.

Options:
  --json   print {episode, branch, parent, fork_step, task, agent, agent_version (the version
           of the recipe that ran it, or null), status, end_reason, end_detail
           (what the fatal error that ended it said, or null), verifier, verdict (the verifier's
           verdict in the window's words; when none ran, the task's check and why it did not
           run, or "no verifier"; null while running),
           return, gamma (the return's discount), final_reward, steps_done, unfinished (steps
           begun and not finished), steps: [{step, branch, action, kind, calls, results (each with
           the stdout, stderr and error the agent saw, and exec_header: what the header an
           agent's own tool wrote above its output says, or null), injected, memory_writes, reward, changed,
           errors, flags, partial}]}; flags are the ones the window and \`check\` give

Examples:
  npx stepbox show ep-20261129-084512-3f2a
  npx stepbox show ep-2026112 --json
`;

/**
 * The step's results, one line each (the tool result in `outcomeText`'s words, as the window says
 * it); a call an agent's own tool ran adds what else its output's header says (wall time, tokens):
 * its exit is already the outcome's, and its time is the header's (stepbox measured none, "—").
 */
export function resultLines(s: TimelineStep, full: ReadonlyMap<string, ToolResult>): string[] {
  return s.results.map((r) => {
    const wrapper = execWrapperOf(full.get(`${s.step}:${r.call_id}`));
    const facts = wrapper ? execWrapperText(wrapper, { exitSaid: true }) : '';
    const time = wrapper && r.duration_ms === null ? '' : ` · ${formatDuration(r.duration_ms)}`;
    const header = facts ? ` · ${facts} (in its tool's output header)` : '';
    const marks = [r.fallback ? 'fallback' : '', r.overridden ? 'overridden: agent saw this' : ''].filter(
      Boolean,
    );
    // What the tool really returned when the agent saw something else (the window shows both too).
    const real = r.real ? ` · real: ${outcomeText(r.real)}` : '';
    return `→ ${r.name}: ${outcomeText(r)}${time}${header}${marks.length ? ` (${marks.join(', ')})` : ''}${real}`;
  });
}

/** The mark of a person's intervention in `stepbox show`. */
const INTERVENTION_MARK = {
  injected: 'injected',
  override: 'override',
  human_command: 'human',
  edit: 'edited',
  replaced: 'replaced',
} as const;

function stepText(
  s: TimelineStep,
  flags: readonly IndexedFlag[],
  ownBranch: string,
  full: ReadonlyMap<string, ToolResult>,
): string {
  const lines: string[] = [];
  lines.push(s.action);
  lines.push(...resultLines(s, full));
  // In the order they happened: a message injected at step k is added after its step, for the
  // agent to read at the next one (printed before the action, it read as read by this one).
  for (const i of s.injected) lines.push(`[${INTERVENTION_MARK[i.type]}] ${i.summary}`);
  for (const m of s.memory_writes)
    lines.push(
      `memory ${m.key}: ${oneLineJson(m.before, 30, 'undefined')} → ${oneLineJson(m.after, 30, 'undefined')} (by ${m.writer})${m.corruption ? `  ⚠ ${m.corruption}` : ''}`,
    );
  for (const e of s.errors) lines.push(`${e.fatal ? 'FATAL ' : ''}error ${e.code}: ${oneLine(e.message)}`);
  for (const w of s.warnings) lines.push(`warning ${w.code}: ${oneLine(w.message)}`);
  for (const r of s.rollbacks) lines.push(`rollback to step ${r.to_step} (${r.reason})`);
  const tail = [
    s.reward === null ? '' : `reward ${s.reward >= 0 ? '+' : ''}${s.reward.toFixed(2)}`,
    s.changed === null
      ? 'no snapshot (incomplete step)'
      : `${s.changed} file${s.changed === 1 ? '' : 's'} changed`,
  ].filter(Boolean);
  lines.push(tail.join(' · '));
  for (const f of flags) lines.push(`⚑ ${f.rule} (${f.severity}): ${oneLine(f.message)}`);
  const label = `step ${s.step}${s.branch !== ownBranch ? ` (${s.branch})` : ''}${s.partial ? ' [partial]' : ''}`;
  return lines
    .map((l, i) => `${i === 0 ? label.padEnd(8) : ' '.repeat(Math.max(8, label.length))}  ${l}`)
    .join('\n');
}

function print(io: CliIo, text: string): void {
  io.stdout.write(text + '\n');
}

/** `stepbox show` — one episode's timeline. */
export const command: CliCommand = {
  name: 'show',
  summary: 'print the timeline of an episode or branch',
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseOrUsage(() =>
      parseArgs({
        args: argv,
        options: { json: { type: 'boolean', default: false } },
        allowPositionals: true,
      }),
    );
    if (positionals.length !== 1)
      throw new UsageError('expected exactly one EPISODE (an id or prefix from `stepbox list`)');
    const { store, index } = openStoreAndIndex(io);
    const branch = resolveArg(store, positionals[0]);
    const t = branchTimeline(store, branch);
    // The flags the window and the shared file show: computed once per trace version, one rule set.
    const flags = await currentFlags(store, index, branch);
    const row = index.branch(branch.branch);
    index.close();
    for (const w of t.warnings) io.stderr.write(`stepbox show: ${w}\n`);
    const flagsAt = (step: number | null) => flags.filter((f) => f.step === step);
    // Step 0 (setup) is printed when something happened there: a person's command, a flag.
    const steps = t.steps.filter(
      (s) => s.step >= 1 || s.injected.length > 0 || (s.branch === branch.branch && flagsAt(0).length > 0),
    );
    const decisions = t.steps.filter((s) => s.step >= 1).length;
    const status = t.end?.status ?? 'running';
    const task = typeof t.header.task.name === 'string' ? t.header.task.name : '(unnamed)';
    const agentVersion = agentVersionOf(t.header.agent);
    // What the fatal error that ended it said (a model server's answer), whole: step 0 is not printed.
    const detail = endDetail(
      t.end,
      t.steps.flatMap((s) => s.errors),
    );
    // An end without a verifier's result says whether its task has a check, and why it did not run.
    const verdict = t.end
      ? verdictWords(t.end.verifier, { status: t.end.status, check: taskCheckOf(t.header.task) })
      : null;
    if (values.json) {
      printJson(io, {
        episode: branch.episode,
        branch: branch.branch,
        parent: branch.parentBranch,
        fork_step: branch.forkStep,
        task,
        agent: t.header.agent.spec,
        agent_version: agentVersion,
        status,
        end_reason: t.end?.end_reason ?? null,
        end_detail: detail,
        verifier: t.end?.verifier ?? null,
        verdict: verdict,
        return: row?.return ?? null,
        gamma: row?.gamma ?? null,
        final_reward: row?.final_reward ?? null,
        steps_done: row?.steps ?? decisions,
        unfinished: row?.unfinished ?? 0,
        flags: flagsAt(null),
        steps: steps.map((s) => ({
          step: s.step,
          branch: s.branch,
          kind: s.kind,
          action: s.action,
          final: s.final,
          parse_error: s.parse_error,
          calls: s.calls,
          // Each result with the output text the agent saw (as `replay --json` and the trace have it).
          results: s.results.map((r) => {
            const full = t.results.get(`${s.step}:${r.call_id}`);
            const wrapper = execWrapperOf(full);
            return {
              ...r,
              stdout: full?.stdout ?? null,
              // Read from the header an agent's own tool wrote above its output (stdout stays as recorded).
              exec_header: wrapper && {
                exit_code: wrapper.exitCode,
                wall_time_s: wrapper.wallTimeS,
                session_id: wrapper.sessionId,
                chunk_id: wrapper.chunkId,
                original_token_count: wrapper.originalTokens,
                output: wrapper.output,
              },
              stderr: full?.stderr ?? null,
              error: full?.error ?? null,
              truncated: full?.truncated ?? null,
            };
          }),
          injected: s.injected,
          memory_writes: s.memory_writes,
          reward: s.reward,
          reward_components: s.reward_components,
          changed: s.changed,
          tree_hash: s.tree_hash,
          errors: s.errors,
          warnings: s.warnings,
          rollbacks: s.rollbacks,
          flags: s.branch === branch.branch ? flagsAt(s.step) : [],
          partial: s.partial,
        })),
      });
      return EXIT.ok;
    }
    const v = t.end?.verifier;
    print(
      io,
      `episode ${branch.episode}  branch ${branch.branch}${branch.parentBranch ? `  (fork of ${branch.parentBranch} at step ${branch.forkStep})` : ''}`,
    );
    print(
      io,
      `task ${task}  agent ${agentWords(t.header.agent.spec, agentVersion)}  image ${t.header.image}`,
    );
    print(
      io,
      `status ${status}${t.end ? ` (${t.end.end_reason})` : ''}  ${verdict === null ? '' : `${verdict}  `}${discountedReturnText(row?.return ?? null, row?.gamma)}  ${finalRewardText(row?.final_reward ?? null)}  ${row ? stepsText(row.steps, row.unfinished, status === 'running') : countOf(decisions, 'step')}`,
    );
    if (detail !== null) print(io, `ended by ${t.end?.end_reason ?? 'an error'}: ${detail}`);
    // What the verifier printed (its last lines), as the window's and the shared file's Details have it.
    const printed = verifierOutputTail(v);
    // Untrusted text (the task's test script's output): stripped of control sequences for the terminal.
    if (printed !== null) print(io, `the verifier printed:\n${terminalSafe(printed).replace(/^/gm, '  ')}`);
    for (const f of flagsAt(null)) print(io, `⚑ ${f.rule} (${f.severity}): ${oneLine(f.message)}`);
    print(io, '');
    for (const s of steps)
      print(io, stepText(s, s.branch === branch.branch ? flagsAt(s.step) : [], branch.branch, t.results));
    return EXIT.ok;
  },
};
