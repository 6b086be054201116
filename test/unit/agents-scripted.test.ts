import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgentFailure } from '../../electron/engine/agents/agent.js';
import { parseAgentSpec } from '../../electron/engine/agents/agent-spec.js';
import { createAgent } from '../../electron/engine/agent-factory.js';
import { DecisionReleased, ManualAgent } from '../../electron/engine/agents/manual-agent.js';
import { exhaustedAdvice, parseScript } from '../../electron/engine/agents/scripted-agent.js';

const input = { step: 1, messages: [], tools: [] };

describe('agent specs and the scripted agent', () => {
  it('parses the four spec forms and rejects others with the accepted forms', () => {
    expect(parseAgentSpec('scripted:a.jsonl')).toEqual({ kind: 'scripted', path: 'a.jsonl' });
    expect(parseAgentSpec('replay:ep-1')).toEqual({ kind: 'replay', episode: 'ep-1' });
    expect(parseAgentSpec('openai:qwen2.5:7b')).toEqual({ kind: 'openai', model: 'qwen2.5:7b' });
    expect(parseAgentSpec('manual')).toEqual({ kind: 'manual' });
    expect(() => parseAgentSpec('gpt4:x')).toThrow(
      /scripted:FILE, replay:EPISODE, openai:MODEL@URL, anthropic:MODEL@URL, gemini:MODEL@URL \(the @URL optional\), manual, exec:CMD or sandbox:CMD/,
    );
    expect(parseAgentSpec('sandbox:codex exec hi')).toEqual({ kind: 'sandbox', command: 'codex exec hi' });
    // A bare name is a recipe; an unknown one names the recipes there are.
    expect(parseAgentSpec('codex')).toEqual({ kind: 'recipe', name: 'codex' });
    expect(() => createAgent('gpt4', { model: 'manual' })).toThrow(
      /unknown agent "gpt4".*recipes: claude-code, codex/,
    );
    expect(() => parseAgentSpec('scripted:')).toThrow(/needs a file after the colon: scripted:FILE/);
  });

  it('a script that is gone (a fork of an episode whose file was deleted) says so and what to give, not ENOENT', () => {
    const gone = join(mkdtempSync(join(tmpdir(), 'gone-')), 'agent.jsonl');
    expect(() => createAgent(`scripted:${gone}`)).toThrow(
      `no script at ${gone}: the agent's file is gone (moved or deleted) or was never there; give one that exists with --agent scripted:FILE`,
    );
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

  it('names a script that ran out from its folder or the store, never by the host path (the trace keeps it)', async () => {
    const home = mkdtempSync(join(tmpdir(), 'stepbox-home-'));
    const inStore = join(mkdtempSync(join(home, 'scripts-')), 'a.jsonl');
    const elsewhere = join(mkdtempSync(join(tmpdir(), 'fatal-error-')), 'agent.jsonl');
    for (const p of [inStore, elsewhere]) writeFileSync(p, '{"content": "done"}\n');
    const outOf = async (path: string) => {
      const agent = createAgent(`scripted:${path}`, { home });
      await agent.decide(input);
      return agent.decide(input).then(
        () => '',
        (e: unknown) => (e as Error).message,
      );
    };
    const store = await outOf(inStore);
    expect(store).toContain(
      `the script $STEPBOX_HOME/${inStore.slice(home.length + 1)} ran out after 1 line`,
    );
    expect(store).not.toContain(tmpdir());
    const folder = await outOf(elsewhere);
    expect(folder).toContain(`the script ${elsewhere.split('/').slice(-2).join('/')} ran out`);
    expect(folder).not.toContain(tmpdir());
    // A script of one's own: how to fix it.
    expect(folder).toMatch(/ran out after 1 line; add lines or end with a final answer$/);
  });

  it("a case's script that ran out says what it stands for, never to edit the bundled script", async () => {
    // A case folder (its expected.json) and its fixed/ variant; the bundled fatal-error case too.
    const dir = mkdtempSync(join(tmpdir(), 'case-'));
    mkdirSync(join(dir, 'fixed'));
    writeFileSync(join(dir, 'expected.json'), '{"rules": [], "status": "error"}');
    const bundled = join(__dirname, '../../resources/cases/fatal-error/agent.jsonl');
    for (const path of [join(dir, 'agent.jsonl'), join(dir, 'fixed', 'agent.jsonl'), bundled]) {
      if (path !== bundled) writeFileSync(path, '{"content": "done"}\n');
      const advice = exhaustedAdvice(path);
      expect(advice, path).not.toMatch(/add lines/);
      expect(advice, path).toBe(
        'the agent it stands in for stopped with no final answer, as an agent that crashes does. Its last step shows what it did; an agent that finishes its work ends with a final answer, so the verifier can run',
      );
    }
    expect(exhaustedAdvice(join(mkdtempSync(join(tmpdir(), 'own-')), 'a.jsonl'))).toBe(
      'add lines or end with a final answer',
    );
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

  it('the manual agent asked after its stop neither waits nor asks: the stop was before the wait', async () => {
    const agent = new ManualAgent();
    const asked: number[] = [];
    agent.onWaiting((step) => asked.push(step));
    const stopped = new AbortController();
    stopped.abort();
    await expect(agent.decide({ ...input, signal: stopped.signal })).rejects.toThrow(
      'the manual agent was stopped while waiting for input',
    );
    expect(asked).toEqual([]);
    expect(agent.waiting()).toBe(false);
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

describe('a script that plays a model with a small context window', () => {
  it('cuts the conversation to the newest messages that fit and records that cut request', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stepbox-script-'));
    const path = join(dir, 'a.jsonl');
    writeFileSync(path, '{"context_window": {"max_chars": 40}}\n{"content": "done"}\n');
    const agent = createAgent(`scripted:${path}`);
    const messages = [
      { role: 'system' as const, content: 'You are an agent.' },
      { role: 'user' as const, content: 'The goal: write version.txt' },
      { role: 'tool' as const, tool_call_id: 'c1', content: 'x'.repeat(30) },
    ];
    const d = await agent.decide({ step: 2, messages, tools: [] });
    // The window line is a setting, not a decision: the first decision is "done".
    expect(d.message.content).toBe('done');
    expect((d.request as { messages: unknown[] }).messages).toEqual([messages[2]]);
    expect(agent.describe()).toMatchObject({ lines: 1, context_window: { max_chars: 40 } });
  });
  it('a script without the line records no request, and a malformed line names the fix', async () => {
    expect(parseScript('{"content": "a"}\n', 's').length).toBe(1);
    expect(() => parseScript('{"context_window": {"max_chars": "big"}}\n', 's.jsonl')).toThrow(
      /s\.jsonl line 1: a context_window line is \{"context_window": \{"max_chars": N\}\}/,
    );
    const dir = mkdtempSync(join(tmpdir(), 'stepbox-script-'));
    writeFileSync(join(dir, 'b.jsonl'), '{"content": "a"}\n');
    const d = await createAgent(`scripted:${join(dir, 'b.jsonl')}`).decide(input);
    expect(d.request).toBeUndefined();
  });
});
