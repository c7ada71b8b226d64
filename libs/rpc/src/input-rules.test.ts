import { describe, expect, it } from '@jest/globals';
import { AppError } from '@gatehouse/errors';
import { MAX_LENGTH, textRuleOf } from './input-rules.ts';
import { serviceDescriptor, servicesWithProto, type DescriptorName } from './proto.ts';

const refusal = (fn: () => unknown): { code: string; message: string } | null => {
  try {
    fn();
    return null;
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { code: err.code, message: err.message };
  }
};

const DESCRIPTORS: DescriptorName[] = [...servicesWithProto(), ...servicesWithProto().map((s) => `${s}.internal` as DescriptorName)]
  .filter((d) => { try { serviceDescriptor(d); return true; } catch { return false; } });

/** Every top-level string field of every RPC request of every proto. */
const STRING_FIELDS = DESCRIPTORS.flatMap((d) => [...serviceDescriptor(d).methods.values()].flatMap((m) =>
  m.requestType.fieldsArray.filter((f) => f.type === 'string').map((f) => [`${d}.${m.name}.${f.name}`, m, f.name, f.repeated] as const)));

describe('the input rule of every string field (issue 30 §5)', () => {
  it('covers the protos', () => {
    expect(STRING_FIELDS.length).toBeGreaterThan(300);
  });

  it.each(STRING_FIELDS)('%s refuses a NUL byte, a C0 control and an over-long value, naming the field', (_name, method, field, repeated) => {
    const wrap = (v: string): unknown => (repeated ? [v] : v);
    const shown = repeated ? `${field}[0]` : field;
    expect(refusal(() => method.normalizeRequest({ [field]: wrap('a\u0000b') }))).toEqual({
      code: 'invalid_argument',
      message: expect.stringMatching(new RegExp(`^invalid value for field "${shown.replace(/[[\]]/g, '\\$&')}": (control characters are not allowed|expected an id \\(visible ASCII characters\\))$`)),
    });
    expect(refusal(() => method.normalizeRequest({ [field]: wrap('a\u0007b') }))?.code).toBe('invalid_argument');
    const rule = textRuleOf(field);
    expect(refusal(() => method.normalizeRequest({ [field]: wrap('x'.repeat(rule.maxLength + 1)) })))
      .toEqual({ code: 'invalid_argument', message: `${shown} must be at most ${rule.maxLength} characters` });
    // the longest allowed value and an ordinary one pass
    expect(refusal(() => method.normalizeRequest({ [field]: wrap('x'.repeat(rule.maxLength)) }))).toBeNull();
    expect(refusal(() => method.normalizeRequest({ [field]: wrap('ordinary-value_1') }))).toBeNull();
  });

  it('lets multi-line fields carry tab, LF and CR, and no other field', () => {
    expect(textRuleOf('dsl').check('model\n  schema 1.1\r\n\ttype user')).toBeNull();
    expect(textRuleOf('dsl').check('model\u0000')).toBe('control characters are not allowed');
    expect(textRuleOf('email').check('a@b.c\n')).toBe('control characters are not allowed');
    expect(textRuleOf('name').check('x'.repeat(MAX_LENGTH.line + 1))).toBe(`must be at most ${MAX_LENGTH.line} characters`);
    expect(textRuleOf('id').check('a b')).toBe('expected an id (visible ASCII characters)');
    expect(textRuleOf('id').check('3f0c2b9e-1d1b-4c55-9a55-2b1d0f7e8a11')).toBeNull();
    expect(textRuleOf('access_token').kind).toBe('long');
    expect(textRuleOf('external_id').kind).toBe('line');
  });

  it('checks the strings inside JSON-object fields, naming the path', () => {
    const updateProfile = serviceDescriptor('authn').methods.get('UpdateProfile')!;
    expect(refusal(() => updateProfile.normalizeRequest({ app_data: { list: [{ note: 'a\u0000' }] } }))).toEqual({
      code: 'invalid_argument', message: 'invalid value for field "app_data.list[0].note": control characters are not allowed',
    });
    expect(refusal(() => updateProfile.normalizeRequest({ app_data: { note: 'two\nlines' } }))).toBeNull();
  });
});
