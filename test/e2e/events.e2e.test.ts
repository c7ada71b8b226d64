/**
 * @module test/e2e/events
 * Domain events on NATS JetStream in split mode (behaviour.md §8): `user.signup`, `user.login` and
 * `user.deactivated` arrive once each, after the REST call that causes them, as Envelope JSON
 * `{id, name, source, occurredAt, data}` on `<stream lower-cased>.<name>`.
 */
import { describe, it, expect, beforeAll, afterAll, jest } from '@jest/globals';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, type ConsumerMessages } from '@nats-io/jetstream';
import { MACHINE, startDeployment, type Deployment } from '@gatehouse/testing';
import { rest } from '../support/surfaces.ts';
import { PASSWORD, expectOk, freshEmail, sessionCookie } from '../support/scenario.ts';

jest.setTimeout(60_000);

interface Envelope { id: string; name: string; source: string; occurredAt: number; data: Record<string, any> }
interface Received { subject: string; envelope: Envelope }

const NAMES = ['user.signup', 'user.login', 'user.deactivated'];

describe('events on JetStream (split)', () => {
  let d: Deployment;
  let nc: NatsConnection;
  let messages: ConsumerMessages;
  const received: Received[] = [];

  beforeAll(async () => {
    d = await startDeployment('split', { readyTimeoutMs: 60_000 });
    nc = await connect({ servers: MACHINE.natsUrl });
    const prefix = d.natsStream!.toLowerCase();
    // an ordered (ephemeral) consumer over the deployment's own stream, from its first message; one
    // wildcard filter, since the machine's nats-server predates multiple filter subjects (2.10)
    const consumer = await jetstream(nc).consumers.get(d.natsStream!, { filter_subjects: `${prefix}.user.>` });
    messages = await consumer.consume();
    void (async () => {
      for await (const m of messages) {
        const envelope = m.json<Envelope>();
        if (NAMES.includes(envelope.name)) received.push({ subject: m.subject, envelope });
      }
    })();
  }, 120_000);
  afterAll(async () => {
    await messages?.close();
    await nc?.close();
    await d?.stop();
  });

  /**
   * Waits until at least `atLeast` events named `name` for `userId` arrived (20 s at most), then
   * `settleMs` longer so a duplicate would show, and returns them.
   */
  async function eventsFor(name: string, userId: string, atLeast = 1, settleMs = 750): Promise<Received[]> {
    const match = (): Received[] => received.filter((r) => r.envelope.name === name && r.envelope.data?.user?.id === userId);
    const deadline = Date.now() + 20_000;
    while (match().length < atLeast && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, settleMs));
    return match();
  }

  const email = freshEmail('events');
  let userId = '';
  let token = '';

  it('signup publishes user.signup once, as an Envelope on <stream>.user.signup', async () => {
    const before = Math.floor(Date.now() / 1000);
    const body = expectOk(await rest(d, { op: 'signup', args: { email, password: PASSWORD, confirm_password: PASSWORD } }));
    userId = body.user.id;
    const got = await eventsFor('user.signup', userId);
    expect(got).toHaveLength(1);
    const { subject, envelope } = got[0]!;
    expect(subject).toBe(`${d.natsStream!.toLowerCase()}.user.signup`);
    expect(envelope).toEqual({ id: expect.any(String), name: 'user.signup', source: 'authn', occurredAt: expect.any(Number), data: expect.any(Object) });
    expect(envelope.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(envelope.occurredAt).toBeGreaterThanOrEqual(before - 1);
    expect(envelope.data.user).toMatchObject({ id: userId, email });
    // signup issues tokens, but it is not a login-type flow (behaviour.md §8)
    expect(await eventsFor('user.login', userId, 0)).toHaveLength(0);
  });

  it('login publishes user.login once; a session refresh publishes nothing', async () => {
    const login = await rest(d, { op: 'login', args: { email, password: PASSWORD } });
    token = expectOk(login).access_token;
    const got = await eventsFor('user.login', userId);
    expect(got).toHaveLength(1);
    expect(got[0]!.subject).toBe(`${d.natsStream!.toLowerCase()}.user.login`);
    expect(got[0]!.envelope).toMatchObject({ name: 'user.login', source: 'authn', data: { user: { id: userId, email } } });
    const refreshed = await rest(d, { op: 'session', creds: { cookie: sessionCookie(login) } });
    expect(expectOk(refreshed).message).toBe('Session token refreshed');
    expect(await eventsFor('user.login', userId)).toHaveLength(1);
    // a failed login publishes nothing either
    await rest(d, { op: 'login', args: { email, password: `${PASSWORD}x` } });
    expect(await eventsFor('user.login', userId)).toHaveLength(1);
  });

  it('deactivate_account publishes user.deactivated once', async () => {
    // the login session was rotated by the refresh above; log in again for a live token
    token = expectOk(await rest(d, { op: 'login', args: { email, password: PASSWORD } })).access_token;
    expect(expectOk(await rest(d, { op: 'deactivate_account', creds: { bearer: token } })).message).toBe('user account deactivated successfully');
    const got = await eventsFor('user.deactivated', userId);
    expect(got).toHaveLength(1);
    expect(got[0]!.envelope).toMatchObject({ name: 'user.deactivated', source: 'authn', data: { user: { id: userId } } });
    expect(got[0]!.envelope.data.user.revoked_timestamp).toEqual(expect.any(Number));
    expect(await eventsFor('user.signup', userId, 1, 0)).toHaveLength(1);
    expect(await eventsFor('user.login', userId, 2, 0)).toHaveLength(2);
  });
});
