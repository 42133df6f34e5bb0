/**
 * Arguments given by name (a component's or a resource's): a misspelled one (`replica: 3`, `polcy: {...}`) would
 * otherwise be dropped without a word, and its default taken in its place; a program without a type check (the
 * README's `typescript: false`) has nothing else to catch it.
 */

/** One argument that is not among the known ones: its path (`prefix` + key) and what the known ones are. */
export interface UnknownArgument {
  readonly field: string;
  readonly message: string;
}

/** Each key of `args` that is not among `known`, named under `prefix` (`"policy."`). */
export function unknownArguments(
  args: object | undefined | null,
  known: readonly string[],
  prefix = "",
): UnknownArgument[] {
  if (args === undefined || args === null || typeof args !== "object") return [];
  return Object.keys(args)
    .filter((key) => !known.includes(key))
    .map((key) => ({
      field: `${prefix}${key}`,
      message: `is not an argument; the arguments${prefix ? ` of ${prefix.slice(0, -1)}` : ""} are ${known.join(", ")}`,
    }));
}
