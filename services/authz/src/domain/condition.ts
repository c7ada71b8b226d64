/**
 * @module condition: OpenFGA schema 1.1 conditions (ABAC): CEL expressions over typed parameters, evaluated
 * against a tuple's condition context merged over the request context (OpenFGA internal/condition).
 */
import { BlockList, isIP } from 'node:net';
import { Environment, serialize, type ASTNode } from '@marcbachmann/cel-js';

/**
 * OpenFGA's default `maxConditionEvaluationCost`: an evaluation estimated above it fails with
 * `operation cancelled: actual cost limit exceeded` instead of answering.
 */
export const MAX_CONDITION_COST = 100;

/** A condition as the DSL transformer emits it (OpenFGA `Condition`). */
export interface JsonCondition {
  name: string;
  expression: string;
  parameters?: Record<string, JsonParamType>;
}

/** A condition parameter type (OpenFGA `ConditionParamTypeRef`). */
export interface JsonParamType {
  type_name: string;
  generic_types?: JsonParamType[];
}

/** A tuple's condition as stored and on the wire: the condition's name and its own (partial) context. */
export interface TupleCondition {
  name: string;
  context: Record<string, unknown> | null;
}

/**
 * A condition evaluation failed: a missing parameter, a value of the wrong type, a CEL runtime error or
 * the cost limit. Resolution treats it like a depth overflow: a branch that grants elsewhere still
 * grants, else the whole call fails with this message (OpenFGA answers such a check with an error).
 */
export class ConditionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConditionError';
  }
}

/** An IP address (OpenFGA's `ipaddress` CEL type), with `in_cidr`. */
export class IpAddress {
  readonly text: string;
  readonly family: 'ipv4' | 'ipv6';
  constructor(text: string) {
    const v = isIP(text);
    if (v === 0) throw new Error(`invalid ipaddress "${text}"`);
    this.text = text;
    this.family = v === 4 ? 'ipv4' : 'ipv6';
  }

  /** True when the address lies in `cidr` (`10.0.0.0/8`). @throws Error on a malformed CIDR */
  inCidr(cidr: string): boolean {
    const slash = cidr.indexOf('/');
    const net = cidr.slice(0, slash);
    const bits = Number(cidr.slice(slash + 1));
    const v = isIP(net);
    if (slash < 0 || v === 0 || !Number.isInteger(bits)) throw new Error(`invalid CIDR "${cidr}"`);
    const list = new BlockList();
    list.addSubnet(net, bits, v === 4 ? 'ipv4' : 'ipv6');
    return list.check(this.text, this.family);
  }
}

const SCALARS: Record<string, string> = {
  TYPE_NAME_ANY: 'dyn',
  TYPE_NAME_BOOL: 'bool',
  TYPE_NAME_STRING: 'string',
  TYPE_NAME_INT: 'int',
  TYPE_NAME_UINT: 'uint',
  TYPE_NAME_DOUBLE: 'double',
  TYPE_NAME_BYTES: 'bytes',
  TYPE_NAME_DURATION: 'google.protobuf.Duration',
  TYPE_NAME_TIMESTAMP: 'google.protobuf.Timestamp',
  TYPE_NAME_IPADDRESS: 'ipaddress',
};

/** The CEL type text of a parameter type (`list<int>`, `map<string, double>`). @throws Error on an unknown type */
function celType(t: JsonParamType): string {
  if (t.type_name === 'TYPE_NAME_LIST') return `list<${celType(t.generic_types?.[0] ?? { type_name: 'TYPE_NAME_ANY' })}>`;
  if (t.type_name === 'TYPE_NAME_MAP') return `map<string, ${celType(t.generic_types?.[0] ?? { type_name: 'TYPE_NAME_ANY' })}>`;
  const s = SCALARS[t.type_name];
  if (s === undefined) throw new Error(`unknown parameter type ${t.type_name}`);
  return s;
}

/** The base environment: CEL's standard library plus OpenFGA's `ipaddress` type. */
function baseEnvironment(): Environment {
  return new Environment({ homogeneousAggregateLiterals: false, limits: { maxAstNodes: 2000, maxDepth: 100 } })
    .registerType('ipaddress', IpAddress)
    .registerFunction('ipaddress(string): ipaddress', (s: string) => new IpAddress(s))
    .registerFunction('ipaddress.in_cidr(string): bool', (ip: IpAddress, cidr: string) => ip.inCidr(cidr));
}

