import type { CliCommand } from './command.js';
import { EXIT } from './command.js';

/** `stepbox serve` — placeholder until its owner lands it. */
export const command: CliCommand = {
  name: 'serve',
  summary: '(not built yet)',
  help: 'stepbox serve — not built yet.\nExample: stepbox serve --help\n',
  async run(_argv, io) {
    io.stderr.write('stepbox serve: not built yet\n');
    return EXIT.usage;
  },
};
