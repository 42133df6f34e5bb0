/**
 * A list response split into its items as its text arrives: each item's text is handed over once it is complete,
 * and the rest (kind, apiVersion, metadata) is kept and parsed at the end. So a list never stands in memory whole:
 * an informer's first list, which the apiserver serves from its watch cache in one response whatever `limit` says,
 * costs one object at a time instead of the whole text plus every object parsed from it. A tenant's 200 ConfigMaps
 * of 900 KiB each are 176 MiB of text and as much again parsed, on every start of the operator that watches them.
 *
 * Written by hand: JSON.parse takes a whole text, and all this needs of a streaming JSON parser is where the
 * elements of the top-level `items` array begin and end, which string and bracket tracking tells.
 */

const quote = 0x22;
const openBrace = 0x7b;
const closeBrace = 0x7d;
const openBracket = 0x5b;
const closeBracket = 0x5d;

/** Where the splitter is: in the list's own fields, in `items` between elements, or inside an element. */
type Place = "envelope" | "between" | "item";

export class ListSplitter {
  private readonly onItem: (text: string) => void;
  /** The list without its items' elements (`"items":[]`): small, parsed at the end. */
  private envelope = "";
  private itemPieces: string[] = [];
  private place: Place = "envelope";
  private depth = 0;
  private inString = false;
  private escaped = false;

  constructor(onItem: (text: string) => void) {
    this.onItem = onItem;
  }

  /** The next piece of the response's text. */
  push(text: string): void {
    let mark = 0;
    // Most of a list is inside strings: jump from quote to quote with indexOf, minding backslashes (the next one is
    // looked up again only once passed, so each character is searched once).
    let nextBackslash = text.indexOf("\\");
    for (let i = 0; i < text.length; i++) {
      if (this.inString) {
        if (this.escaped) {
          this.escaped = false;
          continue;
        }
        if (nextBackslash !== -1 && nextBackslash < i) nextBackslash = text.indexOf("\\", i);
        const nextQuote = text.indexOf('"', i);
        if (nextBackslash !== -1 && (nextQuote === -1 || nextBackslash < nextQuote)) {
          this.escaped = true;
          i = nextBackslash;
        } else if (nextQuote === -1) {
          i = text.length;
        } else {
          this.inString = false;
          i = nextQuote;
        }
        continue;
      }
      const c = text.charCodeAt(i);
      if (c === quote) {
        this.inString = true;
      } else if (c === openBrace || c === openBracket) {
        this.depth++;
        if (this.place === "between" && this.depth === 3) {
          this.place = "item";
          mark = i;
        } else if (this.place === "envelope" && this.depth === 2 && c === openBracket) {
          const before = this.envelope + text.slice(mark, i);
          if (/"items"\s*:\s*$/.test(before)) {
            this.envelope = before + "[";
            this.place = "between";
          }
        }
      } else if (c === closeBrace || c === closeBracket) {
        this.depth--;
        if (this.depth < 0) throw new SyntaxError("list response: unbalanced brackets");
        if (this.place === "item" && this.depth === 2) {
          this.itemPieces.push(text.slice(mark, i + 1));
          const item = this.itemPieces.join("");
          this.itemPieces = [];
          this.place = "between";
          this.onItem(item);
        } else if (this.place === "between" && this.depth === 1) {
          this.place = "envelope";
          mark = i;
        }
      }
    }
    if (this.place === "item") this.itemPieces.push(text.slice(mark));
    else if (this.place === "envelope") this.envelope += text.slice(mark);
  }

  /** The list's own fields, once the whole text was pushed (its `items` are empty: they went to `onItem`). */
  end(): Record<string, unknown> {
    if (this.place !== "envelope" || this.depth !== 0 || this.inString) {
      throw new SyntaxError("list response: the text ended inside the list");
    }
    return JSON.parse(this.envelope) as Record<string, unknown>;
  }
}
