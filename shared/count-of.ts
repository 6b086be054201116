/**
 * The word that agrees with a count: `step`/`steps`, or a verb, `differs`/`differ` ("1 of 3
 * aligned steps differs"). The one plural rule of the project; `countOf` writes the count too.
 */
export function agreeing(n: number, one: string, many = `${one}s`): string {
  return n === 1 ? one : many;
}

/** `1 step`, `2 steps`, `0 branches`: a count and its noun, agreed in number. */
export function countOf(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${agreeing(n, noun, plural)}`;
}

/** `1st`, `2nd`, `3rd`, `8th`, `11th`, `22nd`: a position in words ("the 8th message"). */
export function ordinal(n: number): string {
  const teen = n % 100 >= 11 && n % 100 <= 13;
  const suffix = teen ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}
