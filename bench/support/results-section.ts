/**
 * RESULTS.md holds several sections (headline rows, side-by-side runs, cluster capacity), each ending in an HTML
 * comment marker. A writer inserts just above its own section's marker, so a run of one benchmark never lands in
 * another's table; a section that is missing is created, with its intro, at the end of the file.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";

export interface ResultsSection {
  /** The marker line that ends the section, e.g. `<!-- cluster capacity runs end: ... -->`. */
  readonly end: string;
  /** The section's heading and intro, written (with `header`, if any) when the section does not exist yet. */
  readonly intro: string;
}

/** Everything in `file` above the end of `section` (the whole file when the section does not exist yet). */
export function textAbove(file: string, section: ResultsSection): string {
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  const at = text.indexOf(section.end);
  return at === -1 ? text : text.slice(0, at);
}

/**
 * Inserts `lines` at the end of `section`, creating the section if needed: as rows of the table that ends the
 * section (`asRows`), or as a block of its own, set off by a blank line.
 */
export function insertIntoSection(file: string, section: ResultsSection, lines: string, asRows: boolean): void {
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  const at = text.indexOf(section.end);
  const next =
    at === -1
      ? `${text.trimEnd()}${text ? "\n\n" : ""}${section.intro.trimEnd()}\n${asRows ? "" : "\n"}${lines}\n\n${section.end}\n`
      : `${text.slice(0, at).trimEnd()}\n${asRows ? "" : "\n"}${lines}\n\n${text.slice(at)}`;
  writeFileSync(file, next);
}
