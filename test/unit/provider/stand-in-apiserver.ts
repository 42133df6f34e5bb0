/**
 * A local HTTP server standing in for the apiserver in the provider's unit tests: listening until the test ends,
 * and the kubeconfig (a bearer token, plain HTTP) that reaches it.
 */
import type { Server } from "node:http";
import type { TestContext } from "node:test";
import { stringify } from "yaml";

/** Starts `server` on a free local port, closed (its connections too) when `t` ends; its URL and kubeconfig. */
export async function standIn(t: TestContext, server: Server): Promise<{ url: string; kubeconfig: string }> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as { port: number };
  const url = `http://127.0.0.1:${port}`;
  return { url, kubeconfig: kubeconfigFor(url) };
}

/** A kubeconfig whose current context reaches `server` with a bearer token. */
export function kubeconfigFor(server: string, options: { name?: string; insecure?: boolean } = {}): string {
  const name = options.name ?? "c";
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name, cluster: { server, ...(options.insecure ? { "insecure-skip-tls-verify": true } : {}) } }],
    users: [{ name: "u", user: { token: "t" } }],
    contexts: [{ name, context: { cluster: name, user: "u" } }],
    "current-context": name,
  });
}
