// Lint: typescript-eslint's recommended rules, plus the layering of ../DESIGN.md as a rule, not a convention.
import tseslint from "typescript-eslint";
import importX from "eslint-plugin-import-x";

/** Each zone forbids `target` from importing `from` (paths relative to the repo root). */
const layers = [
  // api is the ground floor: it imports nothing of ours.
  { target: "./api", from: ["./kube", "./operator", "./components", "./provider", "./stacks", "./tools"] },
  // kube may use api, nothing above it.
  { target: "./kube", from: ["./operator", "./components", "./provider", "./stacks", "./tools"] },
  // desired state is pure: api only, no I/O layer.
  {
    target: "./operator/desired",
    from: ["./kube", "./operator/reconcile", "./operator/runtime", "./operator/main.ts"],
  },
  { target: "./operator/reconcile", from: ["./operator/runtime", "./operator/main.ts"] },
  { target: "./operator/runtime", from: ["./operator/main.ts"] },
  { target: "./provider", from: ["./operator", "./components", "./stacks"] },
  { target: "./components", from: ["./operator", "./provider", "./stacks", "./kube"] },
  // nothing imports stacks or tests.
  {
    target: ["./api", "./kube", "./operator", "./components", "./provider", "./tools", "./bench"],
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
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
    },
  },
);
