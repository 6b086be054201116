// Issue 33, item 7: what a person types in the Inject panel belongs to the episode it was typed
// for; opening another shows that one's drafts (or none), and coming back brings them back.
import { describe, expect, it } from 'vitest';
import type { StepboxClient } from '../../shared/contract/client.js';
import { createInjectStore } from '../../renderer/src/stores/inject/inject-store.js';
import { createNoticesStore } from '../../renderer/src/stores/notices/notices-store.js';

describe('per-episode form state', () => {
  it('keeps the Inject drafts per branch: nothing carries into another episode', () => {
    const inject = createInjectStore({} as StepboxClient);
    inject.getState().follow('ep-a');
    inject.setState({ overrideText: 'replacement output typed for Codex', text: 'take an umbrella' });
    inject.getState().setDecision({ tool: 'read_file', args: '{"path": "x"}' });
    inject.getState().follow('ep-case');
    expect(inject.getState()).toMatchObject({
      overrideText: '',
      text: '',
      decideTool: 'execute_shell',
      decideArgs: '{"command": "ls -la"}',
    });
    inject.getState().follow('ep-a');
    expect(inject.getState()).toMatchObject({
      overrideText: 'replacement output typed for Codex',
      text: 'take an umbrella',
      decideTool: 'read_file',
    });
  });

  it('a message about an episode goes when another is opened; the window’s own stay; × dismisses', () => {
    const notices = createNoticesStore();
    const a = notices
      .getState()
      .post({ branch: 'ep-a', kind: 'share', text: 'a.html: 18.9 KiB', tone: 'info' });
    notices.getState().post({ branch: null, kind: 'idle-release', text: 'released', tone: 'info' });
    // The same kind about the same branch replaces, not stacks.
    notices.getState().post({ branch: 'ep-a', kind: 'share', text: 'a.html: 19.0 KiB', tone: 'info' });
    expect(notices.getState().items.map((n) => n.text)).toEqual(['released', 'a.html: 19.0 KiB']);
    notices.getState().follow('ep-b');
    expect(notices.getState().items.map((n) => n.text)).toEqual(['released']);
    notices.getState().dismiss(notices.getState().items[0].id);
    expect(notices.getState().items).toEqual([]);
    expect(a).toBeGreaterThan(0);
  });
});
