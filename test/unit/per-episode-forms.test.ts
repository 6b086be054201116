// Issue 33, item 7: what a person types in the Inject panel belongs to the episode it was typed
// for; opening another shows that one's drafts (or none), and coming back brings them back.
import { describe, expect, it } from 'vitest';
import type { StepboxClient } from '../../shared/contract/client.js';
import { createInjectStore } from '../../renderer/src/stores/inject/inject-store.js';
import { NEXT_BRANCH, createNoticesStore } from '../../renderer/src/stores/notices/notices-store.js';
import { createInspectorStore } from '../../renderer/src/stores/inspector/inspector-store.js';

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

  it('keeps each branch’s Inject drafts across a reload, and never shows them on another branch', () => {
    const saved = new Map<string, string>();
    const storage = {
      getItem: (k: string) => saved.get(k) ?? null,
      setItem: (k: string, v: string) => void saved.set(k, v),
    };
    const before = createInjectStore({} as StepboxClient, storage);
    before.getState().follow('ep-a');
    before.getState().setText('check the log before you go on');
    before.getState().follow('ep-b');
    before.getState().setOverrideText('typed for b');
    // The window reloads: a new store over the same storage.
    const after = createInjectStore({} as StepboxClient, storage);
    after.getState().follow('ep-c');
    expect(after.getState()).toMatchObject({ text: '', overrideText: '' });
    after.getState().follow('ep-a');
    expect(after.getState()).toMatchObject({ text: 'check the log before you go on', overrideText: '' });
    after.getState().follow('ep-b');
    expect(after.getState()).toMatchObject({ text: '', overrideText: 'typed for b' });
    // Sent (the draft emptied): not brought back by the next reload.
    after.getState().follow('ep-a');
    after.getState().setText('');
    const again = createInjectStore({} as StepboxClient, storage);
    again.getState().follow('ep-a');
    expect(again.getState().text).toBe('');
    // What the storage holds is parsed: a key that is not a branch id, a field of the wrong type.
    saved.set(
      'stepbox.inject-drafts.v1',
      JSON.stringify({ 'a b': { text: 'x' }, 'ep-d': { text: 5, role: 'system' } }),
    );
    const odd = createInjectStore({} as StepboxClient, storage);
    odd.getState().follow('ep-d');
    expect(odd.getState()).toMatchObject({ text: '', role: 'system' });
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

  it('a build notice belongs to the episode it was built for: opening another clears it', () => {
    const notices = createNoticesStore();
    notices.getState().follow('ep-live');
    // Built during the start, before the new branch is shown: kept while the old one still shows.
    notices
      .getState()
      .post({ branch: NEXT_BRANCH, kind: 'image', text: 'Image stepbox-build:x built', tone: 'info' });
    notices.getState().follow('ep-started');
    expect(notices.getState().items.map((n) => [n.branch, n.text])).toEqual([
      ['ep-started', 'Image stepbox-build:x built'],
    ]);
    notices.getState().follow('ep-other');
    expect(notices.getState().items).toEqual([]);
  });

  it('a new episode opens Inject and the inspector on their first tabs; coming back brings the chosen ones', () => {
    const inject = createInjectStore({} as StepboxClient);
    const inspector = createInspectorStore({} as StepboxClient);
    inject.getState().follow('ep-a');
    inspector.getState().follow('ep-a');
    inject.getState().setSection('override');
    inspector.getState().setTab('output');
    inject.getState().follow('ep-b');
    inspector.getState().follow('ep-b');
    expect(inject.getState().section).toBeNull();
    expect(inspector.getState().tab).toBe('call');
    inject.getState().follow('ep-a');
    inspector.getState().follow('ep-a');
    expect(inject.getState().section).toBe('override');
    expect(inspector.getState().tab).toBe('output');
  });
});
