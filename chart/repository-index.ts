/**
 * One chart version's entry from a repository's index.yaml, read without parsing the whole file. The index is the
 * repository's, and a tenant may name any repository the platform allows: a public index can be tens of MiB, and a
 * hostile one of 16 MiB can list millions of tiny entries (`- {}`), which parsed whole took 700 MiB of the
 * operator's heap, four at once more than it has. So, bounded in time and memory (and parsed as renders are,
 * chart/render-yaml.ts):
 *
 * - The text is capped before this runs (16 MiB, chart/sources.ts).
 * - Only the one chart's list is located, by a linear scan that keeps no copy of the file: in the block layout
 *   Helm writes (`entries:` at column 0, chart names one level in, a list of versions under each) line by line,
 *   and in JSON (a valid index form) value by value, skipping what it does not need.
 * - A chart listing more than {@link maxChartVersions} versions is refused. Of the rest, only the entries whose
 *   text holds the version asked for are parsed, and the first few for a message that says what is listed
 *   (each at most 256 KiB; from 128 KiB on, on the parsing thread of renders), yielding to the event loop between
 *   them.
 * - YAML in any other layout is parsed whole only when small (256 KiB); larger, it is refused as not a Helm index.
 *
 * Written by hand: no YAML or JSON library reads one value of a large document without building the rest.
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { maxDocumentBytes, offThreadFromBytes, parseDocument, RenderYamlError } from "./render-yaml.ts";
import { parseOnThread } from "./render-yaml-thread.ts";

/** One version of a chart as index.yaml lists it. */
export interface IndexEntry {
  readonly version?: unknown;
  readonly urls?: unknown;
  readonly digest?: unknown;
}

/** What the index says of one chart: the entry of the version asked for, if listed, and the first few listed. */
export interface ChartListing {
  readonly entry?: IndexEntry;
  /** The first {@link listedInMessages} entries, for a message that says what the repository has. */
  readonly first: readonly IndexEntry[];
}

/** An index that is not in a shape this reader takes, or lists more than it reads: permanent. */
export class IndexFormatError extends Error {
  override readonly name = "IndexFormatError";
}

/** The most versions of one chart read (the largest public indexes list a few hundred to a few thousand). */
export const maxChartVersions = 10_000;

/** The entries parsed for a message besides the one asked for. */
export const listedInMessages = 20;

/** The most YAML (or JSON) parsed in one piece. */
const maxPieceBytes = 256 * 1024;

/** The entry of `name` at `version` (or `v` + version), or undefined when the index has no chart `name`. */
export async function findIndexEntry(text: string, name: string, version: string): Promise<ChartListing | undefined> {
  const start = text.search(/\S/);
  if (start >= 0 && text[start] === "{") {
    const items = await jsonChartItems(text, start, name);
    return items && select(items, name, version);
  }
  const block = await yamlChartBlock(text, name);
  if (block === "no entries block") {
    return fromParsed(entriesOf(await parseSmall(text, "index.yaml"), name), version);
  }
  if (block === undefined) return undefined;
  const items = yamlListItems(text, block);
  if (items === undefined) {
    return fromParsed(asEntries(await parseSmall(block.text(), `the entries of ${name}`)), version);
  }
  return select(items, name, version);
}

/** A piece of the index holding one entry, and how to parse it. */
interface ItemText {
  readonly raw: string;
  parse(): Promise<unknown>;
}

/** Parses the first entries and those whose text names the version; refuses a list longer than it reads. */
async function select(items: AsyncIterable<ItemText>, name: string, version: string): Promise<ChartListing> {
  const first: IndexEntry[] = [];
  let entry: IndexEntry | undefined;
  let count = 0;
  let sinceYield = 0;
  for await (const item of items) {
    if (++count > maxChartVersions) {
      throw new IndexFormatError(`it lists more than ${maxChartVersions} versions of ${name}`);
    }
    sinceYield += item.raw.length;
    if (sinceYield > 64 * 1024) {
      sinceYield = 0;
      await yieldToEventLoop();
    }
    const candidate = entry === undefined && item.raw.includes(version);
    if (count > listedInMessages && !candidate) continue;
    const parsed = asEntry(await item.parse());
    if (count <= listedInMessages && parsed) first.push(parsed);
    if (candidate && parsed && isVersion(parsed, version)) entry = parsed;
  }
  return entry ? { entry, first } : { first };
}

