/**
 * Reading the YAML a chart renders, which its author controls: a template can print any text within the output
 * limit, and the operator reads it on the event loop every tenant is served from. So the stream is cut into
 * documents by a linear line scan, each document is parsed on its own (at most {@link maxDocumentBytes}), and the
 * reader yields to the event loop between documents.
 *
 * The parser is js-yaml, not the `yaml` library the rest of the project uses: `yaml` checks a mapping's keys for
 * duplicates pair by pair, so one ConfigMap of 1 MiB (88,000 keys) took 66 s; js-yaml finds a duplicate key in
 * constant time and parses ~10 MiB/s of block YAML. Its core schema is YAML 1.2's, as `yaml`'s default (no dates, `yes` is a
 * string), and it keeps a `__proto__` key as an own property. Aliases are allowed, within a budget of what they
 * expand to: js-yaml shares an aliased value rather than copying it, but whatever writes the object out (the JSON
 * kept of a render, each apply) writes every copy.
 *
 * A document larger than {@link offThreadFromBytes} is parsed on a thread of its own (render-yaml-thread.ts): what
 * it costs js-yaml follows its nodes, and 3 MiB of flow items would hold the event loop for a second or more.
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { CORE_SCHEMA, loadAll } from "js-yaml";
import { parseOnThread } from "./render-yaml-thread.ts";

/**
 * The largest document of a render, in bytes: the apiserver takes no request body larger than 3 MiB, so a larger
 * object could never be applied.
 */
export const maxDocumentBytes = 3 * 1024 * 1024;

/**
 * Nodes (maps, lists and scalars) a document may have once its aliases are expanded: a "billion laughs" document
 * is a few lines that expand exponentially when the object is sent. A storable object has far fewer nodes.
 */
export const maxExpandedNodes = 1_000_000;

/**
 * Commas, line breaks and opening brackets a document may hold: a cheap filter, in a few ms, for the documents
 * that are nothing but nodes (1.4 million flow items, `[1,1,…]`, took js-yaml 230 MiB and a second or more). It
 * bounds nothing (a line of nested `- - - x` holds many nodes and no separator, and text in a block scalar counts
 * though it holds none): the parsing thread's heap and deadline are the bounds (render-yaml-thread.ts). Set so
 * that no object etcd stores (1.5 MiB) comes near it: data of 0s and 1s separated by commas has one every two
 * characters, 750,000.
 */
export const maxNodeSeparators = 1_000_000;

/**
 * What the aliases of one render may expand its objects to together, in characters of JSON: a few hundred aliases
 * of one 1 MiB string are within the node budget but 450 MiB once written out.
 */
export const maxExpandedRenderBytes = 16 * 1024 * 1024;

/**
 * Lists and maps nested in each other, plus one, that a document may not reach (js-yaml's default): no Kubernetes
 * object nests so deep.
 */
const maxDepth = 100;

/** Bytes parsed between two yields to the event loop. */
const yieldEveryBytes = 256 * 1024;

/**
 * Documents from this size on are parsed off the event loop: below it, the worst a document costs inline (flow
 * items) is some 50 ms.
 */
export const offThreadFromBytes = 128 * 1024;

/** A document of a render that cannot be read: not YAML, too large, too deep, or expanding too far. */
export class RenderYamlError extends Error {
  override readonly name = "RenderYamlError";
  /** The text of the document that cannot be read, when reading a stream. */
  readonly document: string | undefined;
  constructor(message: string, document?: string) {
    super(message);
    this.document = document;
  }
}

/** One document of a render: its text and what it parses to (null for an empty one). */
export interface RenderDocument {
  /** The text between two `---` lines, with its `# Source:` comment. */
  readonly text: string;
  readonly value: unknown;
}

/**
 * The documents of a rendered stream, in order, each parsed alone. Throws RenderYamlError, whose message says what
 * is wrong where (js-yaml's message names the line).
 */
export async function readDocuments(stream: string): Promise<RenderDocument[]> {
  const documents: RenderDocument[] = [];
  let sinceYield = 0;
  let expandedBytes = 0;
  for (const text of stream.split(/^---[ \t]*$/m)) {
    const budget = maxExpandedRenderBytes - expandedBytes;
    let parsed;
    // (A document over the apiserver's limit is refused inline, unread: no need to copy it to the thread.)
    if (text.length >= offThreadFromBytes && Buffer.byteLength(text) <= maxDocumentBytes) {
      const parse = await parseOnThread(text, budget);
      if ("refusal" in parse) throw new RenderYamlError(parse.refusal, text);
      parsed = parse;
    } else {
      try {
        parsed = parseBounded(text, budget);
      } catch (error) {
        throw error instanceof RenderYamlError ? new RenderYamlError(error.message, text) : error;
      }
    }
    expandedBytes += parsed.expandedBytes;
    const { value } = parsed;
    documents.push({ text, value });
    sinceYield += text.length;
    if (sinceYield > yieldEveryBytes) {
      sinceYield = 0;
      await yieldToEventLoop();
    }
  }
  return documents;
}

/** What one document parses to: null when it holds only comments, else its single value. */
export function parseDocument(text: string): unknown {
  return parseBounded(text, maxDocumentBytes).value;
}