/** Converts strings to duration, timestamp and uint values with the CEL library's own parsers. */
const converters = new Environment({ unlistedVariablesAreDyn: true });
const toDuration = converters.parse('duration(v)');
const toTimestamp = converters.parse('timestamp(v)');
const toUint = converters.parse('uint(v)');

/** The Go type OpenFGA sees for a JSON context value (its messages name it): `float64`, `map[string]interface {}`. */
function goType(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'number') return 'float64';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'string') return 'string';
  return Array.isArray(v) ? '[]interface {}' : 'map[string]interface {}';
}

/**
 * A number as Go's `%g` prints it: `prec` significant digits (-1: the fewest that read back the same), trailing
 * zeros dropped, an exponent (`e+09`) below 1e-4 or from 10^prec up (from 1e6 up when shortest), as in
 * strconv.FormatFloat and big.Float.Text.
 */
function goG(n: number, prec: number): string {
  if (!Number.isFinite(n)) return Number.isNaN(n) ? 'NaN' : n > 0 ? '+Inf' : '-Inf';
  if (n === 0) return '0';
  const [mantissa, e] = (prec < 0 ? Math.abs(n).toExponential() : Math.abs(n).toExponential(prec - 1)).split('e') as [string, string];
  const digits = mantissa.replace('.', '').replace(/0+$/, '') || '0';
  const exp = Number(e);
  let eprec = prec < 0 ? 6 : prec;
  if (prec >= 0 && eprec > digits.length && digits.length >= exp + 1) eprec = digits.length;
  const sign = n < 0 ? '-' : '';
  if (exp < -4 || exp >= eprec) {
    const abs = String(Math.abs(exp)).padStart(2, '0');
    return `${sign}${digits[0]}${digits.length > 1 ? `.${digits.slice(1)}` : ''}e${exp < 0 ? '-' : '+'}${abs}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  const whole = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
  const frac = digits.slice(exp + 1);
  return `${sign}${whole}${frac ? `.${frac}` : ''}`;
}

/** A JSON value as Go's `%v` prints the primitive ones (a float64 in `%g`'s shortest form). */
const goValue = (v: unknown): string => (typeof v === 'number' ? goG(v, -1) : typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v));

/** A decimal number in a string, as Go's big.ParseFloat(s, 10, …) reads it. */
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * A JSON number, or a string holding one, as OpenFGA's numeric converter reads it for a parameter of Go
 * type `goName` (`int64`, `uint64`, `float64`), with its messages. @throws Error
 */
function numeric(v: unknown, goName: string): number {
  if (typeof v === 'number') return v;
  if (typeof v !== 'string') throw new Error(`expected type value '${goName}', but found '${goType(v)}'`);
  if (!DECIMAL.test(v)) throw new Error(`expected a ${goName} value, but found invalid string value '${v}'`);
  return Number(v);
}

/** An int or uint parameter value (OpenFGA numericTypeConverterFunc). @throws Error */
function integer(v: unknown, unsigned: boolean): bigint {
  if (typeof v === 'bigint') return v;
  const n = numeric(v, unsigned ? 'uint64' : 'int64');
  const kind = unsigned ? 'uint' : 'int';
  if (!Number.isInteger(n)) throw new Error(`expected ${unsigned ? 'a' : 'an'} ${kind} value, but found numeric value '${goG(n, 10)}'`);
  if (unsigned && n < 0) throw new Error(`expected a uint value, but found int64 value '${goG(n, 10)}'`);
  return typeof v === 'string' && /^[+-]?\d+$/.test(v) ? BigInt(v) : BigInt(n);
}

/** Runs a CEL library parser on a string, with OpenFGA's message when it refuses. @throws Error */
function parsed<T>(parse: () => T, message: string): T {
  try {
    return parse();
  } catch {
    throw new Error(message);
  }
}

/**
 * Converts one JSON context value to the CEL value of `t` (OpenFGA types.ParameterType.ConvertValue), refusing
 * with OpenFGA's own wording (internal/condition/types: `expected type value 'string', but found 'float64'`).
 * @throws Error
 */
function convert(t: JsonParamType, v: unknown): unknown {
  switch (t.type_name) {
    case 'TYPE_NAME_ANY':
      return v;
    case 'TYPE_NAME_BOOL':
      if (typeof v !== 'boolean') throw new Error(`expected type value 'bool', but found '${goType(v)}'`);
      return v;
    case 'TYPE_NAME_STRING':
      if (typeof v !== 'string') throw new Error(`expected type value 'string', but found '${goType(v)}'`);
      return v;
    case 'TYPE_NAME_INT':
      return integer(v, false);
    case 'TYPE_NAME_UINT':
      return toUint({ v: integer(v, true) });
    case 'TYPE_NAME_DOUBLE':
      return numeric(v, 'float64');
    case 'TYPE_NAME_BYTES': // not an OpenFGA parameter type: no wording to follow
      if (typeof v !== 'string') throw new Error('expected a string of bytes');
      return new Uint8Array(Buffer.from(v, 'utf8'));
    case 'TYPE_NAME_DURATION':
      if (typeof v !== 'string') throw new Error(`expected a duration string, but found: ${goType(v)} '${goValue(v)}'`);
      return parsed(() => toDuration({ v }), `expected a valid duration string, but found: '${v}'`);
    case 'TYPE_NAME_TIMESTAMP':
      if (typeof v !== 'string') throw new Error(`expected RFC 3339 formatted timestamp string, but found: ${goType(v)} '${goValue(v)}'`);
      return parsed(() => toTimestamp({ v }), `expected RFC 3339 formatted timestamp string, but found '${v}'`);
    case 'TYPE_NAME_IPADDRESS':
      if (typeof v !== 'string') throw new Error(`expected an ipaddress string, but found: ${goType(v)} '${goValue(v)}'`);
      return parsed(() => new IpAddress(v), `expected a well-formed IP address, but found: '${v}'`);
    case 'TYPE_NAME_LIST': {
      if (!Array.isArray(v)) throw new Error(`list requires a list, found: ${goType(v)}`);
      const item = t.generic_types?.[0] ?? { type_name: 'TYPE_NAME_ANY' };
      return v.map((x, i) => {
        try {
          return convert(item, x);
        } catch (err) {
          throw new Error(`found an invalid list item at index \`${i}\`: ${(err as Error).message}`);
        }
      });
    }
    case 'TYPE_NAME_MAP': {
      if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error(`map requires a map, found: ${goType(v)}`);
      const item = t.generic_types?.[0] ?? { type_name: 'TYPE_NAME_ANY' };
      const out = new Map<string, unknown>();
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        try {
          out.set(k, convert(item, x));
        } catch (err) {
          throw new Error(`found an invalid value for key '${k}': ${(err as Error).message}`);
        }
      }
      return out;
    }
    default:
      throw new Error(`unknown parameter type ${t.type_name}`);
  }
}

