/**
 * One chart's entries from a repository's index.yaml, without parsing the whole file on the event loop. A public
 * index can be tens of MiB (the `yaml` library parses ~2.5 MiB/s: 4 s for a 10 MiB index, during which the
 * operator serves nobody), and only one chart's versions are needed. So, bounded (and parsed as renders are,
 * chart/render-yaml.ts):
 *
 * - The text is capped before this runs (16 MiB, chart/sources.ts).
 * - JSON (a valid index form) goes to JSON.parse: linear and fast (~40 ms for 9 MiB).
 * - YAML in the block layout Helm writes (`entries:` at column 0, chart names one level in, a list of versions
 *   under each) is cut by a linear line scan to the one chart's list; each version entry is parsed on its own
 *   (at most 256 KiB each), yielding to the event loop between entries, so no step blocks for more than a few ms.
 * - Anything else is parsed whole only when small (256 KiB); larger, it is refused as not a Helm index.
 *
 * A worker thread was the alternative; it would need the `yaml` library beside the operator's single-file bundle.
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { parseDocument, RenderYamlError } from "./render-yaml.ts";

/** One version of a chart as index.yaml lists it. */
export interface IndexEntry {
  readonly version?: unknown;
  readonly urls?: unknown;
  readonly digest?: unknown;
}

/** An index that is not in a shape this reader takes: permanent. */
export class IndexFormatError extends Error {
  override readonly name = "IndexFormatError";
}

/** The most YAML parsed in one piece. */
const maxPieceBytes = 256 * 1024;

/** The entries of chart `name`, or undefined when the index has no such chart. */
export async function indexEntries(text: string, name: string): Promise<readonly IndexEntry[] | undefined> {
  const start = text.trimStart();
  if (start.startsWith("{")) {
    let index: unknown;
    try {
      index = JSON.parse(start);
    } catch {
      throw new IndexFormatError("index.yaml is neither valid JSON nor YAML");
    }
    return entriesOf(index, name);
  }
  const block = entriesBlock(text);
  if (block === undefined) return entriesOf(parseSmall(text, "index.yaml"), name);
  const chart = chartBlock(block, name);
  if (chart === undefined) return undefined;
  const items = listItems(chart);
  if (items === undefined) return asEntries(parseSmall(chart, `the entries of ${name}`));
  const entries: IndexEntry[] = [];
  let sinceYield = 0;
  for (const item of items) {
    const value = parseSmall(item, `an entry of ${name}`);
    if (value !== null && typeof value === "object") entries.push(value as IndexEntry);
    sinceYield += item.length;
    if (sinceYield > 64 * 1024) {
      sinceYield = 0;
      await yieldToEventLoop();
    }
  }
  return entries;
}

function parseSmall(text: string, what: string): unknown {
  if (text.length > maxPieceBytes) {
    throw new IndexFormatError(`${what} is larger than ${maxPieceBytes / 1024} KiB in a layout Helm does not write`);
  }
  try {
    // The reader of rendered YAML: duplicate keys in constant time, where `yaml` checks them pair by pair (a
    // piece of 256 KiB with 22,000 keys took it 3.6 s).
    return parseDocument(text);
  } catch (error) {
    if (!(error instanceof RenderYamlError)) throw error;
    throw new IndexFormatError(`${what} is not valid YAML: ${error.message}`);
  }
}

function entriesOf(index: unknown, name: string): readonly IndexEntry[] | undefined {
  const entries = (index as { entries?: unknown } | null)?.entries;
  if (entries === null || typeof entries !== "object" || !Object.hasOwn(entries, name)) return undefined;
  return asEntries((entries as Record<string, unknown>)[name]);
}

function asEntries(value: unknown): readonly IndexEntry[] {
  if (!Array.isArray(value)) throw new IndexFormatError("a chart's entries in index.yaml are not a list");
  return value.filter((entry): entry is IndexEntry => entry !== null && typeof entry === "object");
}

const indentOf = (line: string) => line.length - line.trimStart().length;
const isBlank = (line: string) => line.trim() === "" || line.trimStart().startsWith("#");

/** The lines under a top-level `entries:` key, or undefined when there is none in block layout. */
function entriesBlock(text: string): string[] | undefined {
  const lines = text.split(/\r?\n/);
  const at = lines.findIndex((line) => /^entries:[ \t]*(#.*)?$/.test(line));
  if (at < 0) return undefined;
  const end = lines.findIndex((line, i) => i > at && !isBlank(line) && indentOf(line) === 0);
  return lines.slice(at + 1, end < 0 ? undefined : end);
}

/** The lines of chart `name`'s value in the entries block (its list), or undefined when it is not there. */
function chartBlock(block: readonly string[], name: string): string | undefined {
  const first = block.find((line) => !isBlank(line));
  if (first === undefined) return undefined;
  const indent = indentOf(first);
  const keys = [name, JSON.stringify(name), `'${name.replaceAll("'", "''")}'`];
  // Compiled once, not per line: an index of 16 MiB is a few hundred thousand lines.
  const keyLines = keys.map((key) => new RegExp(`^${escape(key)}:[ \\t]*(#.*)?$`));
  const at = block.findIndex(
    (line) => indentOf(line) === indent && keyLines.some((keyLine) => keyLine.test(line.trim())),
  );
  if (at < 0) return undefined;
  // Helm writes a key's list at the key's own indentation (`- apiVersion: …`); the block ends at the next key.
  const end = block.findIndex(
    (line, i) =>
      i > at &&
      !isBlank(line) &&
      (indentOf(line) < indent || (indentOf(line) === indent && !line.trimStart().startsWith("-"))),
  );
  return block.slice(at + 1, end < 0 ? undefined : end).join("\n");
}

/** A block-style list split into its items, each as a standalone mapping; undefined when not a block list. */
function listItems(chart: string): string[] | undefined {
  const lines = chart.split("\n");
  const first = lines.find((line) => !isBlank(line));
  if (first === undefined) return [];
  if (!/^\s*- /.test(first) && !/^\s*-$/.test(first)) return undefined;
  const indent = indentOf(first);
  const items: string[][] = [];
  for (const line of lines) {
    if (indentOf(line) === indent && /^-( |$)/.test(line.slice(indent)))
      items.push([" ".repeat(indent + 2) + line.slice(indent + 2)]);
    else items.at(-1)?.push(line);
  }
  return items.map((item) => item.map((line) => line.slice(Math.min(indent + 2, indentOf(line)))).join("\n"));
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
