/** Where the operator serves metrics and health checks; the Deployment's probes and the Service point here. */

export const metricsPort = 8080;
export const metricsPath = "/metrics";
export const healthPort = 8081;
/** Liveness: the process is not wedged (restart it otherwise). */
export const livenessPath = "/healthz";
/** Readiness: caches synced and, with leader election, able to work. */
export const readinessPath = "/readyz";
/** HTTPS admission webhooks (`--webhook-bind-address`); the webhook Service's port 443 targets it. */
export const webhookPort = 9443;
export const validatePath = "/validate";
export const mutatePath = "/mutate";
