/**
 * @module @gatehouse/observability/request-series
 * A request counter and a duration histogram over one label set, recorded together with plain
 * arithmetic on the request path, and exposed to a prom-client {@link Registry} as a `counter` and a
 * `histogram` in the Prometheus text exposition format (the same lines prom-client's own Counter and
 * Histogram print). prom-client's `inc`/`observe` validate and hash the label set on every call
 * (≈ 1.5 µs per request in a warm loop, several times that between socket reads); here a label set is
 * resolved to its series once, and a request adds to three numbers.
 */
import type { Metric, Registry } from 'prom-client';

/** One label set's figures. */
export interface Series {
  /** Adds one request that took `seconds` (finite, ≥ 0; anything else counts as 0). */
  record(seconds: number): void;
}

/** A counter and a histogram over the same label names, fed by {@link Series.record}. */
export interface RequestSeriesTable<L extends string> {
  /** The series of `labels` (every label name, values as given): made on first use, the same object after. */
  series(labels: Readonly<Record<L, string>>): Series;
}

export interface RequestSeriesOptions<L extends string> {
  counter: { name: string; help: string };
  histogram: { name: string; help: string; buckets: readonly number[] };
  labelNames: readonly L[];
}

class SeriesData implements Series {
  count = 0;
  sum = 0;
  /** per-bucket (not cumulative) counts; the last slot is above the highest bound */
  readonly buckets: Float64Array;
  readonly labels: Readonly<Record<string, string>>;
  readonly #bounds: readonly number[];
  constructor(labels: Readonly<Record<string, string>>, bounds: readonly number[]) {
    this.labels = labels;
    this.#bounds = bounds;
    this.buckets = new Float64Array(bounds.length + 1);
  }
  record(seconds: number): void {
    const v = Number.isFinite(seconds) && seconds > 0 ? seconds : 0;
    const bounds = this.#bounds;
    let i = 0;
    while (i < bounds.length && v > bounds[i]!) i++; // Prometheus buckets are `le`: v <= bound
    this.buckets[i]!++;
    this.count++;
    this.sum += v;
  }
}

type MetricValue = { value: number; labels: Record<string, string | number>; metricName?: string };

/**
 * What a prom-client Registry reads from a metric (`registerMetric`, `metrics()`, `getMetricsAsJSON()`,
 * `resetMetrics()`, `getSingleMetric()`): its name, help, type, aggregator, `get()` and `reset()`.
 */
class View {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  readonly aggregator = 'sum';
  readonly table: Table;
  constructor(name: string, help: string, type: 'counter' | 'histogram', table: Table) {
    this.name = name;
    this.help = help;
    this.type = type;
    this.table = table;
  }
  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: MetricValue[] }> {
    const values = this.type === 'counter' ? this.table.counterValues() : this.table.histogramValues(this.name);
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
  reset(): void {
    this.table.reset();
  }
}

class Table implements RequestSeriesTable<string> {
  readonly #bounds: readonly number[];
  readonly #labelNames: readonly string[];
  readonly #byKey = new Map<string, SeriesData>();
  constructor(bounds: readonly number[], labelNames: readonly string[]) {
    this.#bounds = bounds;
    this.#labelNames = labelNames;
  }
  series(labels: Readonly<Record<string, string>>): Series {
    let key = '';
    for (const n of this.#labelNames) key += `${labels[n]}\u0000`;
    let s = this.#byKey.get(key);
    if (!s) {
      const own: Record<string, string> = {};
      for (const n of this.#labelNames) own[n] = String(labels[n]);
      this.#byKey.set(key, (s = new SeriesData(own, this.#bounds)));
    }
    return s;
  }
  counterValues(): MetricValue[] {
    return [...this.#byKey.values()].map((s) => ({ value: s.count, labels: { ...s.labels } }));
  }
  histogramValues(name: string): MetricValue[] {
    const out: MetricValue[] = [];
    for (const s of this.#byKey.values()) {
      let acc = 0;
      this.#bounds.forEach((le, i) => {
        acc += s.buckets[i]!;
        out.push({ value: acc, metricName: `${name}_bucket`, labels: { le, ...s.labels } });
      });
      out.push({ value: s.count, metricName: `${name}_bucket`, labels: { le: '+Inf', ...s.labels } });
      out.push({ value: s.sum, metricName: `${name}_sum`, labels: { ...s.labels } });
      out.push({ value: s.count, metricName: `${name}_count`, labels: { ...s.labels } });
    }
    return out;
  }
  reset(): void {
    // a Series handed out stays valid: its numbers go back to zero, as prom-client's reset() does
    for (const s of this.#byKey.values()) {
      s.count = 0;
      s.sum = 0;
      s.buckets.fill(0);
    }
  }
}

/**
 * Registers the counter and histogram of `o` on `registry`, or returns the table already registered
 * under the same counter name (all-in-one builds the gateway's metrics once per registry).
 * @throws Error when the registry holds another kind of metric under one of the names, or the
 *   buckets are not strictly increasing finite numbers
 */
export function registerRequestSeries<L extends string>(registry: Registry, o: RequestSeriesOptions<L>): RequestSeriesTable<L> {
  const existing = registry.getSingleMetric(o.counter.name) as unknown;
  if (existing instanceof View) return existing.table;
  const b = o.histogram.buckets;
  if (b.some((x, i) => !Number.isFinite(x) || (i > 0 && x <= b[i - 1]!))) throw new Error(`${o.histogram.name}: buckets must be increasing finite numbers`);
  const table = new Table([...b], [...o.labelNames]);
  // the Registry formats any object with this shape; its typings name only prom-client's own classes
  registry.registerMetric(new View(o.counter.name, o.counter.help, 'counter', table) as unknown as Metric);
  registry.registerMetric(new View(o.histogram.name, o.histogram.help, 'histogram', table) as unknown as Metric);
  return table;
}
