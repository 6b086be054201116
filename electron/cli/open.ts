import type { CliCommand } from './command.js';
import { EXIT } from './command.js';

/** `stepbox open` — placeholder until its owner lands it. */
export const command: CliCommand = {
  name: 'open',
  summary: '(not built yet)',
  help: 'stepbox open — not built yet.\nExample: stepbox open --help\n',
  async run(_argv, io) {
    io.stderr.write('stepbox open: not built yet\n');
    return EXIT.usage;
  },
};
