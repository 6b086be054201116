// ATIF export: every stepbox episode becomes a trajectory that validates against the
// ATIF-v1.7 schema (shared/atif.ts, mirroring Harbor's pydantic models), holding the
// goal, each step's message, calls and what the agent was shown.
import { describe, expect, it } from 'vitest';
import { AtifTrajectory, ATIF_VERSION } from '../../shared/atif.js';
import { atifTrajectory } from '../../electron/engine/export/atif.js';
import { buildExport } from '../../electron/engine/export/run-export.js';
import { parseRedactions } from '../../electron/engine/export/redact.js';
import { checkEpisode } from '../../shared/qa/check-episode.js';
import type { BranchCheck } from '../../electron/engine/qa/check-branches.js';
import { loadedBranch, QaTrace, sh } from '../support/qa-traces.js';

function sample(): QaTrace {
  const t = new QaTrace(undefined, { episode: 'ep-atif' }).step({ calls: [sh('cat test_x.py')] });
  t.push({ type: 'injected', step: 1, source: 'injected', role: 'user', content: 'hint: look at calc.py' });
  return t
    .step({
      calls: [sh('python3 test_x.py', { ok: false, error: { code: 'timeout', message: 'slow' } } as never)],
    })
    .step({ final: 'fixed' })
    .end();
}

describe('ATIF export', () => {
  it('validates against the ATIF-v1.7 schema and keeps goal, calls, observations and outcome', () => {
    const t = sample();
    const doc = atifTrajectory(t.events());
    const parsed = AtifTrajectory.safeParse(JSON.parse(JSON.stringify(doc)));
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    expect(doc.schema_version).toBe(ATIF_VERSION);
    expect(doc.steps.map((s) => s.source)).toEqual(['user', 'agent', 'user', 'agent', 'agent']);
    expect(doc.steps[0].message).toBe(String(t.task.goal));
    const [, first, hint, second, last] = doc.steps;
    expect(first.tool_calls?.[0]).toMatchObject({
      function_name: 'execute_shell',
      arguments: { command: 'cat test_x.py' },
    });
    expect(first.observation?.results[0].source_call_id).toBe(first.tool_calls?.[0].tool_call_id);
    expect(hint.message).toBe('hint: look at calc.py');
    expect(JSON.parse(second.observation?.results[0].content as string)).toMatchObject({
      ok: false,
      error: { code: 'timeout' },
    });
    expect(last.message).toBe('fixed');
    expect(doc.final_metrics?.total_steps).toBe(5);
    expect(doc.extra).toMatchObject({ stepbox: { status: 'succeeded', episode: 'ep-atif' } });
  });

  it('exports through buildExport as one valid trajectory per line', () => {
    const t = sample();
    const b = loadedBranch(t);
    const checks = new Map<string, BranchCheck>([
      [
        b.branch,
        { episode: b.episode, branch: b.branch, ...checkEpisode({ events: b.trace.events, torn: false }) },
      ],
    ]);
    const out = buildExport([b], checks, {
      format: 'atif',
      excludeInjected: false,
      redaction: parseRedactions([]),
    });
    const lines = out.text.trim().split('\n');
    expect(lines).toHaveLength(1);
    for (const line of lines) expect(AtifTrajectory.safeParse(JSON.parse(line)).success).toBe(true);
  });

  it('the schema refuses what Harbor refuses', () => {
    const good = JSON.parse(JSON.stringify(atifTrajectory(sample().events())));
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the test mutates arbitrary paths of a JSON document
    const bad = (mutate: (d: Record<string, any>) => void) => {
      const d = structuredClone(good);
      mutate(d);
      return AtifTrajectory.safeParse(d).success;
    };
    expect(bad(() => undefined)).toBe(true);
    expect(bad((d) => (d.unknown = 1))).toBe(false);
    expect(bad((d) => (d.schema_version = 'ATIF-v9'))).toBe(false);
    expect(bad((d) => (d.steps[1].step_id = 7))).toBe(false);
    expect(bad((d) => (d.steps[0].tool_calls = []))).toBe(false);
    expect(bad((d) => (d.steps[1].observation.results[0].source_call_id = 'nope'))).toBe(false);
    expect(bad((d) => (d.steps = []))).toBe(false);
    expect(bad((d) => delete d.agent.name)).toBe(false);
    expect(bad((d) => (d.steps[1].source = 'robot'))).toBe(false);
  });
});
