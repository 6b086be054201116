import { dirname, join } from 'node:path';
import { existsSync } from 'node:fs';
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

/** Where the oracle puts a Harbor task's solution/ in the sandbox (outside the workspace: never snapshotted). */
export const ORACLE_SOLUTION_DIR = '/tmp/solution';

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
    const dir = taskPath ? join(dirname(taskPath), 'solution') : null;
    if (!dir || !existsSync(join(dir, 'solve.sh')))
      throw new AgentFailure(
        'bad_agent_spec',
        `--agent oracle runs a Harbor task's solution/solve.sh, and ${taskPath ? `${dirname(taskPath)} has none` : 'this task has no folder'}; add solution/solve.sh or pick another agent`,
      );
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
