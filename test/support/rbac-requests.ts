/**
 * Turns recorded HTTP requests (request-recorder.ts) into what RBAC authorizes: verb, API group, resource (with
 * subresource) and namespace, the way the apiserver's RequestInfoFactory reads a URL. Written out here because
 * the apiserver's resolver is Go; it covers the REST paths the operator uses.
 */
import type { OperatorRule } from "../../components/rbac-rules.ts";

/** One recorded request (a line of the recorder's file). */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly status: number;
}

/** What RBAC checked for a request. */
export interface AuthorizedRequest {
  readonly verbs: readonly string[];
  readonly group: string;
  /** `resource` or `resource/subresource`. */
  readonly resource: string;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
}

/** The RBAC attributes of a resource request; undefined for non-resource paths (discovery, /version). */
export function authorizedRequest(request: RecordedRequest): AuthorizedRequest | undefined {
  const url = new URL(request.path, "https://apiserver");
  const parts = url.pathname.split("/").filter(Boolean);
  let group: string;
  let rest: string[];
  if (parts[0] === "api" && parts.length >= 3) {
    group = "";
    rest = parts.slice(2);
  } else if (parts[0] === "apis" && parts.length >= 4) {
    group = parts[1] ?? "";
    rest = parts.slice(3);
  } else {
    return undefined;
  }
  let namespace: string | undefined;
  // "namespaces/<ns>/<resource>...": a namespaced resource; "namespaces/<ns>" alone is the Namespace object.
  if (rest[0] === "namespaces" && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [resource = "", name, subresource] = rest;
  const watching = ["true", "1"].includes(url.searchParams.get("watch") ?? "");
  const verbs = verbsOf(request.method, name !== undefined, watching, request.status);
  return { verbs, group, resource: subresource ? `${resource}/${subresource}` : resource, namespace, name };
}

/** `group/resource verb` lines (`core` for the core group), sorted and unique, as rbac.test.ts writes grants. */
export function grantLines(requests: readonly AuthorizedRequest[]): string[] {
  const lines = requests.flatMap((r) => r.verbs.map((verb) => `${r.group || "core"}/${r.resource} ${verb}`));
  return [...new Set(lines)].sort();
}

/** The same lines for rules. */
export function ruleLines(rules: readonly OperatorRule[]): string[] {
  const lines = rules.flatMap((rule) =>
    rule.apiGroups.flatMap((group) =>
      rule.resources.flatMap((resource) => rule.verbs.map((verb) => `${group || "core"}/${resource} ${verb}`)),
    ),
  );
  return [...new Set(lines)].sort();
}

function verbsOf(method: string, named: boolean, watching: boolean, status: number): string[] {
  switch (method.toUpperCase()) {
    case "GET":
      return [watching ? "watch" : named ? "get" : "list"];
    case "POST":
      return ["create"];
    case "PUT":
      return ["update"];
    // A server-side apply that made the object (201) was also authorized as create.
    case "PATCH":
      return status === 201 ? ["patch", "create"] : ["patch"];
    case "DELETE":
      return [named ? "delete" : "deletecollection"];
    default:
      return [method.toLowerCase()];
  }
}
