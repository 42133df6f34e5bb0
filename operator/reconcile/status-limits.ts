/**
 * A status the apiserver accepts, whatever text it carries. Its messages quote what tenants control (a chart's
 * `fail`, the apiserver's rejection of an object a chart rendered, a Deployment's conditions), and a chart decides
 * its main workload's image and selector. A status over one of the schema's limits would be refused at every write,
 * so the instance would never say why it is stuck; and each message is held up to five times (status.message and
 * four conditions) by the operator's cache and by every watcher. Pure.
 */
import {
  maxImageReferenceLength,
  maxStatusSelectorLength,
  type Condition,
  type MyAppInstanceStatus,
} from "../../api/index.ts";

/**
 * The longest message the operator writes into the status, in characters (code points). The schema allows 32768,
 * as metav1.Condition does; a person reads the start, and writeStatus logs more (up to operator/log-bounds.ts's
 * bound). Legitimate messages
 * (a Pod Security rejection of a pod with several containers) stay well below.
 */
export const statusMessageLength = 4096;

/** `text`, cut to `max` characters with a note of how much was cut. */
export function clippedMessage(text: string, max = statusMessageLength): string {
  // A string's length in UTF-16 units is never less than its code points.
  if (text.length <= max) return text;
  const characters = Array.from(text);
  if (characters.length <= max) return text;
  const note = (cut: number) => ` … (${cut} more characters)`;
  // The note for every character is at least as long as the note for those actually cut.
  const kept = max - note(characters.length).length;
  return characters.slice(0, kept).join("") + note(characters.length - kept);
}

/**
 * `status` within the schema's limits: messages clipped, and an image or selector longer than the schema allows left
 * out (only a chart renders such a workload; without them the status is still written, with them it would not be).
 */
export function withinStatusLimits(status: MyAppInstanceStatus): MyAppInstanceStatus {
  const fitted: MyAppInstanceStatus = { ...status };
  if (fitted.conditions !== undefined) fitted.conditions = fitted.conditions.map(clippedCondition);
  if (fitted.message !== undefined) fitted.message = clippedMessage(fitted.message);
  if (fitted.image !== undefined && Array.from(fitted.image).length > maxImageReferenceLength) delete fitted.image;
  if (fitted.selector !== undefined && Array.from(fitted.selector).length > maxStatusSelectorLength) {
    delete fitted.selector;
  }
  return fitted;
}

function clippedCondition(condition: Condition): Condition {
  const message = clippedMessage(condition.message);
  return message === condition.message ? condition : { ...condition, message };
}
