/**
 * What a chart's `values.schema.json` would make helm load. Helm validates values against each schema with loaders
 * for `file://`, `http://` and `https://` (helm.sh/helm/v4 pkg/chart/common/util/jsonschema.go), and the chart is
 * the tenant's: a `$ref` made the operator's helm GET any address and read files in its container. A render is
 * hermetic, so a schema may refer only within itself (`#…`) or to the JSON Schema drafts, which Helm's validator
 * holds in memory. Pure; parsed on the event loop for small schemas, on the parsing thread for large ones
 * (chart-archive.ts).
 */

/** `$schema` and `$ref` targets Helm's validator answers from memory: the drafts' meta-schemas (draftFromURL). */
const draftMetaSchema =
  /^https?:\/\/json-schema\.org\/(schema|draft\/2020-12\/schema|draft\/2019-09\/schema|draft-0[467]\/schema)(#.*)?$/;

/** The keywords whose string value names a schema to load. */
const loadingKeywords = new Set(["$ref", "$dynamicRef", "$recursiveRef", "$schema"]);

/** Why the schema `text` (the file `file`) is refused: not JSON, or a reference outside it; undefined if neither. */
export function schemaReferenceProblem(text: string, file: string): string | undefined {
  let schema: unknown;
  try {
    schema = JSON.parse(text.replace(/^\uFEFF/, ""));
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
