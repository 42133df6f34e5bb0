/**
 * Free-text strings with a length limit. The apiserver counts `maxLength` in Unicode code points, JavaScript's
 * `length` in UTF-16 units (an emoji is 2), so `z.string().max()` would reject text the apiserver accepts.
 */
import * as z from "zod";

/** Length in code points, as the apiserver's `maxLength` counts it. */
function codePointLength(text: string): number {
  // The string iterator walks code points, not UTF-16 units.
  return Array.from(text).length;
}

/** A string of at most `max` code points; its JSON Schema says `maxLength: max`. */
export function boundedText(max: number) {
  return z
    .string()
    .refine((text) => codePointLength(text) <= max, { error: `must be at most ${max} characters` })
    .meta({ maxLength: max });
}
