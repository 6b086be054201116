import type { CliCommand } from './command.js';
import { EXIT } from './command.js';

/** `stepbox bench` — placeholder until its owner lands it. */
export const command: CliCommand = {
  name: 'bench',
  summary: '(not built yet)',
  help: 'stepbox bench — not built yet.\nExample: stepbox bench --help\n',
  async run(_argv, io) {
    io.stderr.write('stepbox bench: not built yet\n');
    return EXIT.usage;
  },
};
