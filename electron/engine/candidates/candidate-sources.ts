import { driverOf } from '../agents/agent-driver.js';
import { parseScript, readScript } from '../agents/scripted-agent.js';
import type { CandidateSource } from './try-candidates.js';

/**
 * The candidate sources of one request: `n` decisions of the branch's own agent (seeds
 * `seed`, `seed+1`, … for a model endpoint; at most one from a script or a recording,
 * whose next answer is fixed), then the messages a person typed, then FILE's lines
 * (the scripted-agent JSONL: one assistant message per line).
 */
export function candidateSources(options: {
  readonly agentKind: string;
  readonly n: number;
  readonly seed?: number;
  readonly typed?: readonly unknown[];
  readonly file?: string;
}): { sources: CandidateSource[]; notes: string[] } {
  const notes: string[] = [];
  // A script or a recording has one next answer (asking twice gives the same); a person none to ask.
  const decides = driverOf(options.agentKind).decides;
  const fixed = decides === 'script';
  let n = options.n;
  if (decides === 'person' && n > 0) {
    notes.push('the branch is driven by a person (manual agent): type the candidates instead');
    n = 0;
  } else if (fixed && n > 1) {
    notes.push(`a ${options.agentKind} agent has one next answer: 1 model candidate instead of ${n}`);
    n = 1;
  }
  const sources: CandidateSource[] = [];
  for (let i = 0; i < n; i++)
    sources.push(fixed ? { kind: 'model' } : { kind: 'model', seed: (options.seed ?? 0) + i });
  (options.typed ?? []).forEach((m, i) => {
    // The scripted-agent parser checks and normalizes a typed message exactly as a file line.
    const [line] = parseScript(JSON.stringify(m), `typed candidate ${i + 1}`);
    if (line) sources.push({ kind: 'given', origin: 'person', message: line.message });
  });
  if (options.file)
    for (const line of readScript(options.file))
      sources.push({ kind: 'given', origin: 'file', message: line.message });
  return { sources, notes };
}
