// Save as case…: a name the case library cannot take is said once, plainly, beside the field
// (walk shots 64–65: "cases.save: name: …" in the dialog and again in the foot bar).
import { describe, expect, it } from 'vitest';
import { caseNameProblem } from '../../shared/case-name';
import { createNoticesStore } from '../../renderer/src/stores/notices/notices-store';
import { createTeachingStore } from '../../renderer/src/stores/teaching/teaching-store';
import { createFakeBackend } from '../support/renderer-fake-client';
import { saveNameWhy } from '../../renderer/src/components/teaching-buttons';

describe('case names', () => {
  it('says what a case name takes, with one that fits', () => {
    expect(caseNameProblem('my-case-2')).toBeNull();
    expect(caseNameProblem('My Case!')).toBe(
      'A case name takes only lowercase letters, digits and - (no spaces or capitals), e.g. “my-case”.',
    );
    expect(caseNameProblem('!!!')).toBe(
      'A case name takes only lowercase letters, digits and - (no spaces or capitals).',
    );
    expect(caseNameProblem('a'.repeat(65))).toMatch(/^A case name is at most 64 characters/);
  });

  it("the dialog's Save is greyed, with the name's problem as its reason, while the name cannot be taken", () => {
    expect(saveNameWhy(false, 'My Case!')).toBe(caseNameProblem('My Case!'));
    expect(saveNameWhy(false, '')).toBe('Type a name for the case first.');
    expect(saveNameWhy(true, 'my-case')).toBe('Saving…');
    expect(saveNameWhy(false, 'my-case')).toBeNull();
    // A name the library just refused as taken: Replace is the way, not the same Save again.
    expect(saveNameWhy(false, 'my-case', 'my-case')).toBe(
      '“my-case” is taken: press Replace to save this episode over it, or type another name.',
    );
    expect(saveNameWhy(false, 'my-case-2', 'my-case')).toBeNull();
  });

  it('Save as case refuses such a name in the dialog alone: nothing is sent, the foot bar stays empty', async () => {
    const fake = createFakeBackend();
    const notices = createNoticesStore();
    const teaching = createTeachingStore(fake.client, () => {}, notices);
    teaching.getState().openSave();
    expect(await teaching.getState().saveAsCase('b-1', 'My Case!')).toBe(false);
    expect(teaching.getState()).toMatchObject({
      dialog: 'save',
      busy: false,
      refused: caseNameProblem('My Case!'),
    });
    expect(teaching.getState().refused).not.toMatch(/cases\.save|name:/);
    expect(fake.callsOf('cases.save')).toEqual([]);
    expect(notices.getState().items).toEqual([]);
  });
});
