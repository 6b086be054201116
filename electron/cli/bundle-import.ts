import type { CliCommand } from './command.js';
import { EXIT } from './command.js';

/** `stepbox bundle import` — placeholder until its owner lands it. */
export const command: CliCommand = {
  name: 'bundle import',
  summary: '(not built yet)',
  help: 'stepbox bundle import — not built yet.\nExample: stepbox bundle import --help\n',
  async run(_argv, io) {
    io.stderr.write('stepbox bundle import: not built yet\n');
    return EXIT.usage;
  },
};
