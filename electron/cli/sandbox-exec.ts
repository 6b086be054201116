import type { CliCommand } from './command.js';
import { EXIT } from './command.js';

/** `stepbox sandbox exec` — placeholder until its owner lands it. */
export const command: CliCommand = {
  name: 'sandbox exec',
  summary: '(not built yet)',
  help: 'stepbox sandbox exec — not built yet.\nExample: stepbox sandbox exec --help\n',
  async run(_argv, io) {
    io.stderr.write('stepbox sandbox exec: not built yet\n');
    return EXIT.usage;
  },
};
