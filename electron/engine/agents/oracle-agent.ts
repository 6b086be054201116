import { noSolutionWords } from '../../../shared/agent-words.js';
import { dirname, join } from 'node:path';
import { existsSync, statSync } from 'node:fs';
import { readFolderFiles } from '../folder-files.js';
import {
  NEEDS_NOTHING,
  AgentEnded,
  AgentFailure,
  type Agent,
  type DecideInput,
  type Decision,
} from './agent.js';
import { rawOf } from './scripted-agent.js';

/** The oracle as the CLI's words name it. */
export const ORACLE_FLAG = '--agent oracle';

/** Where the oracle puts a Harbor task's solution/ in the sandbox (outside the workspace: never snapshotted). */
export const ORACLE_SOLUTION_DIR = '/tmp/solution';

/**
 * The folder of the solution the oracle runs for the task at `taskPath` (a task file, or a
 * task's folder): its `solution/`, when `solution/solve.sh` is there; else null. The one rule
 * for the oracle's start check (CLI and window), the project cards and the agent itself.
 */
export function oracleSolutionDir(taskPath: string | null): string | null {
  if (!taskPath) return null;
  const dir = join(folderOf(taskPath), 'solution');
  return existsSync(join(dir, 'solve.sh')) ? dir : null;
}

/**
 * Why the oracle cannot run on the task at `taskPath`, or null: said before anything starts.
 * `lead` names the agent as the reader typed it (`--agent oracle` in the CLI, `Agent: oracle`
 * in the window); `folder` is the task's folder as the message says it.
 */
export function oracleProblem(taskPath: string | null, lead: string): string | null {
  if (oracleSolutionDir(taskPath) !== null) return null;
  const where = taskPath ? `${folderOf(taskPath)} has none` : 'this task has no folder';
  return noSolutionWords(lead, where);
}

/** The folder of a task path (itself when it is one). */
function folderOf(taskPath: string): string {
  try {
    if (statSync(taskPath).isDirectory()) return taskPath;
  } catch {
    // Gone: its parent is looked in, and the start says what is missing.
  }
  return dirname(taskPath);
}

/**
 * Harbor's oracle (`--agent oracle`): its one step writes the task's `solution/` (next to its
 * task.toml; never in the image or the workspace) to {@link ORACLE_SOLUTION_DIR} with
 * write_file and runs `bash solve.sh` there from the working directory, recorded like any
 * step; then it ends the episode and the verifier runs. It checks that a task is solvable.
 */
export class OracleAgent implements Agent {
  readonly kind = 'oracle' as const;
  readonly needs = NEEDS_NOTHING;
  readonly spec = 'oracle';
  private decided: number;

  constructor(skip = 0) {
    this.decided = skip;
  }

  async decide(input: DecideInput): Promise<Decision> {
    if (this.decided > 0) throw new AgentEnded('solution_ran', 'the oracle ran solution/solve.sh');
    const taskPath = input.context?.taskPath ?? null;
    const dir = oracleSolutionDir(taskPath);
    if (!dir) throw new AgentFailure('bad_agent_spec', oracleProblem(taskPath, ORACLE_FLAG) ?? '');
    const files = readFolderFiles(dir, dir, dirname(dir));
    if (!files.ok) throw new AgentFailure('bad_agent_spec', files.error.message);
    this.decided += 1;
    const calls = Object.entries(files.value).map(([rel, f], i) => ({
      id: `oracle-${i + 1}`,
      type: 'function',
      function: {
        name: 'write_file',
        arguments: JSON.stringify(
          typeof f === 'string'
            ? { path: `${ORACLE_SOLUTION_DIR}/${rel}`, content: f }
            : { path: `${ORACLE_SOLUTION_DIR}/${rel}`, content: f.base64, encoding: 'base64' },
        ),
      },
    }));
    calls.push({
      id: `oracle-${calls.length + 1}`,
      type: 'function',
      function: {
        name: 'execute_shell',
        arguments: JSON.stringify({ command: `bash ${ORACLE_SOLUTION_DIR}/solve.sh` }),
      },
    });
    const message = { content: null, tool_calls: calls };
    return { raw: rawOf(message), message, latencyMs: 0 };
  }

  describe(): Record<string, unknown> {
    return { solution_dir: ORACLE_SOLUTION_DIR };
  }
}
