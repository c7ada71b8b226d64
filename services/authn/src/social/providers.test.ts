/**
 * How each provider's documented user-info answer becomes an identity (issue 20, social/providers.ts),
 * and where `--<provider>-base-url` moves its endpoints.
 */
import { describe, it, expect } from '@jest/globals';
import { testOptions } from '../fixture.ts';
import {
  issuerOf, moved, profileFromClaims, profileFromDiscord, profileFromFacebook, profileFromGithub, profileFromTwitter, providerScopes, withTwitchUser,
} from './providers.ts';

describe('provider identities', () => {
  it('GitHub: the primary address and its verified flag, the numeric id as subject', () => {
    const user = { login: 'octocat', id: 583231, avatar_url: 'https://avatars.githubusercontent.com/u/583231', name: 'The Octocat', email: null };
    const emails = [
      { email: 'old@example.com', primary: false, verified: true, visibility: null },
      { email: 'octocat@example.com', primary: true, verified: false, visibility: 'public' },
    ];
    expect(profileFromGithub(user, emails)).toEqual({
      subject: '583231', email: 'octocat@example.com', emailVerified: false, givenName: 'The', familyName: 'Octocat', nickname: 'octocat',
      picture: 'https://avatars.githubusercontent.com/u/583231',
    });
    expect(profileFromGithub(user, [])).toMatchObject({ email: null, emailVerified: false });
  });

  it('Facebook: Graph fields, picture.data.url, an email only when confirmed', () => {
    const me = { id: '10158', name: 'Ada L', email: 'ada@example.com', first_name: 'Ada', last_name: 'L', picture: { data: { url: 'https://fb.example/p.jpg', is_silhouette: false } } };
    expect(profileFromFacebook(me)).toEqual({ subject: '10158', email: 'ada@example.com', emailVerified: true, givenName: 'Ada', familyName: 'L', nickname: 'Ada L', picture: 'https://fb.example/p.jpg' });
    expect(profileFromFacebook({ id: '1', name: 'x' })).toMatchObject({ email: null, emailVerified: false });
  });

  it('Discord: verified is the email flag; the avatar hash becomes a CDN URL', () => {
    expect(profileFromDiscord({ id: '80351110224678912', username: 'nelly', global_name: 'Nelly', avatar: '8342729096ea3675442027381ff50dfe', email: 'nelly@example.com', verified: true })).toEqual({
      subject: '80351110224678912', email: 'nelly@example.com', emailVerified: true, nickname: 'Nelly',
      picture: 'https://cdn.discordapp.com/avatars/80351110224678912/8342729096ea3675442027381ff50dfe.png',
    });
  });

  it('Twitter: data.id and username, never an email', () => {
    expect(profileFromTwitter({ data: { id: '2244994945', name: 'X Dev', username: 'XDevelopers', profile_image_url: 'https://pbs.example/x.jpg' } }))
      .toEqual({ subject: '2244994945', email: null, emailVerified: false, nickname: 'XDevelopers', picture: 'https://pbs.example/x.jpg' });
  });

  it('OIDC claims: Apple\'s string booleans and form_post names; Microsoft\'s email verified only when said so', () => {
    expect(profileFromClaims('apple', { sub: '001', email: 'a@privaterelay.appleid.com', email_verified: 'true' }, JSON.stringify({ name: { firstName: 'Tim', lastName: 'A' } })))
      .toMatchObject({ subject: '001', email: 'a@privaterelay.appleid.com', emailVerified: true, givenName: 'Tim', familyName: 'A' });
    expect(profileFromClaims('apple', { sub: '001', email_verified: 'false' }, 'not json')).toMatchObject({ emailVerified: false, givenName: null });
    expect(profileFromClaims('microsoft', { sub: 'm', email: 'x@contoso.example' }).emailVerified).toBe(false);
    expect(profileFromClaims('microsoft', { sub: 'm', email: 'x@contoso.example', xms_edov: true }).emailVerified).toBe(true);
    expect(profileFromClaims('google', { sub: 'g', email: 'g@example.com', email_verified: false }).emailVerified).toBe(false);
  });

  it('Twitch: Helix display name and image over the OIDC identity; a Helix email stays unverified', () => {
    const oidc = profileFromClaims('twitch', { sub: '141981764', preferred_username: 'twitchdev' });
    expect(withTwitchUser(oidc, { data: [{ id: '141981764', login: 'twitchdev', display_name: 'TwitchDev', email: 't@example.com', profile_image_url: 'https://static.example/t.png' }] }))
      .toMatchObject({ subject: '141981764', email: 't@example.com', emailVerified: false, nickname: 'TwitchDev', picture: 'https://static.example/t.png' });
  });
});

describe('endpoints and scopes', () => {
  it('--<provider>-base-url replaces scheme, host and port and keeps the documented path; the tenant goes into Microsoft\'s issuer', () => {
    const o = testOptions({ microsoftTenantId: 'contoso.onmicrosoft.com', githubBaseUrl: 'http://127.0.0.1:9000', robloxBaseUrl: 'https://roblox.internal:8443/ignored' });
    expect(moved(o, 'github', 'https://github.com/login/oauth/authorize')).toBe('http://127.0.0.1:9000/login/oauth/authorize');
    expect(moved(o, 'github', 'https://api.github.com/user/emails')).toBe('http://127.0.0.1:9000/user/emails');
    expect(moved(o, 'google', 'https://accounts.google.com')).toBe('https://accounts.google.com');
    expect(issuerOf(o, 'microsoft')).toBe('https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0');
    expect(issuerOf(o, 'roblox')).toBe('https://roblox.internal:8443/oauth/');
  });

  it('--<provider>-scopes (behaviour.md §1.3 defaults), with openid added for an OIDC provider', () => {
    expect(providerScopes(testOptions(), 'github')).toEqual(['read:user', 'user:email']);
    expect(providerScopes(testOptions(), 'apple')).toEqual(['openid', 'email', 'name']);
    expect(providerScopes(testOptions({ googleScopes: ['email'] }), 'google')).toEqual(['openid', 'email']);
  });
});
