/**
 * The gateway's listener stopping (`listen().close()`, on SIGTERM; issue 37 §3): a request in flight is
 * answered, not cut, its connection then closed, and an idle keep-alive connection does not hold the
 * shutdown for its keep-alive timeout.
 */
import { describe, expect, it } from '@jest/globals';
import http from 'node:http';
import { listen } from './app.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** One GET on `agent`; resolves with status, the Connection header and the body. */
function get(port: number, agent: http.Agent): Promise<{ status: number; connection: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => { body += c.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
    }).on('error', reject);
  });
}

describe('gateway listener shutdown', () => {
  it('answers the request in flight when it stops, closes its connection after it, and does not wait for idle keep-alive connections', async () => {
    const { port, close } = await listen((_req, res) => {
      setTimeout(() => { res.setHeader('content-type', 'text/plain'); res.end('answered'); }, 400);
    }, '127.0.0.1', 0);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
    // two keep-alive connections: one idle, one with a request in flight when close() starts
    await Promise.all([get(port, agent), get(port, agent)]);
    const inFlight = get(port, agent);
    await sleep(100);
    const t0 = Date.now();
    await close();
    const stoppedMs = Date.now() - t0;
    expect(await inFlight).toMatchObject({ status: 200, body: 'answered' });
    // far below the 65 s keep-alive timeout: the idle connection and the answered one were closed
    expect(stoppedMs).toBeLessThan(5000);
    await expect(get(port, new http.Agent())).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    agent.destroy();
  });

});
