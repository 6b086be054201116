import { appError, type AppError } from './errors.js';
import { err, ok, type Result } from './result.js';
import { REWARD_LIMIT } from './rewards.js';

/** The reward files a verifier may write in its `reward_dir`, in the order Harbor reads them. */
export const REWARD_FILES = ['reward.json', 'reward.txt'] as const;

/** A reward file as the verifier's channel read it (at most a few KiB of it). */
export interface RewardFile {
  /** `reward.json` or `reward.txt`. */
  readonly name: string;
  readonly text: string;
}

/** The reward a verifier wrote: the scalar that decides, and every number of a reward.json. */
export interface VerifierReward {
  readonly reward: number;
  /** The file the scalar came from, as a path inside the sandbox. */
  readonly file: string;
  /** reward.json's numeric fields (Harbor keeps only these), when it wrote one. */
  readonly rewards?: Readonly<Record<string, number>>;
}

/** A reward of at least this passes: Harbor's tasks write 1 for solved, 0 for not. */
export const PASSING_REWARD = 1;

/** How much of a bad reward file an error quotes. */
const QUOTE_CHARS = 80;

function quote(text: string): string {
  const t = text.trim();
  return JSON.stringify(t.length > QUOTE_CHARS ? `${t.slice(0, QUOTE_CHARS)}…` : t);
}

function parseNumber(text: string): number | null {
  const t = text.trim();
  // Python's float(): a decimal or exponent number; no hex, no empty string, no "1 0".
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t)) return null;
  const n = Number(t);
  return Number.isFinite(n) ? n : null;
}

/** Whether a reward is one stepbox weighs: finite and at most REWARD_LIMIT either way (a weight times it never overflows). */
function inRange(n: number): boolean {
  return Math.abs(n) <= REWARD_LIMIT;
}

/** The refusal of a reward past {@link REWARD_LIMIT}: the file, the number, the range. */
function outOfRange(file: string, n: number): Result<never, AppError> {
  return err(
    appError(
      'reward_invalid',
      `${file} holds the reward ${n}, outside -${REWARD_LIMIT} to ${REWARD_LIMIT} (weighed, it would overflow); the verifier must write a reward such as 1 (solved) or 0`,
    ),
  );
}

/**
 * The reward a verifier wrote in `dir`, read as Harbor reads it: `reward.json` first (an
 * object; its numeric fields kept; `reward` is the scalar, else reward.txt's number), else
 * `reward.txt` (one number). A file that is there but holds no number, or no file at all,
 * is an error naming the file, what it held and what to write.
 */
export function readVerifierReward(
  dir: string,
  files: readonly RewardFile[],
): Result<VerifierReward, AppError> {
  const at = (name: string) => `${dir.replace(/\/+$/, '')}/${name}`;
  const json = files.find((f) => f.name === 'reward.json');
  const txt = files.find((f) => f.name === 'reward.txt');
  const fromText = (): Result<VerifierReward, AppError> | null => {
    if (!txt) return null;
    const n = parseNumber(txt.text);
    if (n === null)
      return err(
        appError(
          'reward_invalid',
          txt.text.trim() === ''
            ? `${at('reward.txt')} is empty; the verifier must write one number there, such as 1 (solved) or 0`
            : `${at('reward.txt')} holds ${quote(txt.text)}, not a number; the verifier must write one number there, such as 1 (solved) or 0`,
        ),
      );
    if (!inRange(n)) return outOfRange(at('reward.txt'), n);
    return ok({ reward: n, file: at('reward.txt') });
  };
  if (json) {
    let doc: unknown;
    try {
      doc = JSON.parse(json.text);
    } catch {
      return err(
        appError(
          'reward_invalid',
          `${at('reward.json')} holds ${quote(json.text)}, not JSON; the verifier must write an object such as {"reward": 1}`,
        ),
      );
    }
    if (!doc || typeof doc !== 'object' || Array.isArray(doc))
      return err(
        appError(
          'reward_invalid',
          `${at('reward.json')} holds ${quote(json.text)}, not a JSON object; write an object such as {"reward": 1}`,
        ),
      );
    const scalar = (doc as Record<string, unknown>).reward;
    if (typeof scalar === 'number' && !inRange(scalar)) return outOfRange(at('reward.json'), scalar);
    // Its other numbers are recorded as they are; one past the range is left out (the trace
    // keeps rewards in range), as Harbor leaves out what is not a number.
    const rewards: Record<string, number> = {};
    for (const [k, v] of Object.entries(doc)) if (typeof v === 'number' && inRange(v)) rewards[k] = v;
    if (rewards.reward !== undefined) return ok({ reward: rewards.reward, file: at('reward.json'), rewards });
    const fromTxt = fromText();
    if (fromTxt?.ok) return ok({ ...fromTxt.value, rewards });
    if (fromTxt) return fromTxt;
    return err(
      appError(
        'reward_invalid',
        `${at('reward.json')} holds ${quote(json.text)}: no numeric "reward" field (and no reward.txt); write an object such as {"reward": 1}`,
      ),
    );
  }
  return (
    fromText() ??
    err(
      appError(
        'reward_missing',
        `the verifier wrote no ${at('reward.txt')} or ${at('reward.json')}; its test script must write the reward there (e.g. echo 1 > ${at('reward.txt')})`,
      ),
    )
  );
}
