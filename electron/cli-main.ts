import { main } from './cli.js';
import { outliveClosedReader } from './cli/closed-pipe.js';
import { logger } from './engine/log.js';

/**
 * How long a finished command may take to let go of its handles before the process exits
 * anyway; STEPBOX_EXIT_GRACE_MS overrides it (tests raise it to tell a natural exit from this one).
 */
const EXIT_GRACE_MS = Number(process.env.STEPBOX_EXIT_GRACE_MS) || 3_000;

// Entry point of the `stepbox` binary. Ctrl+C handling lives in the commands that own traces.
outliveClosedReader(process.stdout);
outliveClosedReader(process.stderr);
const code = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
});
process.exitCode = code;

// Every command resolves only once its work is done (serve and shells resolve when they
// close), so a process still alive after the grace period is held by a stray handle — a
// leak to fix, but never a reason to hang a script or a CI job.
setTimeout(() => {
  const handles = process.getActiveResourcesInfo();
  logger('cli').warn(`exiting although handles are still open: ${handles.join(', ') || 'unknown'}`);
  process.exit(code);
}, EXIT_GRACE_MS).unref();
