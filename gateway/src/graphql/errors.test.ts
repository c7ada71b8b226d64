import { describe, expect, it } from '@jest/globals';
import { buildSchema, graphql } from 'graphql';
import { formatGatewayError, redactVariableValue } from './errors.ts';

const schema = buildSchema(`
  enum Kind { A B }
  input LoginRequest { email: String!, password: String!, kind: Kind, n: Int }
  type Query { login(params: LoginRequest!): String }
`);

/** The message graphql-js itself gives for `variables`. */
async function messageFor(variables: Record<string, unknown>): Promise<string> {
  const res = await graphql({ schema, source: 'query($params: LoginRequest!) { login(params: $params) }', variableValues: variables });
  return res.errors![0]!.message;
}

describe('GraphQL errors never echo a variable value (issue 30 §5)', () => {
  it.each([
    [{ params: { password: 'hunter2-secret' } }, 'Variable "$params" got invalid value; Field "email" of required type "String!" was not provided.'],
    [{ params: { email: 'a@b.c', password: 'hunter2-secret', extra: 1 } }, 'Variable "$params" got invalid value; Field "extra" is not defined by type "LoginRequest".'],
    [{ params: { email: 'a@b.c', password: 'hunter2-secret', n: 'hunter2-secret' } }, 'Variable "$params" got invalid value at "params.n"; Int cannot represent the value given.'],
    [{ params: { email: 'a@b.c', password: 'hunter2-secret', kind: 'hunter2-secret' } }, 'Variable "$params" got invalid value at "params.kind"; the value is not one of enum "Kind".'],
    [{ params: 'hunter2-secret' }, 'Variable "$params" got invalid value; Expected type "LoginRequest" to be an object.'],
  ])('%j', async (variables, expected) => {
    const original = await messageFor(variables);
    expect(original).toContain('hunter2-secret');
    expect(redactVariableValue(original)).toBe(expected);
    expect(formatGatewayError({ message: original, extensions: { code: 'BAD_USER_INPUT' } })).toEqual({ message: expected, extensions: { code: 'INVALID_ARGUMENT' } });
  });

  it('leaves other messages alone', () => {
    expect(redactVariableValue('Variable "$params" of required type "LoginRequest!" was not provided.')).toBe('Variable "$params" of required type "LoginRequest!" was not provided.');
    expect(redactVariableValue('invalid email address')).toBe('invalid email address');
  });
});
