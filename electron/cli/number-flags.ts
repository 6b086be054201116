// The one parser for the CLI's numeric flags (--at, --limit, --port, --timeout, …), so every
// command checks the same way and words a bad value the same way.
import { UsageError } from './command.js';

/** Which values a numeric flag accepts: `min`/`max` inclusive, `positive` means > 0. */
export interface FlagRange {
  readonly min?: number;
  readonly max?: number;
  readonly positive?: boolean;
  /** Said after the kind in the error, e.g. `seconds` → "a positive number of seconds". */
  readonly unit?: string;
}

/**
 * Parses an integer flag (at least 0 unless `range` says otherwise); `undefined` when the flag
 * was not given. Throws a usage error naming the flag, the value and what it must be.
 */
export function intFlag(
  name: string,
  value: string | undefined,
  range: FlagRange = { min: 0 },
): number | undefined {
  return parseNumberFlag(name, value, range, true);
}

/** Parses a finite number flag within `range`; `undefined` when absent; throws a usage error. */
export function numberFlag(
  name: string,
  value: string | undefined,
  range: FlagRange = {},
): number | undefined {
  return parseNumberFlag(name, value, range, false);
}

function parseNumberFlag(
  name: string,
  value: string | undefined,
  range: FlagRange,
  integer: boolean,
): number | undefined {
  if (value === undefined) return undefined;
  // Number('') and Number(' ') are 0: an empty value is not a number.
  const n = value.trim() === '' ? NaN : Number(value);
  const fits =
    (integer ? Number.isInteger(n) : Number.isFinite(n)) &&
    (range.min === undefined || n >= range.min) &&
    (range.max === undefined || n <= range.max) &&
    (!range.positive || n > 0);
  if (!fits) throw new UsageError(`--${name}: "${value}" is not ${expected(range, integer)}`);
  return n;
}

/** "a positive integer", "an integer from 0 to 65535", "a number from 0 to 1", … */
function expected(range: FlagRange, integer: boolean): string {
  const kind = integer ? 'integer' : 'number';
  const unit = range.unit ? ` of ${range.unit}` : '';
  const { min, max } = range;
  if (range.positive || (integer && min === 1 && max === undefined)) return `a positive ${kind}${unit}`;
  if (min === 0 && max === undefined) return `a non-negative ${kind}${unit}`;
  if (min !== undefined && max !== undefined)
    return `${integer ? 'an' : 'a'} ${kind}${unit} from ${min} to ${max}`;
  if (min !== undefined) return `${integer ? 'an' : 'a'} ${kind}${unit} of at least ${min}`;
  if (max !== undefined) return `${integer ? 'an' : 'a'} ${kind}${unit} of at most ${max}`;
  return `${integer ? 'an' : 'a'} ${kind}${unit}`;
}
