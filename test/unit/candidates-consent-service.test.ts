// The window's candidates path carries consent to a recorded task down to the engine:
// `episode.candidates` / `episode.stageCandidates` take `allow` (they used to reject it).
import { describe, expect, it } from 'vitest';
import { createClient, createMemoryTransport } from '../../shared/contract/index.js';
import type { WideningKind } from '../../shared/isolation-policy.js';
import { createAppServices } from '../../electron/services/app-services.js';
import { ServiceError } from '../../electron/services/service-error.js';
import { fakePorts } from '../support/contract-fakes.js';
import { value } from '../support/contract.js';
import { consentedTask } from '../../electron/engine/harness/recorded-task.js';
import { Task } from '../../shared/task.js';

describe('candidates over the contract: consent', () => {
  it('without allow the engine refuses (consent_required); with it the consent reaches staging and trying', async () => {
    const { ports } = fakePorts();
    const seen: { op: string; consent: readonly WideningKind[] | undefined }[] = [];
    ports.harness.stageCandidates = async (_id, _step, _count, consent) => {
      seen.push({ op: 'stage', consent });
      throw new ServiceError('consent_required', 'asks for network "host"');
    };
    ports.harness.candidates = async ({ consent }) => {
      seen.push({ op: 'try', consent });
      throw new ServiceError(consent?.includes('network') ? 'conflict' : 'consent_required', 'fake');
    };
    const services = createAppServices(ports);
    const client = createClient(createMemoryTransport(services));
    try {
      const started = value(
        await client.episode.start({ task: { kind: 'sample', id: 'hello' }, agent: 'manual' }),
      );
      const typed = [{ content: 'done' }];
      value(
        await client.episode.stageCandidates({ id: started.branch, step: 0, count: 2, allow: ['network'] }),
      );
      const refused = await client.episode.candidates({ id: started.branch, step: 0, actions: typed });
      expect(refused).toMatchObject({ ok: false, error: { code: 'consent_required' } });
      const allowed = await client.episode.candidates({
        id: started.branch,
        step: 0,
        actions: typed,
        allow: ['network'],
      });
      // Past the consent check (the fake then fails otherwise).
      expect(allowed).toMatchObject({ ok: false, error: { code: 'conflict' } });
      await expect.poll(() => seen.map((s) => s.op)).toEqual(['stage', 'try', 'try']);
      expect(seen.map((s) => s.consent)).toEqual([['network'], undefined, ['network']]);
    } finally {
      await services.dispose();
    }
  });

  it('the consent error a window (desktop or browser) gets says what to do in the window, not a CLI flag', async () => {
    const { ports } = fakePorts();
    const wide = Task.parse({ name: 't', goal: 'g', sandbox: { network: 'host' } });
    const refusal = () => consentedTask(wide, 'the task recorded in br-1', []);
    // The engine's refusal, as the CLI reads it: the flags.
    expect(refusal).toThrow(/--allow-network/);
    ports.harness.candidates = async () => {
      refusal();
      throw new Error('refused above');
    };
    const services = createAppServices(ports);
    const client = createClient(createMemoryTransport(services));
    try {
      const started = value(
        await client.episode.start({ task: { kind: 'sample', id: 'hello' }, agent: 'manual' }),
      );
      const refused = await client.episode.candidates({
        id: started.branch,
        step: 0,
        actions: [{ content: 'x' }],
      });
      expect(refused).toMatchObject({ ok: false, error: { code: 'consent_required' } });
      const message = refused.ok ? '' : refused.error.message;
      // In words (the key is the question's tooltip): not `sandbox.network "host"`.
      expect(message).toMatch(
        /the task recorded in br-1 asks for a looser sandbox.*network host \(stepbox's default: none \(offline\)\)/,
      );
      expect(message).toMatch(/"Allow and …" in the question the window shows/);
      expect(message).not.toMatch(/--allow|--trust-recorded-task|flag/);
    } finally {
      await services.dispose();
    }
  });
});
