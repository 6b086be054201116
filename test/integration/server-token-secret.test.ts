import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startServer } from '../../electron/server.js';
import { secretsFromEnv } from '../../electron/engine/trace/secrets.js';

describe('web mode token', () => {
  it('is registered as a secret, so no trace written while serving can carry it', async () => {
    const home = mkdtempSync(join(tmpdir(), 'stepbox-token-'));
    const server = await startServer({ port: 0, home });
    try {
      expect(secretsFromEnv({}).map((s) => s.value)).toContain(server.token);
    } finally {
      await server.close();
      rmSync(home, { recursive: true, force: true });
    }
  });
});
