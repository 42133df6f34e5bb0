// Lint: typescript-eslint's recommended rules, plus the layering of docs/architecture.md as a rule, not a convention.
import tseslint from "typescript-eslint";
import importX from "eslint-plugin-import-x";

/**
 * Each zone forbids `target` from importing `from` (paths relative to the repo root). docs/architecture.md's table
 * says the same in words, folder by folder; each folder's README repeats its own row.
 */
const layers = [
  // api is the ground floor: it imports nothing of ours.
  { target: "./api", from: ["./chart", "./kube", "./operator", "./components", "./provider", "./tools", "./bench"] },
  // the chart engine (sources, values, helm, render policy) may use api, nothing above it: the operator, the
  // provider and the component's checks share it.
  { target: "./chart", from: ["./operator", "./components", "./provider", "./tools", "./bench"] },
  // of kube, only undici's Agent without its index (the transport a remote chart fetch shares with the cluster's).
  { target: "./chart", from: ["./kube"], except: ["./undici.ts"] },
  // kube may use api, nothing above it.
  { target: "./kube", from: ["./chart", "./operator", "./components", "./provider", "./tools", "./bench"] },
  // the operator stands on api, chart and kube; the Pulumi side and the project's scripts are above it.
  { target: "./operator", from: ["./components", "./provider", "./tools", "./bench"] },
  // desired state is pure: api only, no I/O layer, no chart.
  {
    target: "./operator/desired",
    from: ["./chart", "./kube", "./operator/chart", "./operator/reconcile", "./operator/runtime"],
  },
  // charts, one wing on top of the engine: pure plans (what to apply, prune, switch; who owns what) and the I/O
  // that carries them out. Reconcile's chart step uses the wing, never the reverse; of the runtime the wing uses
  // its contract only (error kinds, event types), as reconcile does.
  { target: "./operator/chart", from: ["./operator/reconcile"] },
  { target: "./operator/chart", from: ["./operator/runtime"], except: ["./errors.ts", "./event.ts"] },
  // the plans stay pure: only the I/O files (apply, switch-apply, background-jobs) and the entry reach kube/.
  {
    target: "./operator/chart/!(apply|switch-apply|background-jobs|index).ts",
    from: ["./kube", "./operator/runtime"],
  },
  // reconcile uses only the runtime's contract (its error kinds and event types), as a Go reconciler uses
  // controller-runtime's; the process's files (main.ts, options.ts, ...) wire reconcile, not the reverse.
  {
    target: "./operator/reconcile",
    from: ["./operator/runtime"],
    except: ["./errors.ts", "./event.ts"],
  },
  // admission (the webhooks) judges writes: of the runtime it reads the cache and shares the HTTP guards; of the
  // other wings it borrows two pure pieces, which claims a StatefulSet makes and whose a chart's object is.
  {
    target: "./operator/admission",
    from: ["./operator/runtime"],
    except: ["./cache.ts", "./connection-limits.ts", "./health-server.ts"],
  },
  { target: "./operator/admission", from: ["./operator/reconcile"], except: ["./claim-owners.ts"] },
  { target: "./operator/admission", from: ["./operator/chart"], except: ["./owned.ts"] },
  // reconcile counts what a chart takes of its namespace's budget as admission does, through namespace-budget.ts alone.
  { target: "./operator/reconcile", from: ["./operator/admission"], except: ["./namespace-budget.ts"] },
  // the chart wing and the pure builders never reach the webhooks.
  { target: ["./operator/chart", "./operator/desired"], from: "./operator/admission" },
  // the runtime is generic: it never imports the domain (api, chart, desired, reconcile); main.ts wires them.
  {
    target: "./operator/runtime",
    from: [
      "./api",
      "./chart",
      "./operator/desired",
      "./operator/chart",
      "./operator/reconcile",
      "./operator/admission",
    ],
  },
  // the process's own files (main.ts, options.ts, chart-wiring.ts, watched-kinds.ts, version.ts, log-output.ts) wire the
  // folders of operator/; none of those folders imports them.
  { target: "./operator/*/**", from: "./operator/*.ts" },
  { target: "./provider", from: ["./operator", "./components", "./tools", "./bench"] },
  // the waits are below the operations: impl.ts calls them, and they never reach back to it or to the Pulumi side.
  {
    target: "./provider/waiting",
    from: [
      "./provider/impl.ts",
      "./provider/provider.ts",
      "./provider/impl-loader.js",
      "./provider/resource.ts",
      "./provider/index.ts",
    ],
  },
  { target: "./components", from: ["./operator", "./provider", "./tools", "./bench"] },
  // components use api, not kube; the exceptions are one bounded read (cluster-read.ts) and the two reads on it,
  // loaded only when needed: the cluster's nodes, which checks an in-cluster operator can run there
  // (cluster-nodes.ts), and a guarded namespace's kept claims before it is deleted (namespace-claims.ts).
  { target: "./components/!(cluster-read|cluster-nodes|namespace-claims).ts", from: "./kube" },
  // nothing imports stacks or tests.
  {
    target: [
      "./index.ts",
      "./api",
      "./chart",
      "./kube",
      "./operator",
      "./components",
      "./provider",
      "./tools",
      "./bench",
    ],
    from: ["./stacks", "./test"],
  },
  // only benchmarks and their tests import bench: the package, the tools and the stacks never need it.
  { target: ["./index.ts", "./tools"], from: "./bench" },
  { target: "./stacks", from: ["./test", "./bench"] },
];

export default tseslint.config(
  { ignores: ["node_modules/**", ".local/**", "dist/**", "build/**", "tools/go/**"] },
  ...tseslint.configs.recommended,
  {
    plugins: { "import-x": importX },
    rules: {
      "import-x/no-restricted-paths": ["error", { zones: layers }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", ignoreRestSiblings: true }],
      "no-restricted-properties": [
        "error",
        { property: "localeCompare", message: "Use byCodeUnits (api/code-unit-order.ts): Kubernetes' order, no ICU." },
      ],
    },
  },
);
