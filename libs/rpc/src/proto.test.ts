/** @module @gatehouse/rpc/proto.test A response that is a whole google.protobuf.Struct stays a plain JSON object. */
import { describe, it, expect } from '@jest/globals';
import { serviceDescriptor } from './proto.ts';

describe('top-level google.protobuf.Struct responses (GetOpenidConfiguration)', () => {
  const codec = serviceDescriptor('authn').methods.get('GetOpenidConfiguration')!;
  const doc = { issuer: 'https://auth.example.com', scopes_supported: ['openid', 'offline_access'], nested: { a: 1, b: null, c: true } };

  it('normalises to the same plain object (in-process path)', () => {
    expect(codec.normalizeResponse(doc)).toEqual(doc);
  });

  it('survives the protobuf encoding (gRPC path)', () => {
    expect(codec.decodeResponse(codec.encodeResponse(doc))).toEqual(doc);
  });

  it('still shapes ordinary messages', () => {
    const meta = serviceDescriptor('authn').methods.get('Meta')!;
    expect(meta.normalizeResponse({ version: '2.3.0' })).toMatchObject({ version: '2.3.0', is_sign_up_enabled: false });
  });
});
