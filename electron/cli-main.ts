import { main } from './cli.js';

// Entry point of the `stepbox` binary. Ctrl+C handling lives in the commands that own traces.
const code = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
});
process.exitCode = code;
