import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  MAX_RESENDS,
  ModelEndpoint,
  type ModelApi,
  type ModelCall,
} from '../../electron/engine/external/model-endpoint.js';

// A streamed answer cut mid-way and asked again with the identical request (what every SDK
// does on a dropped connection) gets the same answer again, for every wire API: the
// retry is no new model call (the harness records the answer once, spends no model answer).

const TOKEN = 'episode-token-resend';
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

const ANSWER = {
  content: 'Listing.',
  tool_calls: [
    { id: 'call_1', type: 'function' as const, function: { name: 'shell', arguments: '{"command":"ls"}' } },
  ],
};

const BODIES: Record<ModelApi, { path: string; body: Record<string, unknown> }> = {
  'chat.completions': {
    path: '/v1/chat/completions',
    body: { model: 'm', stream: true, messages: [{ role: 'user', content: 'go' }] },
  },
  responses: { path: '/v1/responses', body: { model: 'm', stream: true, input: 'go' } },
  'anthropic.messages': {
    path: '/v1/messages',
    body: { model: 'm', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'go' }] },
  },
  gemini: {
    path: '/v1beta/models/m:streamGenerateContent?alt=sse',
    body: { contents: [{ role: 'user', parts: [{ text: 'go' }] }] },
  },
};

/** POSTs `body`; with `cut`, drops the connection after the first bytes of the answer; else reads it all. */
function post(base: string, path: string, body: unknown, cut: boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, base);
    const req = request(
      url,
      { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => {
          text += c.toString();
          if (cut) {
            req.destroy();
            resolve(text);
          }
        });
        res.on('end', () => resolve(text));
        res.on('error', () => resolve(text));
      },
    );
    req.on('error', (e) => (cut ? resolve('') : reject(e)));
    req.end(JSON.stringify(body));
  });
}

/** The stream's data lines without ids and times (which may differ between sends). */
const stable = (text: string) => text.replace(/"(id|created|created_at)":("[^"]*"|\d+)/g, '"$1":_');

describe('a cut stream asked again', () => {
  for (const api of Object.keys(BODIES) as ModelApi[]) {
    it(`${api}: the identical request gets the same answer again, no second model call; a changed one is a new call`, async () => {
      const resent: [ModelCall, number][] = [];
      const e = new ModelEndpoint(TOKEN, 'stepbox-scripted', (c, n) => resent.push([c, n]));
      const base = (await e.start()).replace(/\/v1$/, '');
      closers.push(() => e.close());
      const { path, body } = BODIES[api];
      const first = post(base, path, body, true);
      const call = await e.next();
      call.answer(ANSWER);
      const cutText = await first;
      const whole = await post(base, path, body, false);
      // Gemini's SSE answer leaves in one write: the cut reads it all, the retry still gets it again.
      expect(whole.length).toBeGreaterThan(api === 'gemini' ? cutText.length - 1 : cutText.length);
      expect(whole).toContain('call_1');
      expect(whole).toMatch(/"ls"|\\"ls\\"/);
      expect(resent).toEqual([[call, 1]]);
      // Sent again exactly as the first time (ids and times aside).
      const again = await post(base, path, body, false);
      expect(stable(again)).toBe(stable(whole));
      expect(resent.map(([, n]) => n)).toEqual([1, 2]);
      // Past MAX_RESENDS an identical request is a model call again (a looping agent still makes steps).
      expect(MAX_RESENDS).toBe(2);
      const loop = post(base, path, body, false);
      const next = await e.next();
      expect(next.raw).toEqual(body);
      next.answer({ content: 'done' });
      expect(await loop).toContain('done');
      // A request that differs is a new call, never the last answer.
      const other = post(base, path, { ...body, model: 'other' }, false);
      const third = await e.next();
      third.answer({ content: 'other answer' });
      expect(await other).toContain('other answer');
    });
  }

  it('a request that arrives after a newer one is a new call: only the last answer is re-sent', async () => {
    const e = new ModelEndpoint(TOKEN, 'stepbox-scripted');
    const base = (await e.start()).replace(/\/v1$/, '');
    closers.push(() => e.close());
    const { path, body } = BODIES['chat.completions'];
    const a = post(base, path, body, false);
    const b = post(base, path, { ...body, model: 'b' }, false);
    const [ca, cb] = [await e.next(), await e.next()];
    ca.answer({ content: 'answer a' });
    cb.answer({ content: 'answer b' });
    await Promise.all([a, b]);
    const again = post(base, path, body, false);
    const fresh = await e.next();
    fresh.answer({ content: 'fresh' });
    expect(await again).toContain('fresh');
  });
});
