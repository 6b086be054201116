// The inspector's raw result JSON shows `"ok": true` beside `"exit_code": 1`; a note above it
// says what each means, so a person does not read the failed command as a success.
import { describe, expect, it } from 'vitest';
import { rawResultNote } from '../../renderer/src/model/raw-result-note.js';

describe('the note above a raw tool result', () => {
  it('explains ok beside a failing exit code in words, naming no field', () => {
    const note = rawResultNote({ ok: true, exit_code: 1, stdout: '' });
    expect(note).toBe('The tool ran; the command itself failed (exit 1).');
    // Schema talk ("ok means…", "exit_code") is not what a person reads at a glance.
    expect(note).not.toMatch(/exit_code|\bok means/);
    expect(rawResultNote({ ok: true, exit_code: 127 })).toBe(
      'The tool ran; the command itself failed (exit 127).',
    );
  });

  it('is absent where the JSON cannot mislead', () => {
    expect(rawResultNote({ ok: true, exit_code: 0 })).toBeNull();
    expect(rawResultNote({ ok: true })).toBeNull();
    expect(rawResultNote({ ok: false, exit_code: 1, error: { code: 'x', message: 'y' } })).toBeNull();
    expect(rawResultNote(null)).toBeNull();
  });
});
