/**
 * Can an in-cluster operator run on this cluster? kwok's fake nodes (this repository's local cluster) accept pods
 * and report them Running and Ready, but run no container: an operator Deployment there looks healthy and never
 * reconciles anything, and each MyAppInstance's `pulumi up` waits out its whole timeout. This decides, from the
 * cluster's nodes, whether to refuse such a placement (every node fake), warn (some are), or carry on. Pure: the
 * component reads the nodes (cluster-nodes.ts) and turns the verdict into an error or a warning.
 */

/** The parts of a Node the check reads. */
export interface NodeSummary {
  readonly metadata: { readonly name?: string; readonly annotations?: Readonly<Record<string, string>> };
  readonly status?: { readonly nodeInfo?: { readonly kubeletVersion?: string } };
}

/** The annotation kwok puts on the nodes it fakes (`kwokctl scale node`, kwok's node templates), value `fake`. */
export const fakeNodeAnnotation = "kwok.x-k8s.io/node";

/** What to do about an in-cluster operator on these nodes. */
export type PlacementVerdict =
  | { readonly verdict: "ok" }
  | { readonly verdict: "warn"; readonly message: string }
  | { readonly verdict: "refuse"; readonly message: string };

/**
 * True for a node that runs no containers: kwok's annotation, or the kubelet version kwok reports (`fake`) for
 * nodes made from another template.
 */
export function isFakeNode(node: NodeSummary): boolean {
  return node.metadata.annotations?.[fakeNodeAnnotation] === "fake" || node.status?.nodeInfo?.kubeletVersion === "fake";
}

/**
 * The documented local recipe, for the messages: the switch and the process of a user's project (the README's
 * program) and of this repository's dev stack. Not `npm run operator`: that one runs the dev stack's operator,
 * watching the dev stack's namespaces, never a project's.
 */
export const externalRecipe =
  'place the operator outside the cluster with operatorPlacement: "external" on this MyAppOperator (the README\'s ' +
  "program: `pulumi config rm operatorImage`; this repository's dev stack: `npm run pulumi -- config rm " +
  "operatorPlacement --stack dev`) and run it as a process: `npx --no-install myapp-operator` with the flags its " +
  "externalOperatorFlags lists and KUBECONFIG naming the cluster (for the dev stack, `npm start` does)";

/**
 * The verdict for an in-cluster operator on `nodes`. No nodes says nothing (a cluster that scales up from zero);
 * only fake nodes can never run it; a mix may schedule it on a fake one.
 */
export function inClusterPlacementVerdict(subject: string, nodes: readonly NodeSummary[]): PlacementVerdict {
  const fake = nodes.filter(isFakeNode);
  if (fake.length === 0) return { verdict: "ok" };
  const names = fake
    .slice(0, 3)
    .map((node) => node.metadata.name ?? "?")
    .join(", ");
  const listed = fake.length > 3 ? `${names}, ...` : names;
  if (fake.length === nodes.length) {
    return {
      verdict: "refuse",
      message:
        `${subject}: operatorPlacement "in-cluster" cannot run on this cluster: all ${nodes.length} of its nodes ` +
        `(${listed}) are kwok fake nodes (annotation ${fakeNodeAnnotation}: fake), which run no containers. The ` +
        "operator's pods would look Running and nothing would ever reconcile an instance (each MyAppInstance's " +
        `\`pulumi up\` would wait its whole timeout). For a local cluster, ${externalRecipe}.`,
    };
  }
  return {
    verdict: "warn",
    message:
      `${subject}: ${fake.length} of the cluster's ${nodes.length} nodes (${listed}) are kwok fake nodes, which run ` +
      "no containers; an operator pod scheduled there looks Running and does nothing. Keep it off them (a node " +
      `selector in a fork), or ${externalRecipe}.`,
  };
}
