import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadTask } from '../../electron/engine/harness/load-task.js';
import {
  actionSignature,
  discountedReturn,
  finalReward,
  returnsToGo,
  stepReward,
} from '../../shared/rewards.js';

const weights = { format_valid: 0.1, repeated_action: -0.2, tool_error: -0.1, verifier: 1 };

describe('task files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'stepbox-task-'));
  it('names line and column of a JSON syntax error', () => {
    const p = join(dir, 'bad.json');
    writeFileSync(p, '{\n  "name": "x",\n  "goal": "y",,\n}\n');
    const r = loadTask(p);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toMatch(/line 3, column \d+/);
  });
  it('suggests the fix for an unknown key', () => {
    const p = join(dir, 'typo.json');
    writeFileSync(p, JSON.stringify({ name: 'x', goal: 'y', max_step: 3 }));
    const r = loadTask(p);
    expect(!r.ok && r.error.message).toMatch(/did you mean "max_steps"/);
  });
  it('loads the shipped sample tasks (a folder means its task.json)', () => {
    for (const name of ['hello-python', 'notes-memory']) {
      const r = loadTask(resolve('resources/tasks', name));
      expect(r.ok, r.ok ? '' : r.error.message).toBe(true);
    }
  });
});

describe('rewards', () => {
  it('weighs step components and the verifier', () => {
    expect(stepReward({ formatValid: true, repeated: false, toolErrors: 0 }, weights)).toEqual({
      components: { format_valid: 0.1, repeated_action: 0, tool_error: 0 },
      total: 0.1,
    });
    const bad = stepReward({ formatValid: false, repeated: true, toolErrors: 2 }, weights);
    expect(bad.total).toBeCloseTo(-0.4);
    expect(finalReward(true, weights)).toEqual({ components: { verifier: 1 }, total: 1 });
    expect(finalReward(null, weights).total).toBe(0);
  });
  it('discounts returns with gamma', () => {
    expect(discountedReturn([1, 1, 1], 0.5)).toBeCloseTo(1.75);
    expect(returnsToGo([1, 0, 2], 0.5)).toEqual([1.5, 1, 2]);
  });
  it('signs actions canonically (argument key order does not matter)', () => {
    expect(actionSignature([{ name: 'a', arguments: { x: 1, y: 2 } }])).toBe(
      actionSignature([{ name: 'a', arguments: { y: 2, x: 1 } }]),
    );
  });
});
