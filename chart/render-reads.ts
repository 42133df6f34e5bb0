/**
 * Reading a render once. A chart instance is reconciled again on every event of its objects (each rollout step)
 * and the renderer hands back the same cached render each time, but reading its YAML costs ~7 s a MiB of CPU for a
 * stream of small nodes (a 16 MiB render, the output limit: 2.1 s and +226 MiB of heap, measured), which a tenant's
 * chart could make every reconcile pay on the event loop all tenants share. So the first read of a render keeps
 * its objects as JSON text beside it, which parses ~8× faster (the same render: 0.27 s), for as long as the render
 * itself is kept: the copy is held by a WeakMap keyed by the render, and goes with it.
 *
 * A copy is kept only where JSON says exactly what the YAML did: not when the text may hold YAML's infinities or
 * NaN (JSON has none), and not when it is longer than the text (aliases expanded), so the copy never takes more
 * than the render it came from (chart/helm.ts counts both in its cache's budget).
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { readManifests, type RenderedManifest, type RenderedObject } from "./manifests.ts";

/** The part of a render this reads: its YAML stream. */
export interface ReadableRender {
  readonly manifest: string;
}

interface ReadCopy {
  readonly source: string;
  readonly json: string;
}

const copies = new WeakMap<ReadableRender, readonly ReadCopy[]>();

/** Characters of JSON parsed between two yields to the event loop. */
const yieldEveryChars = 256 * 1024;

/** YAML 1.2's core schema reads these as numbers JSON cannot write (`.inf`, `-.Inf`, `.nan`, ...). */
const nonFiniteNumber = /\.(?:inf|Inf|INF|nan|NaN|NAN)\b/;

/**
 * The objects of a render, with the templates they came from: as {@link readManifests} reads them, and from the
 * second read of the same render on, from its JSON copy. Each call returns objects of its own, which the caller
 * may change. Throws as readManifests does.
 */
export async function readRender(render: ReadableRender): Promise<RenderedManifest[]> {
  const copy = copies.get(render);
  if (copy) return await parseCopy(copy);
  const manifests = await readManifests(render.manifest);
  if (!nonFiniteNumber.test(render.manifest)) {
    const made = manifests.map(({ source, object }) => ({ source, json: JSON.stringify(object) }));
    if (made.reduce((chars, { json }) => chars + json.length, 0) <= render.manifest.length) copies.set(render, made);
  }
  return manifests;
}

async function parseCopy(copy: readonly ReadCopy[]): Promise<RenderedManifest[]> {
  const manifests: RenderedManifest[] = [];
  let sinceYield = 0;
  for (const { source, json } of copy) {
    manifests.push({ source, object: JSON.parse(json) as RenderedObject });
    sinceYield += json.length;
    if (sinceYield > yieldEveryChars) {
      sinceYield = 0;
      await yieldToEventLoop();
    }
  }
  return manifests;
}
