import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { caseFromEpisode } from '../../electron/engine/cases/case-from-episode.js';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { providerName } from '../../electron/engine/export/otel-json.js';
import { writeSampleEpisode } from '../support/traces.js';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'stepbox-case-hosted-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

/** A branch whose verifier failed after the agent said it was done: QA flags it. */
const FAILED = {
  status: 'failed',
  end_reason: 'final_answer',
  verifier: { success: false, exit_code: 1 },
} as const;

describe('case new from a hosted model episode (anthropic:, gemini:)', () => {
  for (const agent of ['anthropic:claude-x@http://127.0.0.1:9/v1', 'gemini:gemini-x@http://127.0.0.1:9']) {
    it(`saves ${agent.split(':')[0]}'s recorded answers as the case's script`, async () => {
      const store = openEpisodeStore(home);
      const ep = await writeSampleEpisode(store, { agent, end: FAILED });
      const made = caseFromEpisode(store, ep.branch, 'hosted-case', { library: join(home, 'cases') });
      const lines = readFileSync(join(made.dir, 'agent.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      // One answer per step, each a chat message the scripted agent plays back.
      expect(lines).toHaveLength(made.steps);
      expect(lines.every((l) => l.role === 'assistant')).toBe(true);
      // Each is the answer the model gave at that step, as recorded.
      expect(JSON.parse(lines[0].content)).toEqual({
        name: 'execute_shell',
        arguments: { command: 'echo 1 > step-1.txt' },
      });
    });
  }

  it('a sandbox: agent is still refused, naming the kinds that are saved', async () => {
    const store = openEpisodeStore(home);
    const ep = await writeSampleEpisode(store, { agent: 'sandbox:codex exec hi', end: FAILED });
    expect(() => caseFromEpisode(store, ep.branch, 'inside', { library: join(home, 'cases') })).toThrow(
      /ran a sandbox agent; case new saves openai, anthropic, gemini, .*exec: episodes/,
    );
  });
});

describe('the OpenTelemetry provider of a recorded agent', () => {
  it('is the model API it speaks, for a hosted agent and a program answered by that source', () => {
    expect(providerName({ kind: 'anthropic' })).toBe('anthropic');
    expect(providerName({ kind: 'gemini' })).toBe('gcp.gemini');
    expect(providerName({ kind: 'sandbox', model_source: 'openai:qwen@http://127.0.0.1:1/v1' })).toBe(
      'openai',
    );
    expect(providerName({ kind: 'exec', model_source: 'anthropic:claude-x' })).toBe('anthropic');
    // A program answered by a script calls no model API.
    expect(providerName({ kind: 'sandbox', model_source: 'scripted:a.jsonl' })).toBe('stepbox.sandbox');
    expect(providerName({ kind: 'scripted' })).toBe('stepbox.scripted');
  });
});
