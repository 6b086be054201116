/**
 * Closes a switch over a discriminated union: the call compiles only when every member
 * is handled, so adding a member fails the build at each switch that forgot it. Reached
 * at run time only with a value outside the union (bad input cast past the types).
 */
export function assertNever(value: never, what = 'value'): never {
  throw new Error(`unexpected ${what}: ${JSON.stringify(value)}`);
}