function fromParsed(entries: readonly IndexEntry[] | undefined, version: string): ChartListing | undefined {
  if (entries === undefined) return undefined;
  if (entries.length > maxChartVersions) throw new IndexFormatError(`it lists more than ${maxChartVersions} versions`);
  const entry = entries.find((candidate) => isVersion(candidate, version));
  const first = entries.slice(0, listedInMessages);
  return entry ? { entry, first } : { first };
}

function isVersion(entry: IndexEntry, version: string): boolean {
  return entry.version === version || entry.version === `v${version}`;
}

async function parseSmall(text: string, what: string): Promise<unknown> {
  if (text.length > maxPieceBytes) {
    throw new IndexFormatError(`${what} is larger than ${maxPieceBytes / 1024} KiB in a layout Helm does not write`);
  }
  // The reader of rendered YAML: duplicate keys in constant time, where `yaml` checks them pair by pair (a piece
  // of 256 KiB with 22,000 keys took it 3.6 s). JSON is YAML too. A large piece is parsed off the event loop.
  if (text.length >= offThreadFromBytes) {
    const parse = await parseOnThread(text, maxDocumentBytes);
    if ("refusal" in parse) throw new IndexFormatError(`${what} is not valid YAML: ${parse.refusal}`);
    return parse.value;
  }
  try {
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

function asEntry(value: unknown): IndexEntry | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as IndexEntry) : undefined;
}

// ---- YAML in Helm's block layout, line by line ----

/** A line of the text: where it starts and ends (without its line break). */
interface Line {
  readonly start: number;
  readonly end: number;
}

function* linesOf(text: string, from: number, to = text.length): Generator<Line> {
  let start = from;
  while (start < to) {
    let end = text.indexOf("\n", start);
    if (end < 0 || end > to) end = to;
    yield { start, end: end > start && text[end - 1] === "\r" ? end - 1 : end };
    start = end + 1;
  }
}

function indentAt(text: string, line: Line): number {
  let at = line.start;
  while (at < line.end && (text[at] === " " || text[at] === "\t")) at++;
  return at - line.start;
}

function isBlankLine(text: string, line: Line): boolean {
  const first = line.start + indentAt(text, line);
  return first === line.end || text[first] === "#";
}

/** True when the line, past `indent`, starts a list item: `-` then a blank or the line's end. */
function startsItem(text: string, line: Line, indent: number): boolean {
  const at = line.start + indent;
  return text[at] === "-" && (at + 1 === line.end || text[at + 1] === " ");
}

/** Chart `name`'s value in the entries block: [start, end) of its lines, and its text when wanted. */
interface Block {
  readonly start: number;
  readonly end: number;
  text(): string;
}

