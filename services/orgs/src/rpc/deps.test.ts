/** The §5.7 names of the org-scoped admin actions' failures. */
import { describe, expect, it } from '@jest/globals';
import { failedTwin } from './deps.ts';

describe('the §5.7 _failed twin', () => {
  it('is named after the verb', () => {
    expect(failedTwin('org_member_added')).toBe('org_member_add_failed');
    expect(failedTwin('organization_created')).toBe('organization_create_failed');
    expect(failedTwin('org_domain_verified')).toBe('org_domain_verify_failed');
    expect(failedTwin('scim_token_rotated')).toBe('scim_token_rotate_failed');
  });
});
