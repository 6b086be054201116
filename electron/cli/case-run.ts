import type { CliCommand } from './command.js';
import { EXIT } from './command.js';

/** `stepbox case run` — placeholder until its owner lands it. */
export const command: CliCommand = {
  name: 'case run',
  summary: '(not built yet)',
  help: 'stepbox case run — not built yet.\nExample: stepbox case run --help\n',
  async run(_argv, io) {
    io.stderr.write('stepbox case run: not built yet\n');
    return EXIT.usage;
  },
};
