import type { CliCommand } from './command.js';
import { EXIT } from './command.js';

/** `stepbox resume` — placeholder until its owner lands it. */
export const command: CliCommand = {
  name: 'resume',
  summary: '(not built yet)',
  help: 'stepbox resume — not built yet.\nExample: stepbox resume --help\n',
  async run(_argv, io) {
    io.stderr.write('stepbox resume: not built yet\n');
    return EXIT.usage;
  },
};
