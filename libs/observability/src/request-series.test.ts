import { describe, it, expect } from '@jest/globals';
import { Counter, Histogram, Registry } from 'prom-client';
import { registerRequestSeries } from './request-series.ts';

const options = {
  counter: { name: 'demo_requests_total', help: 'requests' },
  histogram: { name: 'demo_request_duration_seconds', help: 'duration', buckets: [0.005, 0.01, 0.1, 1] },
  labelNames: ['route', 'code'] as const,
};

/** The same observations through prom-client's own Counter and Histogram, for comparison. */
function promClientText(observations: Array<[Record<'route' | 'code', string>, number]>): Promise<string> {
  const registry = new Registry();
  const counter = new Counter({ ...options.counter, labelNames: ['route', 'code'], registers: [registry] });
  const histogram = new Histogram({ ...options.histogram, labelNames: ['route', 'code'], registers: [registry] });
  for (const [labels, seconds] of observations) {
    counter.inc(labels);
    histogram.observe(labels, seconds);
  }
  return registry.metrics();
}

describe('registerRequestSeries: a request counter and duration histogram on a prom-client registry', () => {
  const observations: Array<[Record<'route' | 'code', string>, number]> = [
    [{ route: '/v1/check_permissions', code: '200' }, 0.0004],
    [{ route: '/v1/check_permissions', code: '200' }, 0.005], // on a bound: counted in that bucket (le)
    [{ route: '/v1/check_permissions', code: '200' }, 0.25],
    [{ route: '/v1/check_permissions', code: '403' }, 0.02],
    [{ route: 'unmatched', code: '404' }, 3], // above every bound: +Inf only
  ];

  it('prints the same exposition text as prom-client Counter and Histogram fed the same requests', async () => {
    const registry = new Registry();
    const table = registerRequestSeries(registry, options);
    for (const [labels, seconds] of observations) table.series(labels).record(seconds);
    const text = await registry.metrics();
    expect(text).toBe(await promClientText(observations));
    expect(text).toContain('demo_requests_total{route="/v1/check_permissions",code="200"} 3');
    expect(text).toContain('demo_request_duration_seconds_bucket{le="0.005",route="/v1/check_permissions",code="200"} 2');
    expect(text).toContain('demo_request_duration_seconds_bucket{le="1",route="unmatched",code="404"} 0');
    expect(text).toContain('demo_request_duration_seconds_bucket{le="+Inf",route="unmatched",code="404"} 1');
  });

  it('hands out one series per label set, and the registered table again for the same names', async () => {
    const registry = new Registry();
    const table = registerRequestSeries(registry, options);
    const a = table.series({ route: '/x', code: '200' });
    expect(table.series({ route: '/x', code: '200' })).toBe(a);
    expect(table.series({ route: '/x', code: '500' })).not.toBe(a);
    expect(registerRequestSeries(registry, options)).toBe(table);
    a.record(0.001);
    const json = await registry.getMetricsAsJSON();
    expect(json.map((m) => [m.name, m.type])).toEqual([['demo_requests_total', 'counter'], ['demo_request_duration_seconds', 'histogram']]);
    expect(json[0]!.values).toEqual([{ value: 1, labels: { route: '/x', code: '200' } }, { value: 0, labels: { route: '/x', code: '500' } }]);
  });

  it('counts a negative or non-finite duration as 0 s, and resetMetrics() zeroes every series', async () => {
    const registry = new Registry();
    const s = registerRequestSeries(registry, options).series({ route: '/x', code: '200' });
    s.record(Number.NaN);
    s.record(-1);
    let text = await registry.metrics();
    expect(text).toContain('demo_request_duration_seconds_bucket{le="0.005",route="/x",code="200"} 2');
    expect(text).toContain('demo_request_duration_seconds_sum{route="/x",code="200"} 0');
    registry.resetMetrics();
    s.record(0.5);
    text = await registry.metrics();
    expect(text).toContain('demo_requests_total{route="/x",code="200"} 1');
    expect(text).toContain('demo_request_duration_seconds_bucket{le="0.1",route="/x",code="200"} 0');
    expect(text).toContain('demo_request_duration_seconds_bucket{le="1",route="/x",code="200"} 1');
  });

  it('refuses a name another metric holds, and buckets that are not increasing', () => {
    const registry = new Registry();
    new Counter({ name: 'demo_requests_total', help: 'taken', registers: [registry] });
    expect(() => registerRequestSeries(registry, options)).toThrow(/already been registered/);
    expect(() => registerRequestSeries(new Registry(), { ...options, histogram: { ...options.histogram, buckets: [0.1, 0.1] } })).toThrow(/increasing/);
  });
});
