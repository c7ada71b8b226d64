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

/**
 * The Go type OpenFGA sees for a JSON context value, as its messages print it with `%T` (`float64`,
 * `map[string]interface {}`; a JSON null is `<nil>`).
 */
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
  return layoutG(n < 0, mantissa.replace('.', ''), Number(e), prec);
}

/**
 * A decimal string (`1.79769313486231570814527423731704356798070e+309`, beyond float64's range too) as
 * big.Float's `String()` prints it: `%.10g`, rounded half up on the decimal digits.
 */
function decimalG10(s: string): string {
  const m = /^([+-]?)(\d*)\.?(\d*)(?:[eE]([+-]?\d+))?$/.exec(s);
  if (!m) return s;
  const [, sign, int = '', frac = '', e = '0'] = m;
  const all = `${int}${frac}`;
  const lead = all.length - all.replace(/^0+/, '').length;
  const sig = all.slice(lead);
  if (sig === '') return '0';
  let exp = int.length - lead - 1 + Number(e);
  let digits = sig.slice(0, 10);
  if (sig.length > 10 && Number(sig[10]) >= 5) {
    const up = (BigInt(digits) + 1n).toString();
    if (up.length > digits.length) exp += 1;
    digits = up.slice(0, 10);
  }
  return layoutG(sign === '-', digits, exp, 10);
}

