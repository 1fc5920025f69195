/**
 * Reading `GET /metrics` in tests: one scrape, and the value of one sample of its text.
 */

/** The value of one sample, e.g. `orbit_acks_total{outcome="new"}`; undefined when absent. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (.+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(match[3]);
  }
  return undefined;
}

export async function scrape(url: string, token?: string): Promise<{ status: number; text: string; headers: Headers }> {
  const response = await fetch(`${url}/metrics`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  return { status: response.status, text: await response.text(), headers: response.headers };
}
