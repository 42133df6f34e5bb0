/** A CEL string literal: `text` single-quoted, its backslashes and quotes escaped, for rules built from data. */
export function celString(text: string): string {
  return `'${text.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
}
