// The Inject panel's Decision box after sending: cleared for the next decision (the tool kept),
// the ones sent a ↑ away as in a shell; a send that failed keeps what was typed.
import { describe, expect, it } from 'vitest';
import type { StepboxClient } from '../../shared/contract/client.js';
import { createInjectStore } from '../../renderer/src/stores/inject/inject-store.js';

function clientAnswering(ok: boolean): { client: StepboxClient; sent: unknown[] } {
  const sent: unknown[] = [];
  const client = {
    episode: {
      decide: (req: unknown) => {
        sent.push(req);
        return Promise.resolve(
          ok
            ? { ok: true, value: null }
            : { ok: false, error: { code: 'conflict', message: 'episode ended' } },
        );
      },
    },
  } as unknown as StepboxClient;
  return { client, sent };
}

describe('the Decision box', () => {
  it('is cleared once a decision is sent; ↑ brings back the ones sent, newest first, ↓ the empty box', async () => {
    const { client, sent } = clientAnswering(true);
    const inject = createInjectStore(client);
    const s = () => inject.getState();
    s().setDecision({ tool: 'execute_shell', args: '{"command": "echo one"}' });
    expect(await s().decide('ep')).toBe(true);
    expect(s()).toMatchObject({ decideTool: 'execute_shell', decideArgs: '', decideText: '' });
    s().setDecision({ tool: 'read_file', args: '{"path": "two"}', text: 'reading' });
    expect(await s().decide('ep')).toBe(true);
    expect(sent).toHaveLength(2);
    expect(s()).toMatchObject({ decideTool: 'read_file', decideArgs: '', decideText: '' });

    s().recallDecision(-1);
    expect(s()).toMatchObject({
      decideTool: 'read_file',
      decideArgs: '{"path": "two"}',
      decideText: 'reading',
    });
    s().recallDecision(-1);
    expect(s()).toMatchObject({ decideTool: 'execute_shell', decideArgs: '{"command": "echo one"}' });
    s().recallDecision(-1); // the oldest stays
    expect(s().decideArgs).toBe('{"command": "echo one"}');
    s().recallDecision(1);
    s().recallDecision(1);
    expect(s()).toMatchObject({ decideArgs: '', decideText: '' });
  });

  it('keeps what was typed when the send failed', async () => {
    const inject = createInjectStore(clientAnswering(false).client);
    inject.getState().setDecision({ args: '{"command": "ls"}' });
    expect(await inject.getState().decide('ep')).toBe(false);
    expect(inject.getState().decideArgs).toBe('{"command": "ls"}');
    expect(inject.getState().error).not.toBeNull();
  });
});
