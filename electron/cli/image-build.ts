import type { CliCommand } from './command.js';
import { EXIT } from './command.js';

/** `stepbox image build` — placeholder until its owner lands it. */
export const command: CliCommand = {
  name: 'image build',
  summary: '(not built yet)',
  help: 'stepbox image build — not built yet.\nExample: stepbox image build --help\n',
  async run(_argv, io) {
    io.stderr.write('stepbox image build: not built yet\n');
    return EXIT.usage;
  },
};