async function yamlChartBlock(text: string, name: string): Promise<Block | "no entries block" | undefined> {
  const entries = /^entries:[ \t]*(#.*)?\r?$/m.exec(text);
  if (!entries) return "no entries block";
  const from = entries.index + entries[0].length + 1;
  const keys = [name, JSON.stringify(name), `'${name.replaceAll("'", "''")}'`];
  const keyLine = new RegExp(`^(?:${keys.map(escape).join("|")}):[ \\t]*(#.*)?$`);
  let chartIndent: number | undefined;
  let start: number | undefined;
  let scanned = 0;
  for (const line of linesOf(text, from)) {
    // A 16 MiB index is a few hundred thousand lines: the scan gives way now and then.
    if (++scanned % 65_536 === 0) await yieldToEventLoop();
    if (isBlankLine(text, line)) continue;
    const indent = indentAt(text, line);
    if (indent === 0) break; // the entries block is over
    chartIndent ??= indent;
    if (start !== undefined) {
      // Helm writes a key's list at the key's own indentation (`- apiVersion: …`); the block ends at the next key.
      if (indent < chartIndent || (indent === chartIndent && text[line.start + indent] !== "-")) {
        return block(text, start, line.start);
      }
      continue;
    }
    if (indent === chartIndent && keyLine.test(text.slice(line.start + indent, line.end).trimEnd())) {
      start = line.end + 1;
    }
  }
  return start === undefined ? undefined : block(text, start, text.length);
}

function block(text: string, start: number, end: number): Block {
  return { start, end, text: () => text.slice(start, end) };
}

/**
 * The block's list items, each parsed as a standalone mapping; undefined when the block is not a block list. Gives
 * way to the event loop now and then: one item can span the whole index (1.4 million lines took 108 ms).
 */
function yamlListItems(text: string, chart: Block): AsyncIterable<ItemText> | undefined {
  const first = [...firstLine(text, chart)][0];
  if (first === undefined) return (async function* () {})();
  const indent = indentAt(text, first);
  if (!startsItem(text, first, indent)) return undefined;
  return (async function* () {
    let itemStart = first.start;
    let scanned = 0;
    for (const line of linesOf(text, first.end + 1, chart.end)) {
      if (++scanned % 65_536 === 0) await yieldToEventLoop();
      if (indentAt(text, line) !== indent || !startsItem(text, line, indent)) continue;
      yield yamlItem(text.slice(itemStart, line.start), indent);
      itemStart = line.start;
    }
    yield yamlItem(text.slice(itemStart, chart.end), indent);
  })();
}

function* firstLine(text: string, chart: Block): Generator<Line> {
  for (const line of linesOf(text, chart.start, chart.end)) {
    if (!isBlankLine(text, line)) return yield line;
  }
}

/** One `- key: …` item, re-indented as a mapping of its own. */
function yamlItem(raw: string, indent: number): ItemText {
  return {
    raw,
    parse() {
      // Refused before it is split into lines: 16 MiB of one item's comment lines took 240 MiB to split.
      if (raw.length > maxPieceBytes) return parseSmall(raw, "an entry of index.yaml");
      const lines = raw.split("\n");
      lines[0] = " ".repeat(indent + 2) + (lines[0] ?? "").slice(indent + 2);
      const mapping = lines.map((line) => line.slice(Math.min(indent + 2, line.length - line.trimStart().length)));
      return parseSmall(mapping.join("\n"), "an entry of index.yaml");
    },
  };
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// ---- JSON, value by value ----

/** The elements of `entries[name]` in a JSON index, each parsed only when asked; undefined without that chart. */
async function jsonChartItems(text: string, start: number, name: string): Promise<AsyncIterable<ItemText> | undefined> {
  const entries = await memberValue(text, start, "entries");
  const chart = entries === undefined || text[entries] !== "{" ? undefined : await memberValue(text, entries, name);
  if (chart === undefined) return undefined;
  if (text[chart] !== "[") throw new IndexFormatError("a chart's entries in index.yaml are not a list");
  return (async function* () {
    for await (const [from, to] of arrayElements(text, chart)) {
      const raw = text.slice(from, to);
      yield {
        raw,
        parse: () => {
          if (raw.length > maxPieceBytes) throw new IndexFormatError("an entry of index.yaml is larger than 256 KiB");
          return Promise.resolve(jsonParse(raw));
        },
      };
    }
  })();
}

function jsonParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new IndexFormatError("index.yaml is neither valid JSON nor YAML");
  }
}

/**
 * Where the value of member `key` of the object at `at` starts, or undefined when it has none. Gives way to the
 * event loop now and then: a 16 MiB index can hold 1.7 million keys before the one asked for.
 */
