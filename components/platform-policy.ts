/**
 * The platform owner's policy for instances (`MyAppOperator` arg `policy`): which registries images may come from,
 * how large one instance may be, and each namespace's budget. The operator's validating webhook enforces it at the
 * door (kubectl apply, server-side dry-runs, `pulumi preview`), so it is passed as operator flags: one source of
 * truth that travels with the operator version that understands it; the rules that need only the instance are also
 * a ValidatingAdmissionPolicy the apiserver evaluates itself (instance-policy.ts), so most writes call no webhook.
 * Chart sources stay `chartSources`, which the webhook enforces too.
 */
import { parseRegistryEntry, parseStorageLimit } from "../api/index.ts";
import { listEntryIssues } from "./list-arguments.ts";
import type { SettingsIssue } from "./settings.ts";

/** Arguments of the policy; everything unset is unlimited. */
export interface PlatformPolicyArgs {
  /**
   * Image reference prefixes instances may use, after Docker's normalisation (`nginx` is
   * `docker.io/library/nginx`), matched on path boundaries (`ghcr.io/acme` allows `ghcr.io/acme/app`, not
   * `ghcr.io/acme-evil/app`). Empty or unset: any registry.
   * @example ["docker.io/library", "registry.example.com/team-a"]
   */
  readonly allowedRegistries?: readonly string[];
  /** Largest `spec.replicas` of one instance. */
  readonly maxReplicas?: number;
  /** Largest `spec.storage` of one instance, a quantity such as "50Gi". */
  readonly maxStorage?: string;
  /**
   * What each namespace may hold in total. A namespace's labels `myapp.example.com/max-instances`,
   * `myapp.example.com/max-replicas` and `myapp.example.com/max-storage` (set by whoever owns namespaces) replace
   * these for that namespace.
   */
  readonly namespaceBudget?: {
    readonly instances?: number;
    readonly replicas?: number;
    /** A quantity such as "200Gi". */
    readonly storage?: string;
  };
  /** Refuse storage on a StorageClass that does not allow volume expansion (`spec.storage` could never grow). */
  readonly requireExpandableStorage?: boolean;
}

/** The policy, checked; what the operator's flags say. */
export interface PlatformPolicySettings {
  readonly allowedRegistries: readonly string[];
  readonly maxReplicas: number | undefined;
  readonly maxStorage: string | undefined;
  readonly namespaceBudget: {
    readonly instances: number | undefined;
    readonly replicas: number | undefined;
    readonly storage: string | undefined;
  };
  readonly requireExpandableStorage: boolean;
}

/** The policy from the component's argument, with every problem named by its field. */
export function resolvePlatformPolicy(
  args: PlatformPolicyArgs | undefined,
): { ok: true; policy: PlatformPolicySettings | undefined } | { ok: false; issues: SettingsIssue[] } {
  if (args === undefined) return { ok: true, policy: undefined };
  const issues: SettingsIssue[] = [];
  // At most Number.MAX_SAFE_INTEGER, the operator's own bound for these flags (operator/options.ts
  // `positiveInteger`): a larger number is written 1e+21, or rounds to a neighbour, and the operator refuses it.
  const wholeNumber = (field: string, value: number | undefined, min: number) => {
    if (value !== undefined && (!Number.isSafeInteger(value) || value < min)) {
      issues.push({ field, message: `${value} must be a whole number from ${min} to ${Number.MAX_SAFE_INTEGER}` });
    }
  };
  // The operator's own parsers (api/), so what `pulumi up` accepts the operator starts with.
  const quantity = (field: string, value: string | undefined): string | undefined => {
    if (value === undefined) return undefined;
    if (!parseStorageLimit(value, 1)) {
      issues.push({
        field,
        message: `"${value}" must be a storage quantity of at least 1 byte, such as 50Gi or 500Mi`,
      });
    }
    return value.trim();
  };
  const registries = args.allowedRegistries ?? [];
  const allowedRegistries: string[] = [];
  const listIssues = listEntryIssues(registries, "policy.allowedRegistries", "--allowed-registries", (entry) => {
    // Compared as normalised, as the operator's flag compares them (GHCR.io/acme/ is ghcr.io/acme).
    const parsed = parseRegistryEntry(entry);
    return "prefix" in parsed ? parsed.prefix : undefined;
  });
  registries.forEach((entry, i) => {
    const field = `policy.allowedRegistries[${i}]`;
    const listIssue = listIssues.find((issue) => issue.field === field);
    const parsed = parseRegistryEntry(entry);
    if (listIssue) issues.push(listIssue);
    else if ("problem" in parsed) issues.push({ field, message: parsed.problem });
    else allowedRegistries.push(parsed.prefix);
  });
  wholeNumber("policy.maxReplicas", args.maxReplicas, 1);
  const maxStorage = quantity("policy.maxStorage", args.maxStorage);
  const budget = args.namespaceBudget ?? {};
  // At least 1 (the operator's flags): a namespace closed to instances is one annotation away (max-instances: 0).
  wholeNumber("policy.namespaceBudget.instances", budget.instances, 1);
  wholeNumber("policy.namespaceBudget.replicas", budget.replicas, 1);
  const budgetStorage = quantity("policy.namespaceBudget.storage", budget.storage);
  if (issues.length > 0) return { ok: false, issues };
  return {
    ok: true,
    policy: {
      allowedRegistries,
      maxReplicas: args.maxReplicas,
      maxStorage,
      namespaceBudget: { instances: budget.instances, replicas: budget.replicas, storage: budgetStorage },
      requireExpandableStorage: args.requireExpandableStorage ?? false,
    },
  };
}

/** The operator's policy flags (operator/options.ts parses them); nothing for what is unlimited. */
export function platformPolicyFlags(policy: PlatformPolicySettings | undefined): string[] {
  if (!policy) return [];
  const flag = (name: string, value: string | number | undefined) =>
    value === undefined ? [] : [`--${name}=${value}`];
  return [
    ...(policy.allowedRegistries.length > 0 ? [`--allowed-registries=${policy.allowedRegistries.join(",")}`] : []),
    ...flag("max-replicas", policy.maxReplicas),
    ...flag("max-storage", policy.maxStorage),
    ...flag("namespace-max-instances", policy.namespaceBudget.instances),
    ...flag("namespace-max-replicas", policy.namespaceBudget.replicas),
    ...flag("namespace-max-storage", policy.namespaceBudget.storage),
    ...(policy.requireExpandableStorage ? ["--require-expandable-storage"] : []),
  ];
}