/** `%g`'s layout of significant `digits` (d.ddd × 10^exp) at precision `prec` (-1: shortest). */
function layoutG(negative: boolean, mantissaDigits: string, exp: number, prec: number): string {
  const digits = mantissaDigits.replace(/0+$/, '') || '0';
  let eprec = prec < 0 ? 6 : prec;
  if (prec >= 0 && eprec > digits.length && digits.length >= exp + 1) eprec = digits.length;
  const sign = negative ? '-' : '';
  if (exp < -4 || exp >= eprec) {
    const abs = String(Math.abs(exp)).padStart(2, '0');
    return `${sign}${digits[0]}${digits.length > 1 ? `.${digits.slice(1)}` : ''}e${exp < 0 ? '-' : '+'}${abs}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  const whole = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
  const frac = digits.slice(exp + 1);
  return `${sign}${whole}${frac ? `.${frac}` : ''}`;
}

/** A JSON value's Go type as `%s` prints `reflect.TypeOf(v)`: as {@link goType}, and `%!s(<nil>)` for null. */
const reflectType = (v: unknown): string => (v === null || v === undefined ? '%!s(<nil>)' : goType(v));

/** A JSON value as Go's `%v` prints the primitive ones (a float64 in `%g`'s shortest form). */
const goValue = (v: unknown): string => (v === null || v === undefined ? '<nil>' : typeof v === 'number' ? goG(v, -1) : typeof v === 'object' ? JSON.stringify(v) : String(v));

/** A decimal number in a string, as Go's big.ParseFloat(s, 10, …) reads it (`Inf` and `inf` too, signed or not). */
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const INFINITY = /^[+-]?[Ii]nf$/;

/**
 * A JSON number, or a string holding one, as OpenFGA's numeric converter reads it for a parameter of Go
 * type `goName` (`int64`, `uint64`, `float64`), with its messages; a JSON null is a value of no type, as
 * Go's `reflect.TypeOf(nil)` prints it (`%!s(<nil>)`). @throws Error
 */
function numeric(v: unknown, goName: string): number {
  if (typeof v === 'number') return v;
  if (typeof v !== 'string') throw new Error(`expected type value '${goName}', but found '${reflectType(v)}'`);
  if (INFINITY.test(v)) return v.startsWith('-') ? -Infinity : Infinity;
  if (!DECIMAL.test(v)) throw new Error(`expected a ${goName} value, but found invalid string value '${v}'`);
  return Number(v);
}

/** 2^63 and 2^64, the bounds of big.Float's 64-bit mantissa. */
const TWO63 = 1n << 63n;
const TWO64 = 1n << 64n;

/**
 * Whether a decimal string, read at 64 bits of precision (round half to even) as big.ParseFloat(s, 10, 64, 0)
 * reads it, is a float64 exactly: big.Float.Float64 answers `Exact`, neither `Above` nor `Below`. False for a
 * value beyond float64's range (`1.8e+309`), below its smallest subnormal, or with more significant bits than
 * a float64 holds (`"0.1"` at 64 bits is not a float64; `"1.5"` is).
 */
function exactFloat64(s: string): boolean {
  const m = /^[+-]?(\d*)\.?(\d*)(?:[eE]([+-]?\d+))?$/.exec(s);
  if (!m) return false;
  const [, int = '', frac = '', e = '0'] = m;
  const mant = BigInt(`${int}${frac}` || '0');
  if (mant === 0n) return true;
  const exp10 = Number(e) - frac.length;
  if (exp10 > 400) return false; // above 1e+309 whatever the digits
  if (exp10 < -1200 - `${int}${frac}`.length) return false; // below the smallest subnormal
  const p = exp10 >= 0 ? mant * 10n ** BigInt(exp10) : mant;
  const q = exp10 >= 0 ? 1n : 10n ** BigInt(-exp10);
  // k such that 2^63 <= p·2^k/q < 2^64
  let k = 63 - (p.toString(2).length - q.toString(2).length);
  const scaled = (shift: number): [bigint, bigint, bigint] => {
    const num = shift >= 0 ? p << BigInt(shift) : p;
    const den = shift >= 0 ? q : q << BigInt(-shift);
    return [num / den, num % den, den];
  };
  let [r, rem, den] = scaled(k);
  while (r >= TWO64) [r, rem, den] = scaled(--k);
  while (r < TWO63) [r, rem, den] = scaled(++k);
  if (2n * rem > den || (2n * rem === den && (r & 1n) === 1n)) r += 1n;
  if (r === TWO64) {
    r = TWO63;
    k -= 1;
  }
  const e2 = 63 - k; // the value lies in [2^e2, 2^(e2+1))
  if (e2 > 1023) return false;
  const bits = e2 >= -1022 ? 53 : e2 + 1075; // significant bits a float64 keeps at this exponent
  if (bits <= 0) return false;
  return r % (1n << BigInt(64 - bits)) === 0n;
}

/**
 * A double parameter value (OpenFGA numericTypeConverterFunc for float64): a JSON number as it is (JSON
 * cannot carry one beyond float64's range: a decoder that reads one as ±Infinity is refused here); a string
 * read at 64 bits and refused unless that is exactly a float64, with OpenFGA's message
 * (`number cannot be represented as a float64: 1.797693135e+309`). @throws Error
 */
function double(v: unknown): number {
  const n = numeric(v, 'float64');
  if (typeof v === 'number') {
    if (!Number.isFinite(n)) throw new Error(`number cannot be represented as a float64: ${goG(n, 10)}`);
    return n;
  }
  if (typeof v === 'string' && !INFINITY.test(v) && !exactFloat64(v)) throw new Error(`number cannot be represented as a float64: ${decimalG10(v)}`);
  return n;
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
      if (typeof v !== 'boolean') throw new Error(`expected type value 'bool', but found '${reflectType(v)}'`);
      return v;
    case 'TYPE_NAME_STRING':
      if (typeof v !== 'string') throw new Error(`expected type value 'string', but found '${reflectType(v)}'`);
      return v;
    case 'TYPE_NAME_INT':
      return integer(v, false);
    case 'TYPE_NAME_UINT':
      return toUint({ v: integer(v, true) });
    case 'TYPE_NAME_DOUBLE':
      return double(v);
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
   * Validates a tuple's own condition context as OpenFGA validates a written or contextual tuple
   * (internal/validation validateCondition → CastContextToTypedParameters): every key a declared parameter,
   * every value of its parameter's type.
   * @throws Error `no parameters defined for the condition`, `found invalid context parameter: <key>`, or
   *   `parameter type error on condition '<name>': failed to convert context parameter '<p>': ...`
   */
  validateTupleContext(context: Record<string, unknown> | null): void {
    if (context === null || Object.keys(context).length === 0) return;
    if (this.params.size === 0) throw new Error(`parameter type error on condition '${this.name}': no parameters defined for the condition`);
    for (const [p, t] of this.params) {
      if (!Object.hasOwn(context, p) || context[p] === undefined) continue;
      try {
        convert(t, context[p]);
      } catch (err) {
        throw new Error(`parameter type error on condition '${this.name}': failed to convert context parameter '${p}': ${(err as Error).message.split('\n')[0]}`);
      }
    }
    for (const key of Object.keys(context)) if (!this.params.has(key)) throw new Error(`found invalid context parameter: ${key}`);
  }

  /**
   * Evaluates the condition for one tuple: `tupleContext` overrides `requestContext` key by key (OpenFGA
   * merges the request context first, the tuple's last). As OpenFGA's EvaluableCondition.Evaluate and
   * EvaluateTupleCondition: each parameter present (a JSON null is present) is converted to its type first; a
   * parameter the condition declares and the merged context lacks is an error whether or not the expression
   * would need it (`x < 100 || y < 50` with only `x` fails: OpenFGA evaluates partially, then refuses any
   * result while a declared parameter is missing).
   * @returns whether the condition is met
   * @throws ConditionError `parameter type error on condition '<name>': failed to convert context parameter
   *   '<p>': ...` (OpenFGA's converter wording), the cost limit, `failed to evaluate relationship condition
   *   '<name>': tuple '<object>#<relation>@<user>' is missing context parameters '[a b]'` (sorted), or
   *   `... failed to evaluate condition expression: ...` for a CEL runtime error
   */
  evaluate(tupleText: string, requestContext: Record<string, unknown> | null, tupleContext: Record<string, unknown> | null): boolean {
    const merged: Record<string, unknown> = { ...(requestContext ?? {}), ...(tupleContext ?? {}) };
    const values: Record<string, unknown> = {};
    const missing: string[] = [];
    for (const [p, t] of this.params) {
      if (!Object.hasOwn(merged, p) || merged[p] === undefined) {
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
    if (missing.length > 0) throw failed(`tuple '${tupleText}' is missing context parameters '[${missing.sort().join(' ')}]'`);
    let out: unknown;
    try {
      out = this.program(values);
    } catch (err) {
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
