/**
 * The apiserver's half of check: a server-side dry-run of the apply, so the CRD's schema and CEL rules and any
 * admission policy judge the inputs during `pulumi preview`, and an object of the same name that this stack does
 * not own is reported before `pulumi up`. When the apiserver cannot answer (no cluster, no CRD yet, no namespace
 * yet, no permission), the zod verdict stands alone and the note says why.
 */
import { apiVersion, crdName, kind } from "../api/index.ts";
import {
  ApiError,
  ForbiddenError,
  InvalidError,
  NotFoundError,
  TransportError,
  type FieldCause,
  type KubeClient,
  type KubeObject,
} from "../kube/index.ts";
import { clusterIdentity, serverOf } from "../kube/cluster-identity.ts";
import { admissionDefaults } from "./admission-defaults.ts";
import { kindNotYetKnown, unansweredWebhook, webhookWaitReason } from "./waiting/admission-wait.ts";
import type { InputFailure } from "./check.ts";
import { fieldManager, type InstanceInputs } from "./inputs.ts";
import { desiredInstance, ownershipProblem, type LiveInstance } from "./manifest.ts";

/**
 * Failures the apiserver reported, or a note on why it was not asked; `unreachable` when no apiserver answered at
 * all (no connection, or no answer to anything within {@link serverCheckTimeoutMs}): check fails the preview on
 * that, once. An apiserver that answers but takes longer for the dry-run (two slow webhooks take up to 5 s each)
 * is slow, not gone: a note.
 */
export type ServerCheckOutcome =
  | {
      readonly checked: true;
      readonly failures: InputFailure[];
      /** Spec fields the cluster's admission set that the inputs leave out (`podSecurityLevel: "Baseline"`). */
      readonly defaulted?: string[];
    }
  | { readonly checked: false; readonly note: string; readonly unreachable?: true; readonly slow?: true };

/** Slower than this and preview carries on with the zod verdict: a down cluster must not stall every preview. */
export const serverCheckTimeoutMs = 5_000;

export interface ServerCheckOptions {
  /**
   * True when this resource is about to create its object (new, renamed, or replaced: the engine checks a
   * replacement again with no old inputs). An existing object of that name must then carry this stack's marker,
   * and the inputs are judged as a new object, not as a change of the existing one (whose transition rules,
   * such as "storage may not be removed", do not apply to its replacement).
   */
  readonly creating: boolean;
  /** True to check that `storageClassName` names a StorageClass of the cluster (new, or changed). */
  readonly checkStorageClass?: boolean;
}

