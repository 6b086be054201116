import { createInterface } from 'node:readline';
import type { EpisodeRunner } from '../engine/harness/episode-runner.js';
import { HarnessError } from '../engine/harness/harness-error.js';
import type { CliIo } from './command.js';
import { manualAgentOf } from '../engine/agents/manual-agent.js';

/** The keys of `--step` mode, as its prompt shows them. */
export const STEP_KEYS = 'Enter step · c continue · i inject · r N roll back to step N · q stop';

/**
 * Steps an episode from the terminal like a debugger: Enter steps, `c` continues to a
 * breakpoint or the end, `i` injects a message (asks for the role and the text), `r N`
 * rolls back to step N (continuing then forks a branch), `q` stops (the trace closes as
 * `interrupted`). Prompts go to stderr so `--json` keeps stdout to one document.
 */
export async function stepRepl(c: EpisodeRunner, io: CliIo, reader: LineReader): Promise<void> {
  const ask = (prompt: string) => reader.ask(prompt);
  {
    while (!c.ended()) {
      const line = await ask(`[step ${c.currentStep()}] ${STEP_KEYS}> `);
      if (line === null) {
        await c.stop();
        break;
      }
      const cmd = line.trim();
      try {
        if (cmd === '') report(io, await c.step());
        else if (cmd === 'c') report(io, await c.run());
        else if (cmd === 'q') await c.stop();
        else if (cmd === 'i') {
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
          await c.rollbackTo(k);
          io.stderr.write(`rolled back to step ${k}; continuing creates a new branch\n`);
        } else io.stderr.write(`unknown key "${cmd}": ${STEP_KEYS}\n`);
      } catch (e) {
        if (!(e instanceof HarnessError)) throw e;
        io.stderr.write(`${e.message}\n`);
      }
    }
  }
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

/**
 * Lets a person be the `manual` agent at the terminal: each decision asks for one
 * assistant message — a JSON tool call such as {"name": "execute_shell", "arguments":
 * {"command": "ls"}}, or plain text as the final answer. End of input stops the episode.
 */
export function promptManualAgent(c: EpisodeRunner, reader: LineReader): void {
  const agent = manualAgentOf(c.currentAgent());
  if (!agent) return;
  agent.onWaiting((step) => {
    void reader
      .ask(`step ${step} — tool call as JSON {"name": ..., "arguments": {...}}, or a final answer: `)
      .then((line) => {
        if (line === null) void c.stop();
        else agent.provide({ content: line });
      });
  });
}

function report(io: CliIo, reason: { kind: string; message?: string }): void {
  if (reason.kind === 'breakpoint') io.stderr.write(`breakpoint: ${reason.message}\n`);
  else if (reason.kind === 'ended') io.stderr.write(`${reason.message}\n`);
}
