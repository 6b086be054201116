import type { CliCommand } from './command.js';
import { EXIT } from './command.js';

/** `stepbox case verify` — placeholder until its owner lands it. */
export const command: CliCommand = {
  name: 'case verify',
  summary: '(not built yet)',
  help: 'stepbox case verify — not built yet.\nExample: stepbox case verify --help\n',
  async run(_argv, io) {
    io.stderr.write('stepbox case verify: not built yet\n');
    return EXIT.usage;
  },
};
