/**
 * What the `values.schema.json` files of a packed chart make Helm load. Helm validates values against each schema
 * with loaders for `file://`, `http://` and `https://` (helm.sh/helm/v4 pkg/chart/common/util/jsonschema.go), and
 * the chart is the tenant's: a `$ref` made the operator's helm GET any address (loopback, in-cluster Services, a
 * cloud's metadata endpoint; 20,000 requests in one render) and read files in its container (a relative `$ref`
 * resolves against `file:///values.schema.json`), beyond every check of chart/http-get.ts. A render is hermetic, so
 * a schema may refer only within itself (`#…`) or to the JSON Schema drafts, which Helm's validator holds in memory.
 *
 * Checked on the archive before helm runs, with Helm's own reading of it (pkg/chart/loader/archive/archive.go,
 * pkg/chart/v2/loader/load.go): the first path segment dropped, `\` as the separator when a name has one, the path
 * cleaned, a UTF-8 byte-order mark dropped; the chart's schema and those of its subcharts, in directories under
 * `charts/` and in archives `charts/*.tgz`, nested. An archive this cannot read is refused: Helm must not read one
 * this did not. Unpacking is bounded as Helm bounds it (100 MiB) and streamed: only schemas and nested archives are
 * kept.
 */
import { posix } from "node:path";
import { Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import { extract } from "tar-stream";

/** Helm's own bound on what a chart archive unpacks to (MaxDecompressedChartSize); here for all nested ones at once. */
export const maxUnpackedBytes = 100 * 1024 * 1024;

/** Archives inside archives (`charts/*.tgz` of a subchart's `charts/`) read before the chart is refused. */
const maxNesting = 8;

/** `$schema` and `$ref` targets Helm's validator answers from memory: the drafts' meta-schemas (draftFromURL). */
const draftMetaSchema =
  /^https?:\/\/json-schema\.org\/(schema|draft\/2020-12\/schema|draft\/2019-09\/schema|draft-0[467]\/schema)(#.*)?$/;

/** The keywords whose string value names a schema to load. */
const loadingKeywords = new Set(["$ref", "$dynamicRef", "$recursiveRef", "$schema"]);

/** A schema reference in `archive` (a .tgz) that Helm would load from outside it, as a message; or none. */
export async function schemaReferenceProblem(archive: Uint8Array): Promise<string | undefined> {
  return await scanArchive(archive, "", 0, { left: maxUnpackedBytes });
}

async function scanArchive(
  archive: Uint8Array,
  where: string,
  nesting: number,
  budget: { left: number },
): Promise<string | undefined> {
  if (nesting > maxNesting) return `${where}nests more than ${maxNesting} chart archives`;
  const entries = extract();
  const unzipped = Readable.from([archive]).pipe(createGunzip());
  unzipped.on("error", (error) => entries.destroy(error));
  unzipped.pipe(entries);
  try {
    for await (const entry of entries) {
      const { name, size, type } = entry.header;
      budget.left -= size;
      if (budget.left < 0) return `the chart unpacks to more than ${maxUnpackedBytes / (1024 * 1024)} MiB`;
      const path = type === "directory" ? undefined : helmPath(name);
      const kind =
        path === undefined
          ? undefined
          : schemaPath.test(path)
            ? "schema"
            : archivePath.test(path)
              ? "archive"
              : undefined;
      if (!kind) {
        entry.resume();
        continue;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of entry) chunks.push(chunk as Buffer);
      const bytes = Buffer.concat(chunks);
      const problem =
        kind === "schema"
          ? referenceProblem(bytes, `${where}${path}`)
          : await scanArchive(bytes, `${where}${path}: `, nesting + 1, budget);
      if (problem) return problem;
    }
  } catch (error) {
    return `${where || "the chart archive "}cannot be read as a gzipped tar: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    unzipped.destroy();
    entries.destroy();
  }
  return undefined;
}

/** The chart's schema and its directory subcharts' (`charts/<name>/…/values.schema.json`). */
const schemaPath = /^(charts\/[^/]+\/)*values\.schema\.json$/;
/** A packed subchart (`charts/<name>.tgz`), in the chart or a directory subchart. */
const archivePath = /^(charts\/[^/]+\/)*charts\/[^/]+\.tgz$/;

/** An entry's path as Helm names it within its chart: first segment dropped, `/`-separated, cleaned. */
function helmPath(name: string): string | undefined {
  const delimiter = name.includes("\\") ? "\\" : "/";
  const rest = name.split(delimiter).slice(1).join("/");
  const cleaned = posix.normalize(rest === "" ? "." : rest).replace(/\/$/, "");
  return cleaned === "." || cleaned.startsWith("..") || cleaned.startsWith("/") ? undefined : cleaned;
}

/** A reference of one schema file that is neither within it nor to a draft's meta-schema. */
function referenceProblem(bytes: Buffer, file: string): string | undefined {
  const text = bytes.toString("utf8").replace(/^\uFEFF/, "");
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (error) {
    return `${file} is not JSON: ${error instanceof Error ? error.message : String(error)}`;
  }
  // Iterative: a schema may nest deeper than the stack.
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== "object") continue;
    for (const [key, value] of Object.entries(node)) {
      if (
        loadingKeywords.has(key) &&
        typeof value === "string" &&
        !value.startsWith("#") &&
        !draftMetaSchema.test(value)
      ) {
        return (
          `${file} refers to ${JSON.stringify(value.slice(0, 200))} (${key}): the operator renders charts without ` +
          "network or files, so a schema may refer only within itself (#/…) or to a JSON Schema draft"
        );
      }
      if (value !== null && typeof value === "object") stack.push(value);
    }
  }
  return undefined;
}
