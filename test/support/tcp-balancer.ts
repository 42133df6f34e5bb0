/**
 * A TCP balancer on 127.0.0.1, standing in for a Service in front of operator replicas outside the cluster: each
 * connection goes to the next backend that accepts it (round robin, skipping refused ones), bytes piped both ways.
 * TLS passes through untouched, so the apiserver verifies the replica's own certificate. Written by hand: a Service
 * needs no more than this, and no library does only this.
 */
import { connect, createServer, type Socket } from "node:net";
import type { TestContext } from "node:test";

export interface TcpBalancer {
  readonly port: number;
  /** Connections handed to each backend port so far. */
  readonly served: ReadonlyMap<number, number>;
}

/** Listens on 127.0.0.1:`port` (0: any free port) until the test ends, balancing over `backends()` at each connect. */
export async function startTcpBalancer(
  t: TestContext | { after(fn: () => Promise<void>): void },
  backends: () => readonly number[],
  port = 0,
): Promise<TcpBalancer> {
  const served = new Map<number, number>();
  const open = new Set<Socket>();
  let next = 0;
  const server = createServer((client) => {
    open.add(client);
    client.on("close", () => open.delete(client));
    client.pause();
    const ports = backends();
    const start = next++;
    const attempt = (tried: number) => {
      if (tried >= ports.length) {
        client.destroy();
        return;
      }
      const backendPort = ports[(start + tried) % ports.length]!;
      const backend = connect(backendPort, "127.0.0.1");
      const refused = () => {
        backend.destroy();
        attempt(tried + 1);
      };
      backend.once("error", refused);
      backend.once("connect", () => {
        backend.off("error", refused);
        served.set(backendPort, (served.get(backendPort) ?? 0) + 1);
        open.add(backend);
        backend.on("close", () => open.delete(backend));
        backend.on("error", () => client.destroy());
        client.on("error", () => backend.destroy());
        client.pipe(backend);
        backend.pipe(client);
        client.resume();
      });
    };
    attempt(0);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  t.after(async () => {
    for (const socket of open) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { port: (server.address() as { port: number }).port, served };
}
