/**
 * Who may hold the webhook port's connections. Anyone on the pod network can reach it, and the apiserver must
 * always get in: with failurePolicy Fail, a refused connection is a refused `kubectl apply` for every tenant.
 *
 * - One address holds at most `maxPerAddress` connections; more from it are closed as they come, before any TLS
 *   work, so one pod holding idle or half-open connections cannot take them all.
 * - At most `max` connections are open in all. At the ceiling a newcomer takes the place of an idle connection
 *   (no request in flight) of the address that holds the most, the longest idle of them; only when every
 *   connection has a request in flight is the newcomer closed. Kept-alive connections stay open 120 s after their
 *   last answer (the apiserver must be the one to close them), so a few pods sending one request per connection
 *   could otherwise hold the whole ceiling and shut admission: an apiserver's own connections carry requests and
 *   are rarely the idlest of the largest holder.
 *
 * Counted by hand: net.Server's maxConnections is one ceiling that refuses newcomers whoever holds the rest.
 */
import type { Server } from "node:https";
import type { Socket } from "node:net";
import type { Logger } from "pino";
import { realClock } from "../../kube/index.ts";

export interface ConnectionLimits {
  /** Connections open at once. */
  readonly max: number;
  /** Connections open at once from one address. */
  readonly maxPerAddress: number;
}

interface Held {
  readonly address: string;
  readonly socket: Socket;
  /** Requests on this connection not yet answered. */
  inFlight: number;
  /** When it last had nothing in flight (its start, or its last answer), on the monotonic clock. */
  idleSince: number;
}

/** Applies `limits` to the connections `server` accepts. */
export function limitConnections(server: Server, limits: ConnectionLimits, logger: Logger): void {
  // By the peer's address and port, which the TCP socket and the TLS socket over it share.
  const held = new Map<string, Held>();
  const perAddress = new Map<string, number>();
  // One log line per burst, not per connection: a flood would otherwise flood the log too.
  let refusedInARow = 0;
  let replacedInARow = 0;

  const release = (id: string, connection: Held) => {
    if (held.get(id) !== connection) return;
    held.delete(id);
    const left = (perAddress.get(connection.address) ?? 1) - 1;
    if (left > 0) perAddress.set(connection.address, left);
    else perAddress.delete(connection.address);
  };

  server.on("connection", (socket: Socket) => {
    const address = socket.remoteAddress ?? "";
    if ((perAddress.get(address) ?? 0) >= limits.maxPerAddress) {
      if (refusedInARow++ === 0) {
        logger.warn({ address, max: limits.maxPerAddress }, "webhook connections from one address over the limit");
      }
      socket.destroy();
      return;
    }
    if (held.size >= limits.max) {
      const victim = idlestOfLargestHolder(held.entries(), perAddress);
      if (!victim) {
        if (refusedInARow++ === 0) logger.warn({ max: limits.max }, "webhook connections at the limit, all busy");
        socket.destroy();
        return;
      }
      if (replacedInARow++ === 0) {
        logger.warn(
          { address: victim[1].address, max: limits.max },
          "webhook connections at the limit: closed an idle one",
        );
      }
      release(...victim);
      victim[1].socket.destroy();
    } else replacedInARow = 0;
    refusedInARow = 0;
    const id = connectionId(socket);
    const connection: Held = { address, socket, inFlight: 0, idleSince: realClock.monotonicMs() };
    held.set(id, connection);
    perAddress.set(address, (perAddress.get(address) ?? 0) + 1);
    socket.once("close", () => release(id, connection));
  });

  server.on("request", (req, res) => {
    const connection = held.get(connectionId(req.socket));
    if (!connection) return;
    connection.inFlight++;
    res.once("close", () => {
      connection.inFlight--;
      connection.idleSince = realClock.monotonicMs();
    });
  });
}

function connectionId(socket: Socket): string {
  return `${socket.remoteAddress ?? ""}:${socket.remotePort ?? ""}`;
}

/** The connection to close for a newcomer: idle, of the address holding the most, the longest idle of those. */
function idlestOfLargestHolder(
  held: Iterable<[string, Held]>,
  perAddress: ReadonlyMap<string, number>,
): [string, Held] | undefined {
  let chosen: [string, Held] | undefined;
  let chosenHolds = 0;
  for (const entry of held) {
    const [, connection] = entry;
    if (connection.inFlight > 0) continue;
    const holds = perAddress.get(connection.address) ?? 0;
    if (!chosen || holds > chosenHolds || (holds === chosenHolds && connection.idleSince < chosen[1].idleSince)) {
      chosen = entry;
      chosenHolds = holds;
    }
  }
  return chosen;
}
