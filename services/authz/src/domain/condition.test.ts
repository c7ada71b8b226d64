/** @module condition.test: CEL conditions outside a model: the `bytes` type (which the DSL cannot declare), ipaddress, the cost estimate. */
import { describe, expect, it } from '@jest/globals';
import { CompiledCondition, ConditionError, IpAddress, MAX_CONDITION_COST, compileConditions } from './condition.ts';

describe('CompiledCondition (OpenFGA conditions)', () => {
  it('evaluates a bytes parameter (JSON model type TYPE_NAME_BYTES; the DSL grammar has no `bytes` keyword)', () => {
    const c = new CompiledCondition({ name: 'b', expression: 'x == b"abc"', parameters: { x: { type_name: 'TYPE_NAME_BYTES' } } });
    expect(c.evaluate('doc:1#v@user:a', { x: 'abc' }, null)).toBe(true);
    expect(c.evaluate('doc:1#v@user:a', { x: 'abd' }, null)).toBe(false);
    expect(() => c.evaluate('doc:1#v@user:a', { x: 1 }, null)).toThrow("parameter type error on condition 'b': failed to convert context parameter 'x': expected a string of bytes");
  });

  it('lets the tuple context override the request context and names every missing parameter, sorted', () => {
    const c = new CompiledCondition({
      name: 'two',
      expression: 'a == "x" && b == "y"',
      parameters: { b: { type_name: 'TYPE_NAME_STRING' }, a: { type_name: 'TYPE_NAME_STRING' } },
    });
    expect(c.evaluate('t', { a: 'no', b: 'y' }, { a: 'x' })).toBe(true);
    expect(() => c.evaluate('doc:1#v@user:a', null, null)).toThrow(ConditionError);
    expect(() => c.evaluate('doc:1#v@user:a', null, null)).toThrow("failed to evaluate relationship condition 'two': tuple 'doc:1#v@user:a' is missing context parameters '[a b]'");
  });

  it('refuses a declared parameter that is missing even when the expression short-circuits past it, as OpenFGA does', () => {
    const c = new CompiledCondition({ name: 'xy', expression: 'x < 100 || y < 50', parameters: { x: { type_name: 'TYPE_NAME_INT' }, y: { type_name: 'TYPE_NAME_INT' } } });
    expect(() => c.evaluate('doc:1#viewer@user:jon', { x: 10 }, null)).toThrow("failed to evaluate relationship condition 'xy': tuple 'doc:1#viewer@user:jon' is missing context parameters '[y]'");
    expect(() => c.evaluate('doc:1#viewer@user:jon', null, { y: 10 })).toThrow("tuple 'doc:1#viewer@user:jon' is missing context parameters '[x]'");
    expect(c.evaluate('doc:1#viewer@user:jon', { x: 101 }, { y: 10 })).toBe(true);
  });

  it('refuses a double beyond float64 (a string read at 64 bits that is not exactly a float64) in OpenFGA\'s words', () => {
    const c = new CompiledCondition({ name: 'f', expression: 'x > 0.0', parameters: { x: { type_name: 'TYPE_NAME_DOUBLE' } } });
    const refusal = (x: unknown): string => {
      try {
        c.evaluate('t', { x }, null);
      } catch (err) {
        return (err as Error).message;
      }
      return 'answered';
    };
    const prefix = "parameter type error on condition 'f': failed to convert context parameter 'x': ";
    expect(refusal('1.79769313486231570814527423731704356798070e+309')).toBe(`${prefix}number cannot be represented as a float64: 1.797693135e+309`);
    expect(refusal('-1.79769313486231570814527423731704356798070e+309')).toBe(`${prefix}number cannot be represented as a float64: -1.797693135e+309`);
    expect(refusal('1e-400')).toBe(`${prefix}number cannot be represented as a float64: 1e-400`);
    expect(refusal('0.1')).toBe(`${prefix}number cannot be represented as a float64: 0.1`);
    expect(refusal(Infinity)).toBe(`${prefix}number cannot be represented as a float64: +Inf`);
    expect(refusal(null)).toBe(`${prefix}expected type value 'float64', but found '%!s(<nil>)'`);
    expect(c.evaluate('t', { x: '1.5' }, null)).toBe(true);
    expect(refusal('0.000123e+3')).toBe(`${prefix}number cannot be represented as a float64: 0.123`);
    expect(c.evaluate('t', { x: '0.25e1' }, null)).toBe(true);
    expect(c.evaluate('t', { x: '-2.5e-1' }, null)).toBe(false);
    expect(refusal('-2.5e-3')).toBe(`${prefix}number cannot be represented as a float64: -0.0025`);
    expect(c.evaluate('t', { x: 0.1 }, null)).toBe(true);
  });

  it('refuses an evaluation over the cost limit and accepts one under it', () => {
    const c = new CompiledCondition({ name: 'all', expression: 'xs.all(x, x > 0)', parameters: { xs: { type_name: 'TYPE_NAME_LIST', generic_types: [{ type_name: 'TYPE_NAME_INT' }] } } });
    expect(c.evaluate('t', { xs: Array.from({ length: 20 }, () => 1) }, null)).toBe(true);
    expect(() => c.evaluate('t', { xs: Array.from({ length: MAX_CONDITION_COST }, () => 1) }, null)).toThrow('operation cancelled: actual cost limit exceeded');
  });

  it('checks ipaddress values and CIDRs (IPv4 and IPv6)', () => {
    expect(new IpAddress('10.1.2.3').inCidr('10.0.0.0/8')).toBe(true);
    expect(new IpAddress('2001:db8::1').inCidr('2001:db8::/32')).toBe(true);
    expect(new IpAddress('192.168.1.1').inCidr('10.0.0.0/8')).toBe(false);
    expect(() => new IpAddress('not-an-ip')).toThrow('invalid ipaddress');
  });

  it('refuses a condition that does not compile to a bool', () => {
    expect(() => compileConditions({ c: { name: 'c', expression: 'n + 1', parameters: { n: { type_name: 'TYPE_NAME_INT' } } } })).toThrow(
      "failed to compile expression on condition 'c': expected a bool condition expression output, but got 'int'",
    );
  });
});
