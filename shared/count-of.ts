/** `1 step`, `2 steps`, `0 branches`: a count and its noun, agreed in number. */
export function countOf(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}
