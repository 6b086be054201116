import { describe, expect, it } from 'vitest';
import { createMemory } from '../../electron/engine/tools/memory.js';

describe('agent memory', () => {
  it('starts from the initial values without sharing them', () => {
    const initial = { list: [1, 2] };
    const m = createMemory(initial);
    (m.get('list') as number[]).push(3);
    expect(m.get('list')).toEqual([1, 2]);
    m.set('list', [9], 'memory_write');
    expect(initial.list).toEqual([1, 2]);
  });

  it('reports each write with before, after and writer', () => {
    const m = createMemory({ a: 1 });
    expect(m.set('a', 'None', 'lookup')).toEqual({ key: 'a', before: 1, after: 'None', writer: 'lookup' });
    expect(m.set('b', undefined, 'memory_write')).toEqual({
      key: 'b',
      before: null,
      after: null,
      writer: 'memory_write',
    });
    expect(m.has('b')).toBe(true);
  });

  it('snapshots and restores for rollback', () => {
    const m = createMemory({ a: 1 });
    const snap = m.snapshot();
    m.set('a', 2, 'memory_write');
    m.set('c', { deep: true }, 'memory_write');
    m.restore(snap);
    expect(m.snapshot()).toEqual({ a: 1 });
    expect(m.has('c')).toBe(false);
  });
});
