// Lint: typescript-eslint's recommended rules, plus the layering of ../DESIGN.md as a rule, not a convention.
import tseslint from "typescript-eslint";
import importX from "eslint-plugin-import-x";

/** Each zone forbids `target` from importing `from` (paths relative to the repo root). */
const layers = [
  // api is the ground floor: it imports nothing of ours.
  { target: "./api", from: ["./kube", "./operator", "./components", "./provider", "./stacks", "./tools"] },
  // the chart engine (sources, values, helm) may use api, nothing above it: the operator and the provider share it.
  { target: "./chart", from: ["./kube", "./operator", "./components", "./provider", "./stacks", "./tools"] },
  // kube may use api, nothing above it.
  { target: "./kube", from: ["./operator", "./components", "./provider", "./stacks", "./tools"] },
  // desired state is pure: api only, no I/O layer.
  {
    target: "./operator/desired",
    from: ["./kube", "./operator/reconcile", "./operator/runtime", "./operator/main.ts"],
  },
  // charts: rendering and the pure plan of what to apply and prune; reconcile uses it, not the reverse.
  { target: "./operator/chart", from: ["./operator/reconcile", "./operator/runtime", "./operator/main.ts"] },
  // reconcile uses only the runtime's contract (its error kinds and event types), as a Go reconciler uses
  // controller-runtime's.
  {
    target: "./operator/reconcile",
    from: ["./operator/runtime", "./operator/main.ts"],
    except: ["./errors.ts", "./event.ts"],
  },
  // the runtime is generic: it never imports the domain (api, desired, reconcile); main.ts wires them.
  {
    target: "./operator/runtime",
    from: ["./operator/main.ts", "./operator/options.ts", "./operator/reconcile", "./operator/desired", "./api"],
  },
  { target: "./provider", from: ["./operator", "./components", "./stacks"] },
  { target: "./components", from: ["./operator", "./provider", "./stacks"] },
  // components use api, not kube; the one exception is the read of the cluster's nodes that checks an in-cluster
  // operator can run there (components/cluster-nodes.ts), loaded only for that placement.
  { target: "./components/!(cluster-nodes).ts", from: "./kube" },
  // nothing imports stacks or tests.
  {
    target: ["./api", "./chart", "./kube", "./operator", "./components", "./provider", "./tools", "./bench"],
    from: ["./stacks", "./test"],
  },
];

export default tseslint.config(
  { ignores: ["node_modules/**", ".local/**", "dist/**", "build/**", "tools/go/**"] },
  ...tseslint.configs.recommended,
  {
    plugins: { "import-x": importX },
    rules: {
      "import-x/no-restricted-paths": ["error", { zones: layers }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", ignoreRestSiblings: true }],
    },
  },
);
