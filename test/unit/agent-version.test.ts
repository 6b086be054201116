import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRedactions } from '../../electron/engine/export/redact.js';
import { shareData } from '../../electron/engine/share/share-data.js';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { summarizeBranch } from '../../electron/services/branch-summary.js';
import { agentOutputCaption } from '../../renderer/src/stores/agent-output/agent-output-store.js';
import { agentVersionOf, agentWords } from '../../shared/agent-kind.js';
import { runCli } from '../support/cli.js';
import { writeSampleEpisode } from '../support/traces.js';

// An episode of a shipped recipe records which version ran it (`recipe: codex@0.171.0` in its
// header); every view said `codex` alone: the window, `show`, `show --json` and `share`. One
// function reads the version (shared/agent-kind.ts) and each view says it.

describe("a recipe agent's version, read from its trace header", () => {
  it('is the recipe’s version when the recipe is the spec’s name at a version; else null', () => {
    expect(agentVersionOf({ spec: 'codex', recipe: 'codex@0.171.0' })).toBe('0.171.0');
    expect(agentVersionOf({ spec: 'claude-code', recipe: 'claude-code@2.1.332' })).toBe('2.1.332');
    expect(agentVersionOf({ spec: 'codex' })).toBeNull();
    expect(agentVersionOf({ spec: 'scripted:agent.jsonl' })).toBeNull();
    // A header is untrusted input: another name, no version, an escape sequence, any length.
    expect(agentVersionOf({ spec: 'codex', recipe: 'gemini@0.61.0' })).toBeNull();
    expect(agentVersionOf({ spec: 'codex', recipe: 'codex' })).toBeNull();
    expect(agentVersionOf({ spec: 'codex', recipe: 'codex@0.171.0\u001b]0;pwned\u0007' })).toBeNull();
    expect(agentVersionOf({ spec: 'codex', recipe: `codex@1.${'0'.repeat(80)}` })).toBeNull();
    expect(agentVersionOf({ spec: 'codex', recipe: 42 })).toBeNull();
    expect(agentWords('codex', '0.171.0')).toBe('codex 0.171.0');
    expect(agentWords('sandbox:python3 a.py', null)).toBe('sandbox:python3 a.py');
  });

  it('the window’s summary, its Agent tab, show (text and --json) and share all say codex 0.171.0', async () => {
    const home = mkdtempSync(join(tmpdir(), 'stepbox-agent-version-'));
    try {
      const store = openEpisodeStore(home);
      const ep = await writeSampleEpisode(store, { agent: 'codex', recipe: 'codex@0.171.0', steps: 2 });
      const info = store.resolve(ep.branch);
      const trace = store.readTrace(info);
      const events = trace.events.filter((e) => e.type !== 'header');
      // The window reads the branch summary; its Agent tab names the agent from it.
      const summary = summarizeBranch(info, trace.header, events, 0, false);
      expect(summary).toMatchObject({ agent: 'codex', agent_version: '0.171.0' });
      expect(agentOutputCaption(1, false, agentWords(summary.agent, summary.agent_version))).toBe(
        'What the agent program, codex 0.171.0, printed from its start to the end of step 1.',
      );
      expect((await shareData(store, ep.branch, parseRedactions([]))).agent).toBe('codex 0.171.0');
      const env = { env: { STEPBOX_HOME: home } };
      const text = await runCli(['show', ep.branch], env);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toMatch(/^task sample-task {2}agent codex 0\.171\.0 {2}image /m);
      const json = await runCli(['show', ep.branch, '--json'], env);
      expect(JSON.parse(json.stdout)).toMatchObject({ agent: 'codex', agent_version: '0.171.0' });
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
