import { describe, expect, it } from 'vitest';
import { section } from '../../electron/bench/external';

// The external section needs no Docker: it runs in the unit tier, so a change to the model
// endpoint that leaves the bench waiting (300 identical requests were answered as one resent
// call, and the loop waited for a second model call forever) fails here, not in a bench run.
describe('bench section external', () => {
  it('runs its 300 model calls and 300 MCP calls to the end and reports both figures', async () => {
    const logs: string[] = [];
    const out = await section.run((m) => logs.push(m));
    expect(logs.at(-1)).toMatch(/MCP tool calls/);
    expect(out.external_calls).toBe(300);
    expect(typeof out.external_model_call_overhead_ms).toBe('number');
    expect(typeof out.external_mcp_call_overhead_ms).toBe('number');
  }, 60_000);
});