/**
 * The document's value and, when it has aliases, the characters of JSON they expand it to (0 without), refused
 * past the apiserver's object size or `budget`, what is left of the render's.
 */
export function parseBounded(text: string, budget: number): { value: unknown; expandedBytes: number } {
  if (Buffer.byteLength(text) > maxDocumentBytes) {
    throw new RenderYamlError(
      `a document of ${mebibytes(Buffer.byteLength(text))} MiB; the apiserver takes at most ` +
        `${mebibytes(maxDocumentBytes)} MiB in one object`,
    );
  }
  const separators = nodeSeparators(text);
  if (separators > maxNodeSeparators) {
    throw new RenderYamlError(
      `it holds ${separators} commas, line breaks and opening brackets, which YAML nodes follow; a document may ` +
        `hold at most ${maxNodeSeparators} (no object etcd stores comes near)`,
    );
  }
  let values: unknown[];
  try {
    values = loadAll(text, { schema: CORE_SCHEMA, maxDepth });
  } catch (error) {
    throw new RenderYamlError(firstLine(error instanceof Error ? error.message : String(error)));
  }
  if (values.length > 1) throw new RenderYamlError("more than one document between two --- lines");
  const value = values[0] ?? null;
  if (!text.includes("*")) return { value, expandedBytes: 0 };
  const limit = Math.min(budget, maxDocumentBytes);
  const expanded = expandedSize(value, limit);
  if (expanded.nodes > maxExpandedNodes) {
    throw new RenderYamlError(`its aliases expand to more than ${maxExpandedNodes} nodes`);
  }
  if (expanded.bytes > limit) {
    throw new RenderYamlError(
      limit === maxDocumentBytes
        ? `its aliases expand it to more than ${mebibytes(limit)} MiB; the apiserver takes at most ` +
            `${mebibytes(maxDocumentBytes)} MiB in one object`
        : `aliases expand the render's objects to more than ${mebibytes(maxExpandedRenderBytes)} MiB`,
    );
  }
  return { value, expandedBytes: expanded.bytes };
}

/** How many characters of `text` are `,`, a line break (`\n` or `\r`), `[` or `{`. */
function nodeSeparators(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 44 || code === 10 || code === 13 || code === 91 || code === 123) count++;
  }
  return count;
}

/** The size of a value written out: its nodes, and about the characters of its JSON. */
interface Size {
  readonly nodes: number;
  readonly bytes: number;
}

/**
 * The size of `root` with every shared map, list or string counted each time it appears, stopping past
 * {@link maxExpandedNodes} nodes or `maxBytes`. Iterative, and linear in the distinct maps and lists: each one's
 * size is computed once, as is each long string's.
 */
function expandedSize(root: unknown, maxBytes: number): Size {
  const stringSizes = new Map<string, number>();
  const scalarBytes = (value: unknown): number => {
    if (typeof value !== "string") return String(value).length;
    if (value.length < 64) return JSON.stringify(value).length;
    // An aliased string is the same string each time: looked up, not measured again.
    let bytes = stringSizes.get(value);
    if (bytes === undefined) stringSizes.set(value, (bytes = JSON.stringify(value).length));
    return bytes;
  };
  if (root === null || typeof root !== "object") return { nodes: 1, bytes: scalarBytes(root) };
  const sizes = new Map<object, Size>();
  // Maps and lists whose children are being counted: meeting one again below itself is a cycle, without end.
  const open = new Set<object>();
  const stack: { node: object; opened: boolean }[] = [{ node: root, opened: false }];
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (sizes.has(top.node)) {
      stack.pop();
      continue;
    }
    if (!top.opened) {
      top.opened = true;
      open.add(top.node);
      for (const child of childrenOf(top.node)) {
        if (child === null || typeof child !== "object" || sizes.has(child)) continue;
        if (open.has(child)) return { nodes: Infinity, bytes: Infinity };
        stack.push({ node: child, opened: false });
      }
      continue;
    }
    let nodes = 1;
    let bytes = 2; // the brackets
    for (const [key, child] of entriesOf(top.node)) {
      // A key and its colon, or a comma between items: its JSON text.
      bytes += key === undefined ? 1 : scalarBytes(key) + 2;
      const size = child !== null && typeof child === "object" ? sizes.get(child) : undefined;
      nodes += size ? size.nodes : 1;
      bytes += size ? size.bytes : scalarBytes(child);
      if (nodes > maxExpandedNodes || bytes > maxBytes) return { nodes, bytes };
    }
    sizes.set(top.node, { nodes, bytes });
    open.delete(top.node);
    stack.pop();
  }
  return sizes.get(root) ?? { nodes: 1, bytes: 0 };
}

function childrenOf(node: object): unknown[] {
  return Array.isArray(node) ? node : Object.values(node);
}

function entriesOf(node: object): Iterable<[string | undefined, unknown]> {
  return Array.isArray(node) ? node.map((item) => [undefined, item] as [undefined, unknown]) : Object.entries(node);
}

function mebibytes(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(1);
}

function firstLine(message: string): string {
  return message.split("\n")[0] ?? message;
}
