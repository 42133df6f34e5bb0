/**
 * Reading the operator's /metrics: the Prometheus text format prom-client writes, and histogram quantiles. The one
 * reader of the benchmarks and the tests (test/ may import bench/support, never the reverse).
 */
import { Agent, fetch } from "undici";

/** One sample of the text format. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

type LabelFilter = (labels: Sample["labels"]) => boolean;

/** Scrapes a /metrics URL, with a bearer token when it is secure (`--metrics-secure`), and parses every sample. */
export async function scrape(metricsUrl: string, token?: string): Promise<Sample[]> {
  const { status, body } = await getMetrics(metricsUrl, token);
  if (status !== 200) throw new Error(`GET ${metricsUrl}: HTTP ${status}`);
  return parseSamples(body);
}

// A secure /metrics serves a self-signed certificate unless one is mounted: scraped as Prometheus does with
// `insecure_skip_verify` (the token is still only sent over TLS).
const selfSigned = new Agent({ connect: { rejectUnauthorized: false } });

/** One GET of a /metrics URL (http or https), with a bearer token or none: the status and body, whatever they are. */
export async function getMetrics(metricsUrl: string, token?: string): Promise<{ status: number; body: string }> {
  const response = await fetch(metricsUrl, {
    ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
    ...(metricsUrl.startsWith("https:") ? { dispatcher: selfSigned } : {}),
  });
  return { status: response.status, body: await response.text() };
}

/** Parses the Prometheus text format (comments and blank lines skipped). */
export function parseSamples(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of the samples called `name` whose labels pass `filter`. */
export function sum(samples: readonly Sample[], name: string, filter: LabelFilter = () => true): number {
  return samples.filter((s) => s.name === name && filter(s.labels)).reduce((total, s) => total + s.value, 0);
}

/** Sums of `name` grouped by the value of `label`. */
export function sumBy(samples: readonly Sample[], name: string, label: string): Record<string, number> {
  const totals: Record<string, number> = {};
  for (const sample of samples) {
    if (sample.name !== name) continue;
    const key = sample.labels[label] ?? "";
    totals[key] = (totals[key] ?? 0) + sample.value;
  }
  return totals;
}

/**
 * The `q`-quantile of the histogram `name` (its `_bucket` series, summed over the series `filter` keeps), estimated
 * as PromQL's histogram_quantile does: linear interpolation inside the bucket the rank falls in. NaN when empty.
 */
export function histogramQuantile(
  samples: readonly Sample[],
  name: string,
  q: number,
  filter: LabelFilter = () => true,
): number {
  const counts = new Map<number, number>();
  for (const sample of samples) {
    if (sample.name !== `${name}_bucket` || !filter(sample.labels)) continue;
    const le = sample.labels.le === "+Inf" ? Infinity : Number(sample.labels.le);
    counts.set(le, (counts.get(le) ?? 0) + sample.value);
  }
  const buckets = [...counts].sort(([a], [b]) => a - b);
  const total = buckets.at(-1)?.[1] ?? 0;
  if (total === 0) return NaN;
  const rank = q * total;
  let lowerBound = 0;
  let lowerCount = 0;
  for (const [upperBound, count] of buckets) {
    if (count >= rank) {
      // Above the highest finite bucket PromQL answers that bucket's bound; so do we.
      if (upperBound === Infinity) return lowerBound;
      return lowerBound + (upperBound - lowerBound) * ((rank - lowerCount) / (count - lowerCount || 1));
    }
    lowerBound = upperBound;
    lowerCount = count;
  }
  return lowerBound;
}

/** What happened between two scrapes of the same process: each sample of `after` less its twin in `before`. */
export function samplesSince(after: readonly Sample[], before: readonly Sample[]): Sample[] {
  const key = (sample: Sample) => `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
  const earlier = new Map(before.map((sample) => [key(sample), sample.value]));
  return after.map((sample) => ({ ...sample, value: sample.value - (earlier.get(key(sample)) ?? 0) }));
}
