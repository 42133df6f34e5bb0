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

/**
 * What an argument must be. A program without a type check passes `"false"` for a boolean or `"shop"` for a list
 * just as easily as a misspelled name, and each would be read as something else (`!"false"` is false, a string
 * spreads into its characters): so each is refused, naming it. A nested shape is an object with those arguments
 * only; "object" is one whose own checks come later (a chart spec, resources).
 */
export type ArgumentShape =
  | "boolean"
  | "string"
  | "number"
  | "string list"
  | "string map"
  | "object"
  | { readonly [argument: string]: ArgumentShape };

/** Each argument of `args` that is unknown or not of its shape, named under `prefix`; undefined is "not given". */
export function argumentShapeProblems(
  args: unknown,
  shape: { readonly [argument: string]: ArgumentShape },
  prefix = "",
): UnknownArgument[] {
  if (args === undefined) return [];
  const problems: UnknownArgument[] = [];
  if (!isPlainObject(args)) {
    const field = prefix ? prefix.slice(0, -1) : "arguments";
    return [{ field, message: `is ${describeValue(args)}; it must be an object of ${Object.keys(shape).join(", ")}` }];
  }
  problems.push(...unknownArguments(args, Object.keys(shape), prefix));
  for (const [key, expected] of Object.entries(shape)) {
    const value = (args as Record<string, unknown>)[key];
    if (value === undefined) continue;
    const field = `${prefix}${key}`;
    if (typeof expected === "object") {
      problems.push(...argumentShapeProblems(value, expected, `${field}.`));
      continue;
    }
    const problem = shapeProblem(value, expected);
    if (problem) {
      problems.push({
        field: `${field}${problem.at}`,
        message: `is ${describeValue(problem.value)}; ${problem.allowed}`,
      });
    }
  }
  return problems;
}

/** What is wrong with `value` for `expected`: where (`[2]`, `.key` of a list or map), the value, what is allowed. */
function shapeProblem(
  value: unknown,
  expected: Exclude<ArgumentShape, object>,
): { at: string; value: unknown; allowed: string } | undefined {
  const wrong = (allowed: string) => ({ at: "", value, allowed });
  switch (expected) {
    case "boolean":
      return typeof value === "boolean" ? undefined : wrong("it must be true or false");
    case "string":
      return typeof value === "string" ? undefined : wrong("it must be a string");
    case "number":
      return typeof value === "number" ? undefined : wrong("it must be a number");
    case "object":
      return isPlainObject(value) ? undefined : wrong("it must be an object");
    case "string list": {
      if (!Array.isArray(value)) return wrong("it must be a list of strings");
      const index = value.findIndex((item) => typeof item !== "string");
      return index < 0 ? undefined : { at: `[${index}]`, value: value[index], allowed: "it must be a string" };
    }
    case "string map": {
      if (!isPlainObject(value)) return wrong("it must be an object whose values are strings");
      const entry = Object.entries(value).find(([, item]) => typeof item !== "string");
      return entry === undefined ? undefined : { at: `.${entry[0]}`, value: entry[1], allowed: "it must be a string" };
    }
  }
}

function isPlainObject(value: unknown): value is object {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `a string ("false")`, `a list`, `null`: the kind first, then the value, shortened. */
function describeValue(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "an object";
  const text = typeof value === "string" ? JSON.stringify(value) : String(value);
  const shown = text.length > 60 ? `${text.slice(0, 57)}...` : text;
  return `${/^[aeiou]/.test(typeof value) ? "an" : "a"} ${typeof value} (${shown})`;
}
