/**
 * The namespace labels that set a namespace's budget for instances, in place of the platform's flags
 * (`--namespace-max-*`). Namespaces are the platform owner's objects (tenants usually cannot edit them), so a team's
 * budget lives on its namespace; labels rather than annotations so that the validating webhook's namespaceSelector
 * can pick exactly the namespaces where a budget applies (components/webhooks.ts), and a write elsewhere costs no
 * call. Values are a whole number (0 closes the namespace) or, for storage, a quantity such as `500Gi`.
 */
export const namespaceBudgetLabels = {
  instances: "myapp.example.com/max-instances",
  replicas: "myapp.example.com/max-replicas",
  storage: "myapp.example.com/max-storage",
} as const;

/** The three budgets a namespace has. */
export type BudgetDimension = keyof typeof namespaceBudgetLabels;
