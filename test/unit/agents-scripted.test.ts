import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgentFailure } from '../../electron/engine/agents/agent.js';
import { createAgent, parseAgentSpec } from '../../electron/engine/agents/agent-spec.js';
import { DecisionReleased, ManualAgent } from '../../electron/engine/agents/manual-agent.js';
import { parseScript } from '../../electron/engine/agents/scripted-agent.js';

const input = { step: 1, messages: [], tools: [] };

describe('agent specs and the scripted agent', () => {
  it('parses the four spec forms and rejects others with the accepted forms', () => {
    expect(parseAgentSpec('scripted:a.jsonl')).toEqual({ kind: 'scripted', path: 'a.jsonl' });
    expect(parseAgentSpec('replay:ep-1')).toEqual({ kind: 'replay', episode: 'ep-1' });
    expect(parseAgentSpec('openai:qwen2.5:7b')).toEqual({ kind: 'openai', model: 'qwen2.5:7b' });
    expect(parseAgentSpec('manual')).toEqual({ kind: 'manual' });
    expect(() => parseAgentSpec('gpt4')).toThrow(
      /scripted:FILE, replay:EPISODE, openai:MODEL\[@BASE_URL\], manual or exec:CMD/,
    );
    expect(() => parseAgentSpec('scripted:')).toThrow(/needs an argument/);
  });

  it('never shows a line of the file in its error (a host file given as a script stays unread)', () => {
    const passwd = 'root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/usr/sbin:/usr/sbin/nologin\n';
    let message = '';
    try {
      parseScript(passwd, '/etc/passwd');
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/^\/etc\/passwd line 1 is not JSON/);
    expect(message).not.toMatch(/root|bash|x:0/);
    let other = '';
    try {
      parseScript('{"content": "secret-value", ', 'a.jsonl');
    } catch (e) {
      other = (e as Error).message;
    }
    expect(other).toMatch(/^a\.jsonl line 1 is not JSON/);
    expect(other).not.toContain('secret-value');
  });

  it('names the line that is not JSON', () => {
    try {
      parseScript('{"content":"a"}\n\n{not json}\n', 'agent.jsonl');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(AgentFailure);
      expect((e as AgentFailure).endReason).toBe('script_error');
      expect((e as Error).message).toMatch(/agent\.jsonl line 3 is not JSON/);
    }
  });

  it('turns object arguments into JSON strings and runs out with script_exhausted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stepbox-script-'));
    const path = join(dir, 'a.jsonl');
    writeFileSync(
      path,
      JSON.stringify({
        tool_calls: [{ id: 'x', function: { name: 'execute_shell', arguments: { command: 'ls' } } }],
      }) + '\n',
    );
    const agent = createAgent(`scripted:${path}`);
    const d = await agent.decide(input);
    expect((d.message.tool_calls as { function: { arguments: string } }[])[0].function.arguments).toBe(
      '{"command":"ls"}',
    );
    await expect(agent.decide(input)).rejects.toMatchObject({ endReason: 'script_exhausted' });
  });

  it('skips lines already consumed (fork and resume)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stepbox-script-'));
    const path = join(dir, 'a.jsonl');
    writeFileSync(path, '{"content":"one"}\n{"content":"two"}\n');
    const agent = createAgent(`scripted:${path}`, { skip: 1 });
    expect((await agent.decide(input)).raw).toBe('two');
  });

  it('the manual agent waits for provide()', async () => {
    const agent = new ManualAgent();
    const waiting = new Promise<number>((r) => agent.onWaiting(r));
    const decision = agent.decide(input);
    expect(await waiting).toBe(1);
    agent.provide({ content: 'final words' });
    expect((await decision).raw).toBe('final words');
  });

  it("a release ends the manual agent's wait without a decision; the next wait takes one", async () => {
    const agent = new ManualAgent();
    const waiting = new Promise<number>((r) => agent.onWaiting(r));
    const first = agent.decide(input);
    await waiting;
    agent.release();
    await expect(first).rejects.toBeInstanceOf(DecisionReleased);
    expect(agent.waiting()).toBe(false);
    // A release that found no wait ends the next one at once, unless cleared first.
    agent.release();
    await expect(agent.decide(input)).rejects.toThrow(/waits for your decision/);
    agent.release();
    agent.clearRelease();
    const second = agent.decide(input);
    agent.provide({ content: 'done' });
    expect((await second).raw).toBe('done');
  });
});
