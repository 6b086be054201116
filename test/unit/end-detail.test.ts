import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openEngine } from '../../electron/engine/open-engine.js';
import type { EpisodeManager } from '../../electron/services/episode-manager.js';
import { LibraryService } from '../../electron/services/library-service.js';
import { storeTracePort } from '../../electron/services/trace-port.js';
import { EpisodeView } from '../../shared/contract/models.js';
import { runCli } from '../support/cli.js';
import { writeSampleEpisode } from '../support/traces.js';

// What a model server that was not up said, as the openai agent words it (modelEndpointFailure).
const SAID =
  'the model endpoint http://127.0.0.1:1/v1 failed: Connection error. Check the server is up (its address comes after @ in the agent, openai:MODEL@URL, or from OPENAI_BASE_URL) and the model name';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'stepbox-end-detail-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

/** An episode whose model endpoint failed at step 1: a fatal model_error, then its end. */
async function modelErrorEpisode() {
  const engine = openEngine({ home, sweep: false });
  const ep = await writeSampleEpisode(engine.store, {
    script: [{ args: { command: 'ls' }, error: { code: 'model_error', message: SAID, fatal: true } }],
    end: { status: 'error', end_reason: 'model_error', verifier: null },
  });
  return { engine, ep };
}

describe("an episode's end says what its fatal error said", () => {
  it('the opened view carries the message beside the reason (the window had only "model_error")', async () => {
    const { engine, ep } = await modelErrorEpisode();
    const noEpisodes = {
      branches: () => [],
      stateOf: () => null,
      find: () => null,
    } as unknown as EpisodeManager;
    const view = await new LibraryService(storeTracePort(engine), noEpisodes).open(ep.branch);
    await engine.close();
    expect(view.end).toEqual({ status: 'error', end_reason: 'model_error', verifier: null, detail: SAID });
    // The contract keeps it (the WebSocket and IPC answers are parsed by it).
    expect(EpisodeView.parse(view).end?.detail).toBe(SAID);
  });

  it('stepbox show prints it whole, and --json has it at the top level', async () => {
    const { engine, ep } = await modelErrorEpisode();
    await engine.close();
    const env = { env: { STEPBOX_HOME: home } };
    const plain = await runCli(['show', ep.branch], env);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toContain(`ended by model_error: ${SAID}\n`);
    const json = await runCli(['show', ep.branch, '--json'], env);
    expect((JSON.parse(json.stdout) as { end_detail: string | null }).end_detail).toBe(SAID);
  });
});
