import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { describeIssues } from '../../shared/validation-issues.js';
import { parseTask } from '../../shared/task.js';

describe('one wording of a validation error', () => {
  const Schema = z.object({ a: z.number(), b: z.object({ c: z.string() }) });

  it('names each field by its path, joined by "; ", the whole value by its label', () => {
    const bad = Schema.safeParse({ a: 'x', b: { c: 1 } });
    expect(bad.success).toBe(false);
    expect(describeIssues(bad.error!.issues)).toMatch(/^a: .*number.*; b\.c: .*string/);
    expect(describeIssues(Schema.safeParse(7).error!.issues, '(request)')).toMatch(/^\(request\): /);
    expect(describeIssues(bad.error!.issues, '(top level)', 1)).not.toContain(';');
  });

  it('a task and a service request word the same issue the same way', () => {
    const task = parseTask({ name: 't', goal: 7 });
    expect(task.ok).toBe(false);
    const field = z.object({ goal: z.string() }).safeParse({ goal: 7 });
    if (!task.ok) expect(task.error.message).toContain(describeIssues(field.error!.issues));
  });
});