async function memberValue(text: string, at: number, key: string): Promise<number | undefined> {
  let i = skipSpace(text, at + 1);
  let members = 0;
  while (text[i] !== "}") {
    if (++members % 65_536 === 0) await yieldToEventLoop();
    if (text[i] !== '"') throw new IndexFormatError("index.yaml is neither valid JSON nor YAML");
    const keyEnd = stringEnd(text, i);
    const name = jsonKey(text, i, keyEnd);
    i = skipSpace(text, keyEnd);
    if (text[i] !== ":") throw new IndexFormatError("index.yaml is neither valid JSON nor YAML");
    const value = skipSpace(text, i + 1);
    if (name === key) return value;
    const skip = { at: value, depth: 0 };
    while (!skipSome(text, skip)) await yieldToEventLoop();
    i = skipSpace(text, skip.at);
    if (text[i] === ",") i = skipSpace(text, i + 1);
    else if (text[i] !== "}") throw new IndexFormatError("index.yaml is neither valid JSON nor YAML");
  }
  return undefined;
}

/** The JSON string at [start, end): decoded only when it has an escape (most keys have none). */
function jsonKey(text: string, start: number, end: number): unknown {
  const inside = text.slice(start + 1, end - 1);
  return inside.includes("\\") ? jsonParse(text.slice(start, end)) : inside;
}

/** [start, end) of each element of the array at `at`. */
async function* arrayElements(text: string, at: number): AsyncGenerator<[number, number]> {
  let i = skipSpace(text, at + 1);
  while (text[i] !== "]") {
    const skip = { at: i, depth: 0 };
    while (!skipSome(text, skip)) await yieldToEventLoop();
    yield [i, skip.at];
    i = skipSpace(text, skip.at);
    if (text[i] === ",") i = skipSpace(text, i + 1);
    else if (text[i] !== "]") throw new IndexFormatError("index.yaml is neither valid JSON nor YAML");
  }
}

function skipSpace(text: string, at: number): number {
  let i = at;
  while (i < text.length && (text[i] === " " || text[i] === "\n" || text[i] === "\r" || text[i] === "\t")) i++;
  return i;
}

/** Where a scalar at the top of a value ends: the next delimiter or JSON white space. */
const scalarEnd = /[,}\] \n\r\t]/g;

/** Where a skip over a JSON value stands: the next character to read, and how deep in lists and objects. */
interface Skip {
  at: number;
  depth: number;
}

/** Characters skipped between two looks at the event loop: a 16 MiB value of brackets took ~100 ms in one go. */
const skipSlice = 1024 * 1024;

/**
 * Goes on with a skip over a JSON value (strings and nesting followed, nothing built) for at most
 * {@link skipSlice} characters; true once the value is over. By char code, strings
 * and scalars by search: a 16 MiB scalar took 250 ms one character string at a time.
 */
function skipSome(text: string, skip: Skip): boolean {
  let { at: i, depth } = skip;
  const until = i + skipSlice;
  do {
    const c = text.charCodeAt(i);
    if (Number.isNaN(c)) throw new IndexFormatError("index.yaml is neither valid JSON nor YAML");
    if (c === 0x22 /* " */) {
      i = stringEnd(text, i);
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      depth++;
      i++;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
      i++;
    } else if (depth === 0) {
      scalarEnd.lastIndex = i;
      i = scalarEnd.exec(text)?.index ?? text.length;
    } else i++;
  } while (depth > 0 && i < until);
  skip.at = i;
  skip.depth = depth;
  return depth === 0;
}

/** Just past the closing quote of the string opening at `at` (past the text's end when it has none). */
function stringEnd(text: string, at: number): number {
  for (let from = at + 1; ;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return text.length + 1;
    let backslashes = 0;
    while (quote - backslashes - 1 > at && text.charCodeAt(quote - backslashes - 1) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}