/** Asks the apiserver about `inputs`. Never throws: anything unexpected becomes a note. */
export async function serverCheck(
  client: KubeClient,
  inputs: InstanceInputs,
  options: ServerCheckOptions,
): Promise<ServerCheckOutcome> {
  // Whether the apiserver answers at all, asked beside the dry-run (once per connection and process: diff asks the
  // same), so a dry-run that outlasts the timeout can tell a slow admission from a cluster that is not there.
  const answered = answers(client);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<ServerCheckOutcome>((resolve) => {
    timer = setTimeout(
      () =>
        resolve(
          answered.value
            ? {
                checked: false,
                note: `the apiserver answers, but its dry-run took longer than ${serverCheckTimeoutMs / 1000}s (slow admission webhooks?)`,
                slow: true,
              }
            : {
                checked: false,
                note: `the apiserver did not answer within ${serverCheckTimeoutMs / 1000}s`,
                unreachable: true,
              },
        ),
      serverCheckTimeoutMs,
    );
    timer.unref();
  });
  try {
    return await Promise.race([askApiserver(client, inputs, options), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Set once `client` has had an answer from an apiserver (any HTTP status counts; no connection does not). */
function answers(client: KubeClient): { value: boolean } {
  const flag = { value: false };
  clusterIdentity(client).then(
    () => (flag.value = true),
    (error: unknown) => (flag.value = error instanceof ApiError && !(error instanceof TransportError)),
  );
  return flag;
}

async function askApiserver(
  client: KubeClient,
  inputs: InstanceInputs,
  options: ServerCheckOptions,
): Promise<ServerCheckOutcome> {
  try {
    if (options.checkStorageClass && inputs.storageClassName !== undefined) {
      const missing = await missingStorageClass(client, inputs.storageClassName);
      if (missing) return { checked: true, failures: [{ property: "storageClassName", reason: missing }] };
    }
    const desired = desiredInstance(inputs);
    const existing = options.creating
      ? await client.find<LiveInstance>(apiVersion, kind, inputs.name, inputs.namespace)
      : undefined;
    if (existing) {
      const problem = ownershipProblem(existing, inputs);
      if (problem) return { checked: true, failures: [{ property: "name", reason: problem }] };
      // Ours, about to be replaced: dry-run a create under a generated name, so it is judged as a new object.
      const metadata = { ...desired.metadata, name: undefined, generateName: `${inputs.name}-` };
      const admitted = await client.create<LiveInstance>({ ...desired, metadata }, { fieldManager, dryRun: true });
      return { checked: true, failures: [], defaulted: admissionDefaults(desired, admitted) };
    }
    const admitted = await client.apply<LiveInstance>(desired, { fieldManager, force: true, dryRun: true });
    return { checked: true, failures: [], defaulted: admissionDefaults(desired, admitted) };
  } catch (error) {
    return interpret(error, inputs);
  }
}

/**
 * Why `name` is not a StorageClass of the cluster, listing those that are; undefined when it is, or when the
 * classes cannot be read (no permission: the operator's own check remains).
 */
export async function missingStorageClass(client: KubeClient, name: string): Promise<string | undefined> {
  let classes;
  try {
    classes = await client.list<KubeObject>("storage.k8s.io/v1", "StorageClass");
  } catch (error) {
    if (error instanceof ForbiddenError) return undefined;
    throw error;
  }
  const names = classes.items.map((item) => item.metadata.name ?? "").sort();
  if (names.includes(name)) return undefined;
  return (
    `StorageClass "${name}" does not exist in the cluster (${serverOf(client)}); ` +
    `${names.length > 0 ? `it has ${names.join(", ")}` : "it has none"}. Leave storageClassName out for the default class.`
  );
}

/** Rejections become field failures; an apiserver that cannot judge yet becomes a note. */
export function interpret(error: unknown, inputs: Pick<InstanceInputs, "namespace">): ServerCheckOutcome {
  if (error instanceof InvalidError) {
    const causes = error.causes.length > 0 ? error.causes : [{ field: "", message: error.message }];
    // A chart ConfigMap the admission webhook did not find may be one this very stack creates before the
    // instance: a note, not a failure (`pulumi up` meets the webhook again, then with the ConfigMap there).
    const judged = causes.filter((cause) => !isMissingChartConfigMap(cause));
    if (judged.length === 0) {
      return {
        checked: false,
        note: `${causes.map((cause) => `${cause.field}: ${cause.message}`).join("; ")} (if this stack creates it, the instance must depend on it)`,
      };
    }
    return { checked: true, failures: judged.map(toFailure) };
  }
  if (error instanceof NotFoundError) {
    const missing = /namespaces? "[^"]*" not found/.test(error.message)
      ? `namespace ${inputs.namespace} does not exist yet`
      : `the CRD ${crdName} is not installed yet`;
    return { checked: false, note: missing };
  }
  if (error instanceof ForbiddenError) {
    // RBAC denying us the dry-run says nothing about the inputs; any other 403 is admission's verdict (a quota,
    // a webhook, a policy) and is exactly what `pulumi up` would run into.
    if (/ cannot [a-z]+ resource /.test(error.message)) {
      return { checked: false, note: `not allowed to dry-run: ${error.message}` };
    }
    // The platform's webhook names each field it refuses; other admission (a quota, a policy) says it in words.
    const failures = error.causes.some((cause) => cause.field)
      ? error.causes.map(toFailure)
      : [{ property: "", reason: error.message }];
    return { checked: true, failures };
  }
  if (error instanceof TransportError) {
    return { checked: false, note: `the apiserver could not answer: ${error.message}`, unreachable: true };
  }
  const webhook = unansweredWebhook(error);
  if (webhook !== undefined) {
    return {
      checked: false,
      note: `the admission webhook ${webhook} did not answer (${webhookWaitReason(error)})`,
    };
  }
  const kind = kindNotYetKnown(error);
  if (kind !== undefined) {
    return { checked: false, note: `the apiserver's admission policies do not know ${kind} yet (its CRD is new)` };
  }
  if (error instanceof ApiError) return { checked: false, note: `the apiserver could not answer: ${error.message}` };
  return { checked: false, note: error instanceof Error ? error.message : String(error) };
}

/** The admission webhook's "ConfigMap ns/name does not exist" on spec.chart.configMap. */
function isMissingChartConfigMap(cause: FieldCause): boolean {
  return (
    cause.reason === "FieldValueNotFound" &&
    cause.field === "spec.chart.configMap" &&
    / does not exist\b/.test(cause.message)
  );
}

/** `spec.storage` → property `storage`; `metadata.name` → `name`; anything else is about the whole resource. */
function toFailure(cause: FieldCause): InputFailure {
  const field = cause.field.replace(/^\./, "");
  const spec = /^spec\.([A-Za-z]+)/.exec(field);
  if (spec?.[1]) return { property: spec[1], reason: cause.message };
  const meta = /^metadata\.(name|namespace)$/.exec(field);
  if (meta?.[1]) return { property: meta[1], reason: cause.message };
  return { property: "", reason: field ? `${field}: ${cause.message}` : cause.message };
}
