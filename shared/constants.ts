/** The sandbox image stepbox builds and uses by default. */
export const SANDBOX_IMAGE = 'stepbox-sandbox:1';
/** The image version label `doctor` compares; bump when the image's contents change. */
export const SANDBOX_IMAGE_VERSION = '1';
/** The label key carrying the image version. */
export const IMAGE_VERSION_LABEL = 'stepbox.image.version';
/** The trace schema this build writes. */
export const TRACE_SCHEMA = 'stepbox.trace/1';
/** The sandbox user's uid and gid (created in the image). */
export const SANDBOX_UID = 1000;
/** Fixed environment every sandbox gets, so deterministic commands replay exactly. */
export const SANDBOX_ENV = {
  HOME: '/home/agent',
  TZ: 'UTC',
  LANG: 'C.UTF-8',
  USER: 'agent',
  // No `__pycache__/*.pyc` in the workspace: they embed timestamps, so a deterministic
  // Python episode would re-execute into a different tree hash (workspace_diverged_at).
  PYTHONDONTWRITEBYTECODE: '1',
  // str/bytes hashes are salted per process unless pinned: printing a set would differ on replay.
  PYTHONHASHSEED: '0',
  // `git status` would rewrite .git/index with the stat times of files a restore just wrote,
  // so a replayed episode of a project folder would diverge in .git/index alone.
  GIT_OPTIONAL_LOCKS: '0',
} as const;
/** Fixed hostname of every sandbox. */
export const SANDBOX_HOSTNAME = 'sandbox';
