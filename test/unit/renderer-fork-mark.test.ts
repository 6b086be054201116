// The timeline's MARKS cell showed "fork b-20261202-0…": the date, the same for every fork
// of the day, pushed the id's distinguishing tail out of view. The mark shows the tail.
import { describe, expect, it } from 'vitest';
import { forkMarkText } from '../../renderer/src/model/fork-mark.js';

describe('a fork mark in the timeline', () => {
  it('shows the id’s random tail, short enough for the cell', () => {
    expect(forkMarkText('b-20261202-011530-a1b2')).toBe('fork …a1b2');
  });
  it('keeps an id without the usual parts whole', () => {
    expect(forkMarkText('main')).toBe('fork main');
  });
});
