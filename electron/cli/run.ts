import type { CliCommand } from './command.js';
import { EXIT } from './command.js';

/** `stepbox run` — placeholder until its owner lands it. */
export const command: CliCommand = {
  name: 'run',
  summary: '(not built yet)',
  help: 'stepbox run — not built yet.\nExample: stepbox run --help\n',
  async run(_argv, io) {
    io.stderr.write('stepbox run: not built yet\n');
    return EXIT.usage;
  },
};
