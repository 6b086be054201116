import type { CliCommand } from './command.js';
import { EXIT } from './command.js';

/** `stepbox replay` — placeholder until its owner lands it. */
export const command: CliCommand = {
  name: 'replay',
  summary: '(not built yet)',
  help: 'stepbox replay — not built yet.\nExample: stepbox replay --help\n',
  async run(_argv, io) {
    io.stderr.write('stepbox replay: not built yet\n');
    return EXIT.usage;
  },
};
