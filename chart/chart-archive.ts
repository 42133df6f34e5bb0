/**
 * The packed chart helm is given: rebuilt from what the operator itself read of the tenant's archive, after a look
 * at what its `values.schema.json` files would make helm load (schema-references.ts: a `$ref` made the operator's
 * helm GET any address, 20,000 requests in one render, and read files in its container).
 *
 * Two tar readers never agree on every archive (typeflags, PAX and GNU long names, global headers, sparse names,
 * number fields): one that Go's archive/tar reads as a schema and tar-stream reads as something else would pass any
 * look. So helm never reads the tenant's archive: it reads a new one, written here from the regular files tar-stream
 * reported, under the names it reported, with subchart archives (`charts/*.tgz`) rebuilt the same way. What is
 * looked at is what helm gets. Paths are named as Helm names them (pkg/chart/loader/archive/archive.go: the first
 * segment dropped, `\` as the separator when a name has one, cleaned; a UTF-8 byte-order mark dropped from data);
 * schemas are the chart's and its subcharts' (pkg/chart/v2/loader/load.go).
 *
 * Bounded in the operator's memory and time, since it runs in the operator's process: Helm's own 100 MiB of
 * unpacked files for all nested archives at once, and what gunzip yields in all (headers, padding, what follows the
 * archive's end: 380 subcharts of a tiny archive and 256 MiB of zeros each packed to 330 KiB and unpacked for
 * minutes) at most that and a KiB an entry more; 10,000 entries of any type, 16 MiB a file (the render's output
 * limit), and schemas of at most 1 MiB each and 4 MiB together before they are parsed, the large ones on the
 * parsing thread.
 */
import { once } from "node:events";
import { posix } from "node:path";
import { Readable, Transform } from "node:stream";
import { createGunzip, createGzip } from "node:zlib";
import { extract, pack } from "tar-stream";
import { offThreadFromBytes } from "./render-yaml.ts";
import { schemaProblemOnThread } from "./render-yaml-thread.ts";
import { schemaReferenceProblem } from "./schema-references.ts";

/** The chart helm is to render, or why it is not rendered. */
export type RebuiltChart = { readonly archive: Uint8Array } | { readonly problem: string };

/** Helm's own bound on what a chart unpacks to (MaxDecompressedChartSize); here for all nested archives at once. */
export const maxUnpackedBytes = 100 * 1024 * 1024;
/** Entries of a chart (files, directories, links), nested archives' included. */
export const maxEntries = 10_000;
/**
 * What gunzip may yield for a chart, nested archives' included: its files, and a KiB an entry for the header and
 * padding. Counted as it is unpacked, whatever the tar says: zeros after the archive's end are read all the same.
 */
export const maxInflatedBytes = maxUnpackedBytes + maxEntries * 1024;
/** One file: no chart file may be larger than a render's output. */
export const maxFileBytes = 16 * 1024 * 1024;
/** One values.schema.json, and all of them, before any is parsed. */
export const maxSchemaBytes = 1024 * 1024;
export const maxSchemasBytes = 4 * 1024 * 1024;
/** Archives inside archives (`charts/*.tgz` of a subchart's `charts/`). */
const maxNesting = 8;

/** The chart's schema and its directory subcharts' (`charts/<name>/…/values.schema.json`). */
const schemaPath = /^(charts\/[^/]+\/)*values\.schema\.json$/;
/** A packed subchart (`charts/<name>.tgz`), in the chart or a directory subchart. */
const archivePath = /^(charts\/[^/]+\/)*charts\/[^/]+\.tgz$/;

/** A chart the rebuild refuses, with the reason. */
class ChartArchiveProblem extends Error {}

/**
 * The parsing thread could not check a schema (it did not start, or stopped): nothing about the chart, so thrown
 * from {@link rebuildChart} rather than kept as the chart's verdict.
 */
export class SchemaCheckFault extends Error {
  override readonly name = "SchemaCheckFault";
}

interface Budget {
  bytes: number;
  entries: number;
  inflated: number;
  schemaBytes: number;
}

/** Rebuilds `archive` (a .tgz) for helm, or says what in it is refused. */
export async function rebuildChart(archive: Uint8Array): Promise<RebuiltChart> {
  try {
    const budget = { bytes: maxUnpackedBytes, entries: maxEntries, inflated: maxInflatedBytes, schemaBytes: 0 };
    return { archive: await rebuild(archive, "", 0, budget) };
  } catch (error) {
    if (error instanceof ChartArchiveProblem) return { problem: error.message };
    throw error;
  }
}

