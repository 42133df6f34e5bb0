/**
 * Rules about changing a spec, which need the old and the new value side by side: the TS twins of the CRD's
 * transition rules (CEL `oldSelf`), for callers that see both (the provider's check and diff).
 */
import { compareQuantities, parseQuantity } from "./quantity.ts";
import type { MyAppInstanceSpecInput } from "./spec.ts";
import { specRules, storageClassChangeMessage } from "./spec.ts";
import type { FieldIssue } from "./field-issue.ts";

type StorageFields = Pick<MyAppInstanceSpecInput, "storage" | "storageClassName">;

/**
 * The issues the apiserver would raise when `oldSpec` is updated to `newSpec` (an empty list when it would
 * accept the change): storage may grow but not shrink, may not be removed once set, and its class may not change
 * once set. Both specs are assumed valid on their own (see `validateSpec`); quantities compare as in CEL.
 */
export function checkSpecTransition(oldSpec: StorageFields, newSpec: StorageFields): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (oldSpec.storage !== undefined && newSpec.storage === undefined) {
    issues.push({ path: "spec.storage", message: specRules.storageNotRemovable });
  }
  if (oldSpec.storage !== undefined && newSpec.storage !== undefined) {
    const before = parseQuantity(oldSpec.storage);
    const after = parseQuantity(newSpec.storage);
    if (before !== undefined && after !== undefined && compareQuantities(after, before) < 0) {
      issues.push({
        path: "spec.storage",
        message: `may grow but not shrink: was ${oldSpec.storage}, now ${newSpec.storage}`,
      });
    }
  }
  if (oldSpec.storage !== undefined && oldSpec.storageClassName !== newSpec.storageClassName) {
    issues.push({
      path: "spec.storageClassName",
      message: storageClassChangeMessage(oldSpec.storageClassName, newSpec.storageClassName),
    });
  }
  return issues;
}
