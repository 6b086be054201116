import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadTask } from '../../electron/engine/harness/load-task.js';
import { jsonErrorAt } from '../../electron/engine/json-error.js';

/** Issue 19, item 4: an error about a file that is not JSON says where, never what the file holds. */
describe('JSON errors never quote the file', () => {
  it('jsonErrorAt gives the line and column, not the text', () => {
    const text = '{"a": 1}\nroot:x:0:0:root:/root:/bin/bash\n';
    let e: unknown;
    try {
      JSON.parse(text);
    } catch (caught) {
      e = caught;
    }
    const at = jsonErrorAt(e, text);
    expect(at).toMatch(/^ at line \d+, column \d+$/);
    expect(at).not.toMatch(/root/);
  });

  it('a task file that is not JSON names the file and the place, not its content', () => {
    const dir = mkdtempSync(join(tmpdir(), 'stepbox-json-error-'));
    try {
      const file = join(dir, 'secret.json');
      writeFileSync(file, 'root:x:0:0:root:/root:/bin/bash\n');
      const r = loadTask(file);
      expect(r.ok).toBe(false);
      if (r.ok) return;
      expect(r.error.code).toBe('invalid_task');
      expect(r.error.message).toMatch(
        /secret\.json is not valid JSON at line 1, column 1 \(unexpected character\): fix it there/,
      );
      expect(r.error.message).not.toMatch(/root|bash/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