async function rebuild(archive: Uint8Array, where: string, nesting: number, budget: Budget): Promise<Buffer> {
  if (nesting > maxNesting) throw new ChartArchiveProblem(`${where}nests more than ${maxNesting} chart archives`);
  const output = pack();
  const zipped = createGzip();
  const chunks: Buffer[] = [];
  zipped.on("data", (chunk: Buffer) => chunks.push(chunk));
  const written = once(zipped, "end");
  output.pipe(zipped);
  const entries = extract();
  const unzipped = Readable.from([archive]).pipe(createGunzip());
  const counted = unzipped.pipe(inflatedWithin(budget));
  unzipped.on("error", (error) => entries.destroy(error));
  counted.on("error", (error) => entries.destroy(error));
  counted.pipe(entries);
  try {
    for await (const entry of entries) {
      const { name, size, type, mtime } = entry.header;
      if (--budget.entries < 0) {
        throw new ChartArchiveProblem(`the chart has more than ${maxEntries} entries (files, directories, links)`);
      }
      // Directories, links, devices: not files of a chart (Helm reads a link as an empty file; none is needed).
      if (type !== "file") {
        entry.resume();
        continue;
      }
      budget.bytes -= size;
      if (budget.bytes < 0) {
        throw new ChartArchiveProblem(`the chart unpacks to more than ${maxUnpackedBytes / (1024 * 1024)} MiB`);
      }
      if (size > maxFileBytes) {
        throw new ChartArchiveProblem(`${where}${name} is larger than ${maxFileBytes / (1024 * 1024)} MiB`);
      }
      const path = helmPath(name);
      const isSchema = path !== undefined && schemaPath.test(path);
      if (isSchema) {
        budget.schemaBytes += size;
        if (size > maxSchemaBytes || budget.schemaBytes > maxSchemasBytes) {
          throw new ChartArchiveProblem(
            `${where}${path} is one of the chart's schemas, which may be at most ${maxSchemaBytes / (1024 * 1024)} ` +
              `MiB each and ${maxSchemasBytes / (1024 * 1024)} MiB together`,
          );
        }
      }
      const data: Buffer[] = [];
      for await (const chunk of entry) data.push(chunk as Buffer);
      const read = Buffer.concat(data);
      let content: Uint8Array = read;
      if (isSchema) {
        const problem = await schemaProblem(read, `${where}${path}`);
        if (problem) throw new ChartArchiveProblem(problem);
      } else if (path !== undefined && archivePath.test(path)) {
        content = await rebuild(content, `${where}${path}: `, nesting + 1, budget);
      }
      await new Promise<void>((resolve, reject) =>
        output.entry({ name, size: content.length, mode: 0o644, mtime }, content, (error) =>
          error ? reject(error) : resolve(),
        ),
      );
    }
  } catch (error) {
    if (error instanceof ChartArchiveProblem || error instanceof SchemaCheckFault) throw error;
    const why = error instanceof Error ? error.message : String(error);
    throw new ChartArchiveProblem(`${where || "the chart archive "}cannot be read as a gzipped tar: ${why}`);
  } finally {
    unzipped.destroy();
    counted.destroy();
    entries.destroy();
  }
  output.finalize();
  await written;
  return Buffer.concat(chunks);
}

/** An entry's path as Helm names it within its chart: first segment dropped, `/`-separated, cleaned. */
function helmPath(name: string): string | undefined {
  const delimiter = name.includes("\\") ? "\\" : "/";
  const rest = name.split(delimiter).slice(1).join("/");
  const cleaned = posix.normalize(rest === "" ? "." : rest).replace(/\/$/, "");
  return cleaned === "." || cleaned.startsWith("..") || cleaned.startsWith("/") ? undefined : cleaned;
}

/** Passes what gunzip yields while the chart's budget lasts; past it, fails with the reason. */
function inflatedWithin(budget: Budget): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      budget.inflated -= chunk.length;
      if (budget.inflated < 0) {
        done(
          new ChartArchiveProblem(
            `the chart unpacks to more than ${Math.floor(maxInflatedBytes / (1024 * 1024))} MiB (tar headers, ` +
              "padding, data after the archive's end and subchart archives included)",
          ),
        );
      } else {
        done(null, chunk);
      }
    },
  });
}

/** The schema's problem: small ones checked here, large ones on the parsing thread (JSON.parse of 1 MiB of nested
 * arrays holds the event loop ~350 ms). */
function schemaProblem(bytes: Buffer, file: string): Promise<string | undefined> | string | undefined {
  const text = bytes.toString("utf8");
  if (text.length < offThreadFromBytes) return schemaReferenceProblem(text, file);
  return schemaProblemOnThread(text, file).catch((error: unknown) => {
    throw new SchemaCheckFault(`${file} could not be checked: ${(error as Error).message}`, { cause: error });
  });
}
