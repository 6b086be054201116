import { homedir } from 'node:os';
import { SANDBOX_ENV } from '../../../shared/constants.js';
import { pathForPeople, pathsInText, taskFolderOf, type PathRoot } from '../../../shared/start-paths.js';
import { redactSecrets, secretsFromEnv } from '../trace/secrets.js';
import type { HeaderEvent } from '../../../shared/trace-events.js';

/**
 * A share file goes to other people: it must not say where things are on the machine it was
 * made on. The trace records host paths as it must (the agent spec `scripted:/home/alice/…`,
 * the task's folder, messages that name a file), and tokens may have slipped past the
 * writer's redaction (a key typed into an `exec:` command, a secret of another environment).
 * What the sandbox shows (`/workspace/…`, its own HOME) is the episode, and stays.
 */

/** A place on the person's machine a share must not name, and the words that stand for it (the window's roots). */
export type HostPlace = PathRoot;

/** Paths that name no one (`/`, root's home): replacing them would garble the sandbox's own output. */
const NAMELESS = new Set(['', '/', '/root', SANDBOX_ENV.HOME]);

/**
 * The host places a branch's share would name: the task's folder (its own name stands for it,
 * `walker-proj/agent.jsonl`, as a task card says it), stepbox's store (`$STEPBOX_HOME`) and
 * the person's home (`~`). Longest first, so a folder inside home is said by its name.
 */
export function hostPlaces(header: HeaderEvent, storeHome: string, home: string = homedir()): HostPlace[] {
  const from = (header.task.workspace as { from?: unknown } | undefined)?.from;
  const folder = header.task_path
    ? taskFolderOf(header.task_path)
    : typeof from === 'string' && from.startsWith('/')
      ? from.replace(/\/+$/, '')
      : null;
  const places: HostPlace[] = [];
  if (folder) places.push({ path: folder, as: folder.slice(folder.lastIndexOf('/') + 1) || '.' });
  places.push({ path: storeHome.replace(/\/+$/, ''), as: '$STEPBOX_HOME' });
  places.push({ path: home.replace(/\/+$/, ''), as: '~' });
  return places.filter((p) => !NAMELESS.has(p.path)).sort((a, b) => b.path.length - a.path.length);
}

/** What follows a path that continues it (`/tmp/proj2` is not inside `/tmp/proj`). */
const GOES_ON = '(?![\\w.-])';

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Anyone's home on a Linux, macOS or Windows host (`/home/bob`, `/Users/bob`, `C:\Users\bob`):
 * a username, whoever's. The sandbox's own home (/home/agent) is the episode's, kept.
 */
const ANY_HOME = new RegExp(
  `(?:/home/(?!${escaped(SANDBOX_ENV.USER)}${GOES_ON})|/Users/|\\b[A-Za-z]:\\\\Users\\\\)[^/\\\\\\s"'\`:;,)\\]}>]+`,
  'g',
);

/** Token shapes that are credentials wherever they appear (OpenAI, GitHub, Slack, AWS, a bearer header). */
const TOKENS: readonly RegExp[] = [
  /\bsk-[A-Za-z0-9_-]{20,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\b(Bearer\s+)[A-Za-z0-9._~+/-]{16,}=*/g,
];

/** `text` as a share may say it: host places by their stand-ins, any home as `~`, tokens redacted. */
function scrubText(text: string, places: readonly (readonly [RegExp, string])[]): string {
  let out = text;
  for (const [at, as] of places) out = out.replace(at, () => as);
  out = out.replace(ANY_HOME, '~');
  // The callback's second argument is the bearer group where there is one, else the offset.
  for (const t of TOKENS)
    out = out.replace(
      t,
      (_m, bearer: unknown) => `${typeof bearer === 'string' ? bearer : ''}[redacted:token]`,
    );
  return out;
}

/**
 * A deep copy of `value` (plain JSON data, keys included) with no host place, home or token
 * in it, and the secrets this process knows (its environment's keys, the web mode's token)
 * redacted as the trace writer does.
 */
export function withoutHostPaths<T>(value: T, places: readonly HostPlace[]): T {
  const at = places.map((p) => [new RegExp(`${escaped(p.path)}${GOES_ON}`, 'g'), p.as] as const);
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return scrubText(v, at);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, inner]) => [scrubText(k, at), walk(inner)]));
    return v;
  };
  return redactSecrets(walk(value) as T, secretsFromEnv()).value;
}

/**
 * An agent spec as a share says it, as the window says its paths (shared/start-paths.ts
 * `pathForPeople`): a script in the task's folder from the folder's name
 * (`scripted:weather-bot/agent.jsonl`), one in the store from `$STEPBOX_HOME`, one in the home
 * from `~`, any other from the folder it is in (`scripted:agents/answers.jsonl`, not
 * `/opt/agents/answers.jsonl`).
 */
export function sharedAgentSpec(spec: string, places: readonly HostPlace[]): string {
  return withoutHostPaths(
    pathsInText(spec, (path) => pathForPeople(path, places)),
    places,
  );
}
