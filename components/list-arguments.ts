/**
 * Checks shared by the list arguments that reach the operator as one comma-separated flag (`chartSources` as
 * `--chart-sources=a,b`, `policy.allowedRegistries`, `chartKinds`, `chartServiceTypes`; `watchNamespaces` has a check of its own): an entry
 * with a comma would arrive as two, and the operator refuses an entry listed twice, so the component does too,
 * naming the entry by its index.
 */
import type { SettingsIssue } from "./settings.ts";

/**
 * The issues of `entries` (the argument `field`, the operator's flag `flag`): each entry with a comma, and each
 * repeat of an earlier entry, compared as `key` reads them (an entry whose key is undefined, one that is wrong in
 * some other way, is left to the argument's own check).
 */
export function listEntryIssues(
  entries: readonly string[],
  field: string,
  flag: string,
  key: (entry: string) => string | undefined = (entry) => entry,
): SettingsIssue[] {
  const issues: SettingsIssue[] = [];
  const seen = new Map<string, number>();
  entries.forEach((entry, i) => {
    if (entry.includes(",")) {
      issues.push({
        field: `${field}[${i}]`,
        message: `"${entry}" contains a comma, which separates the entries of the operator's ${flag}; list each entry on its own`,
      });
      return;
    }
    const id = key(entry);
    if (id === undefined) return;
    const first = seen.get(id);
    if (first === undefined) {
      seen.set(id, i);
      return;
    }
    const earlier = entries[first] ?? "";
    issues.push({
      field: `${field}[${i}]`,
      message:
        earlier === entry
          ? `"${entry}" is listed twice; list it once`
          : `"${entry}" is ${field}[${first}] ("${earlier}") again, written differently; list it once`,
    });
  });
  return issues;
}
