// The inspector's raw result JSON shows `"ok": true` beside `"exit_code": 1`; a note above it
// says what each means, so a person does not read the failed command as a success.
import { describe, expect, it } from 'vitest';
import { rawResultNote } from '../../renderer/src/model/raw-result-note.js';

describe('the note above a raw tool result', () => {
  it('explains ok beside a failing exit code', () => {
    expect(rawResultNote({ ok: true, exit_code: 1, stdout: '' })).toBe(
      "ok means the tool ran; the command's own exit code is exit_code (1: it failed)",
    );
  });

  it('is absent where the JSON cannot mislead', () => {
    expect(rawResultNote({ ok: true, exit_code: 0 })).toBeNull();
    expect(rawResultNote({ ok: true })).toBeNull();
    expect(rawResultNote({ ok: false, exit_code: 1, error: { code: 'x', message: 'y' } })).toBeNull();
    expect(rawResultNote(null)).toBeNull();
  });
});
