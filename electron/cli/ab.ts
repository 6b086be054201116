import type { CliCommand } from './command.js';
import { EXIT } from './command.js';

/** `stepbox ab` — placeholder until its owner lands it. */
export const command: CliCommand = {
  name: 'ab',
  summary: '(not built yet)',
  help: 'stepbox ab — not built yet.\nExample: stepbox ab --help\n',
  async run(_argv, io) {
    io.stderr.write('stepbox ab: not built yet\n');
    return EXIT.usage;
  },
};
