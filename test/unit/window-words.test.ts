import { describe, expect, it } from 'vitest';
import { createReplayStore } from '../../renderer/src/stores/replay/replay-store.js';
import { inWindowWords } from '../../renderer/src/stores/window-words.js';
import { createFakeBackend } from '../support/renderer-fake-client.js';

describe('engine errors in the window’s words (one place: window-words, through errorText)', () => {
  it('names the window’s fields where the engine names CLI flags', () => {
    expect(
      inWindowWords(
        'openai:m would continue a recorded episode at a default endpoint; name the endpoint: --agent openai:m@URL or --base-url URL',
      ),
    ).toBe(
      'openai:m would continue a recorded episode at a default endpoint; name the endpoint: “Agent” openai:m@URL',
    );
    expect(inWindowWords('exec:x needs --model SOURCE to answer its model calls')).toBe(
      'exec:x needs “Its model calls answered by” to answer its model calls',
    );
    expect(inWindowWords("give the agent again, e.g. --agent 'exec:python3 a.py'")).toBe(
      "give the agent again, e.g. “Agent” 'exec:python3 a.py'",
    );
    expect(inWindowWords('agent spec "openai:" needs an argument')).toBe(
      '“Agent” "openai:" needs an argument',
    );
    expect(inWindowWords('--at 9: ep-1 has steps 0..3')).toBe('step 9: ep-1 has steps 0..3');
    expect(inWindowWords('no candidates: give --n N, --from FILE, or type one')).toBe(
      'no candidates: give “candidates from the agent” a number, or type one',
    );
  });

  it('the Replay panel’s fork shows the worded error and sends its “Agent” (and model) when given', async () => {
    const backend = createFakeBackend();
    backend.on('episode.fork', () => ({
      code: 'usage',
      message:
        'openai:m would continue a recorded episode at a default endpoint; name the endpoint: --agent openai:m@URL or --base-url URL',
    }));
    const replay = createReplayStore(backend.client);
    await replay.getState().fork('ep-1', 1);
    expect(replay.getState().error).toBe(
      'Fork at step 1 did not start: openai:m would continue a recorded episode at a default endpoint; name the endpoint: “Agent” openai:m@URL',
    );
    replay.getState().setAgent(' openai:m@http://127.0.0.1:9/v1 ');
    expect(replay.getState().error).toBeNull();
    await replay.getState().reopen('ep-1', 1);
    replay.getState().setAgent('exec:python3 a.py');
    replay.getState().setModel('manual');
    await replay.getState().fork('ep-1', 1);
    expect(backend.callsOf('episode.fork')).toEqual([
      { id: 'ep-1', step: 1 },
      { id: 'ep-1', step: 1, agent: 'exec:python3 a.py', agent_options: { model: 'manual' } },
    ]);
    expect(backend.callsOf('episode.reopen')).toEqual([
      { id: 'ep-1', step: 1, agent: 'openai:m@http://127.0.0.1:9/v1' },
    ]);
  });
});