const MACROS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);

/** Length of a runtime list or map, 0 for anything else. */
function sizeOf(v: unknown): number {
  if (Array.isArray(v)) return v.length;
  if (v instanceof Map) return v.size;
  if (v !== null && typeof v === 'object') return Object.keys(v).length;
  return 0;
}

/** A compiled condition. */
export class CompiledCondition {
  readonly name: string;
  readonly params: ReadonlyMap<string, JsonParamType>;
  private readonly env: Environment;
  private readonly program: ReturnType<Environment['parse']>;
  private readonly hasMacro: boolean;

  /** @throws Error with the reason the expression does not compile to a bool over its parameters */
  constructor(c: JsonCondition) {
    this.name = c.name;
    this.params = new Map(Object.entries(c.parameters ?? {}));
    let env = baseEnvironment();
    for (const [p, t] of this.params) env = env.registerVariable(p, celType(t));
    this.env = env;
    const checked = env.check(c.expression);
    if (!checked.valid) throw new Error(checked.error?.message.split('\n')[0] ?? 'invalid expression');
    if (checked.type !== 'bool') throw new Error(`expected a bool condition expression output, but got '${checked.type}'`);
    this.program = env.parse(c.expression);
    this.hasMacro = serialize(this.program.ast as ASTNode).match(/\.(all|exists|exists_one|map|filter)\(/) !== null;
  }

  /**
   * Evaluates the condition for one tuple: `tupleContext` overrides `requestContext` key by key (OpenFGA
   * merges the request context first, the tuple's last).
   * @returns whether the condition is met
   * @throws ConditionError `failed to evaluate relationship condition '<name>': ...` (missing parameters name
   *   the tuple, as OpenFGA: `tuple '<object>#<relation>@<user>' is missing context parameters '[a b]'`),
   *   `parameter type error on condition '<name>': ...`, or the cost limit
   */
  evaluate(tupleText: string, requestContext: Record<string, unknown> | null, tupleContext: Record<string, unknown> | null): boolean {
    const merged: Record<string, unknown> = { ...(requestContext ?? {}), ...(tupleContext ?? {}) };
    const values: Record<string, unknown> = {};
    const missing: string[] = [];
    for (const [p, t] of this.params) {
      if (!(p in merged) || merged[p] === null) {
        missing.push(p);
        continue;
      }
      try {
        values[p] = convert(t, merged[p]);
      } catch (err) {
        throw new ConditionError(`parameter type error on condition '${this.name}': failed to convert context parameter '${p}': ${(err as Error).message.split('\n')[0]}`);
      }
    }
    const failed = (reason: string): ConditionError => new ConditionError(`failed to evaluate relationship condition '${this.name}': ${reason}`);
    if (this.hasMacro && this.cost(this.program.ast as ASTNode, values) > MAX_CONDITION_COST) {
      throw failed('operation cancelled: actual cost limit exceeded');
    }
    let out: unknown;
    try {
      out = this.program(values);
    } catch (err) {
      if (missing.length > 0) throw failed(`tuple '${tupleText}' is missing context parameters '[${missing.sort().join(' ')}]'`);
      throw failed(`failed to evaluate condition expression: ${(err as Error).message.split('\n')[0]}`);
    }
    return out === true;
  }

  /**
   * An estimate of CEL's actual evaluation cost (cel-go counts about one unit per evaluated call, operator
   * and variable, and a comprehension's body once per element): literals cost 0, other nodes 1 plus their
   * operands, and a macro its range plus, per element of the range, 1 and its body.
   */
  private cost(node: ASTNode | unknown, values: Record<string, unknown>): number {
    if (node === null || typeof node !== 'object' || !('op' in node)) return 0;
    const n = node as { op: string; args: unknown };
    if (n.op === 'value') return 0;
    if (n.op === 'id') return 1;
    if (n.op === 'rcall' && Array.isArray(n.args) && MACROS.has(n.args[0] as string)) {
      const range = n.args[1] as ASTNode;
      const body = (n.args[2] as unknown[]).slice(1);
      const size = this.rangeSize(range, values);
      return this.cost(range, values) + size * (1 + body.reduce<number>((s, b) => s + this.cost(b, values), 0));
    }
    let total = 1;
    const walk = (a: unknown): void => {
      if (Array.isArray(a)) a.forEach(walk);
      else total += this.cost(a, values);
    };
    walk(n.args);
    return total;
  }

  /** The number of elements a macro iterates: its range evaluated, or the largest list parameter when it cannot be. */
  private rangeSize(range: ASTNode, values: Record<string, unknown>): number {
    try {
      return sizeOf(this.env.evaluate(serialize(range), values));
    } catch {
      return Math.max(0, ...Object.values(values).map(sizeOf));
    }
  }
}

/**
 * Compiles a model's conditions.
 * @throws Error `condition '<name>': <reason>` for the first that does not compile
 */
export function compileConditions(conditions: Record<string, JsonCondition> | undefined): Map<string, CompiledCondition> {
  const out = new Map<string, CompiledCondition>();
  for (const [name, c] of Object.entries(conditions ?? {})) {
    try {
      out.set(name, new CompiledCondition({ ...c, name }));
    } catch (err) {
      throw new Error(`failed to compile expression on condition '${name}': ${(err as Error).message}`);
    }
  }
  return out;
}

/**
 * Validates a condition context: a JSON object (or absent). Returns null for an absent or empty one.
 * @throws Error `<what> must be a JSON object`
 */
export function parseContext(raw: unknown, what: string): Record<string, unknown> | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new Error(`${what} must be a JSON object`);
  return Object.keys(raw).length === 0 ? null : (raw as Record<string, unknown>);
}
