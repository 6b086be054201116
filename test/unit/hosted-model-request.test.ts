import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  requestHostedModel,
  type HostedModelRequest,
} from '../../electron/engine/agents/hosted-model-request.js';
import { logger } from '../../electron/engine/log.js';

/** A loopback endpoint answering each request with the next of `replies` (the last repeats). */
async function endpoint(replies: { status: number; body: string }[]) {
  const seen: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ headers: req.headers, body });
      const reply = replies[Math.min(seen.length - 1, replies.length - 1)];
      res.writeHead(reply.status, { 'content-type': 'application/json' }).end(reply.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  servers.push(server);
  return { url, seen };
}
const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

function request(url: string, extra: Partial<HostedModelRequest> = {}): HostedModelRequest {
  return {
    url,
    headers: { 'x-test-key': 'k1' },
    body: { hello: 'world' },
    retryBaseMs: 1,
    baseUrl: url,
    keyVariable: 'TEST_API_KEY',
    log: logger('test'),
    ...extra,
  };
}
const decode = (response: Record<string, unknown>) => ({
  raw: String(response.text),
  message: { content: String(response.text) },
});

describe('requestHostedModel (the shared request loop of the Anthropic and Gemini agents)', () => {
  it('posts the JSON body with the given headers and decodes the answer, timing it', async () => {
    const up = await endpoint([{ status: 200, body: JSON.stringify({ text: 'hi' }) }]);
    const decision = await requestHostedModel(request(up.url), decode);
    expect(decision).toMatchObject({ raw: 'hi', message: { content: 'hi' } });
    expect(decision.latencyMs).toBeGreaterThanOrEqual(0);
    expect(up.seen).toHaveLength(1);
    expect(JSON.parse(up.seen[0].body)).toEqual({ hello: 'world' });
    expect(up.seen[0].headers).toMatchObject({ 'content-type': 'application/json', 'x-test-key': 'k1' });
  });

  it('retries 429 and 5xx with backoff, then succeeds', async () => {
    const up = await endpoint([
      { status: 503, body: 'busy' },
      { status: 429, body: '{"error":{"message":"slow down"}}' },
      { status: 200, body: JSON.stringify({ text: 'third time' }) },
    ]);
    await expect(requestHostedModel(request(up.url), decode)).resolves.toMatchObject({ raw: 'third time' });
    expect(up.seen).toHaveLength(3);
  });

  it('gives up after maxAttempts with model_error naming the endpoint, the error and the key variable', async () => {
    const up = await endpoint([{ status: 500, body: '{"error":{"message":"overloaded"}}' }]);
    await expect(requestHostedModel(request(up.url, { maxAttempts: 2 }), decode)).rejects.toMatchObject({
      endReason: 'model_error',
      message: expect.stringMatching(new RegExp(`${up.url} failed: HTTP 500: overloaded.*TEST_API_KEY`)),
    });
    expect(up.seen).toHaveLength(2);
  });

  it('does not retry a 4xx refusal, nor an answer the decoder rejects', async () => {
    const refused = await endpoint([{ status: 404, body: '{"error":{"message":"no such model"}}' }]);
    await expect(requestHostedModel(request(refused.url), decode)).rejects.toMatchObject({
      endReason: 'model_error',
      message: expect.stringMatching(/HTTP 404: no such model/),
    });
    expect(refused.seen).toHaveLength(1);

    const odd = await endpoint([{ status: 200, body: '{}' }]);
    await expect(
      requestHostedModel(request(odd.url), () => {
        throw new Error('no candidates in the answer');
      }),
    ).rejects.toMatchObject({ endReason: 'model_error', message: expect.stringMatching(/no candidates/) });
    expect(odd.seen).toHaveLength(1);
  });

  it('a cancelled request ends with stopped, not model_error', async () => {
    const up = await endpoint([{ status: 200, body: JSON.stringify({ text: 'late' }) }]);
    const controller = new AbortController();
    controller.abort();
    await expect(
      requestHostedModel(request(up.url, { signal: controller.signal }), decode),
    ).rejects.toMatchObject({ endReason: 'stopped' });
  });
});
