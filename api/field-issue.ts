/**
 * The one error shape of this API: a field path in the apiserver's notation and what the field allows, so a
 * message from `pulumi preview` reads like the one from `kubectl apply`.
 */

/** One problem with one field. */
export interface FieldIssue {
  /** The field, as the apiserver names it: `spec.port`, `metadata.labels`, `status.conditions[0].type`. */
  readonly path: string;
  /** What is wrong, in terms of what is allowed: "must be an integer from 1 to 65535". */
  readonly message: string;
}

/** `spec.port: must be ...` lines, one per issue: the text to show a person. */
export function formatFieldIssues(issues: readonly FieldIssue[]): string {
  return issues.map((issue) => `${issue.path}: ${issue.message}`).join("\n");
}
