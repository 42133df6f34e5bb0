/**
 * Who may hold the webhook port's connections. Anyone on the pod network can reach it, and the apiserver must
 * always get in: with failurePolicy Fail, a refused connection is a refused `kubectl apply` for every tenant.
 *
 * - One address holds at most `maxPerAddress` connections; more from it are closed as they come, before any TLS
 *   work, so one pod holding idle or half-open connections cannot take them all.
 * - At most `max` connections are open in all. At the ceiling a newcomer takes the place of an idle connection:
 *   one with nothing on it since its last answer (not a byte of a next request) for a second or more, of the
 *   address that holds the most such connections, the longest idle of them. Kept-alive connections stay open 120 s
 *   after their last answer (the apiserver must be the one to close them), so without this a few pods sending one
 *   request per connection held the whole ceiling and shut admission. The apiserver keeps few idle connections (Go
 *   keeps a handful per host), so it is the largest idle holder only against an attacker spread over dozens of pods;
 *   only then can one of its idle connections be closed, and a request it starts on that connection in the same
 *   instant fails (Go does not retry a POST).
 * - When no connection is idle the newcomer is closed. A client that keeps requests open by sending their bodies
 *   slowly holds its connections until the 30 s request timeout; only a NetworkPolicy that admits the control plane
 *   alone closes that, where a platform can name the control plane's addresses.
 *
 * Counted by hand: net.Server's maxConnections is one ceiling that refuses newcomers whoever holds the rest.
 */
import type { Server } from "node:https";
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import type { Logger } from "pino";
import { realClock } from "../../kube/index.ts";

export interface ConnectionLimits {
  /** Connections open at once. */
  readonly max: number;
  /** Connections open at once from one address. */
  readonly maxPerAddress: number;
  /**
   * A connection idle for less than this is never closed for a newcomer: it may be about to carry a request.
   * @default 1000
   */
  readonly minIdleMs?: number;
}

/** At most one warning of each kind per this long, with how many it stands for. */
const warningIntervalMs = 10_000;

interface Held {
  readonly address: string;
  readonly socket: Socket;
  /** Bytes of a request came in since the last answer (or the answer is still being written). */
  active: boolean;
  /** When it last became idle (its start, or its last answer), on the monotonic clock. */
  idleSince: number;
}

/** Applies `limits` to the connections `server` accepts. */
export function limitConnections(server: Server, limits: ConnectionLimits, logger: Logger): void {
  // By the peer's address and port, which the TCP socket and the TLS socket over it share.
  const held = new Map<string, Held>();
  const perAddress = new Map<string, number>();
  const warnOverAddressLimit = throttledWarning(logger, "webhook connections from one address over the limit");
  const warnAllBusy = throttledWarning(logger, "webhook connections at the limit and none idle: a newcomer closed");
  const warnReplaced = throttledWarning(logger, "webhook connections at the limit: an idle one closed for a newcomer");

  const release = (id: string, connection: Held) => {
    if (held.get(id) !== connection) return;
    held.delete(id);
    const left = (perAddress.get(connection.address) ?? 1) - 1;
    if (left > 0) perAddress.set(connection.address, left);
    else perAddress.delete(connection.address);
  };

  server.on("connection", (socket: Socket) => {
    const { remoteAddress: address, remotePort: port } = socket;
    // Reset before it was accepted: nothing to serve or count.
    if (address === undefined || port === undefined) {
      socket.destroy();
      return;
    }
    if ((perAddress.get(address) ?? 0) >= limits.maxPerAddress) {
      warnOverAddressLimit({ address, max: limits.maxPerAddress });
      socket.destroy();
      return;
    }
    if (held.size >= limits.max) {
      const victim = idlestOfLargestIdleHolder(held, realClock.monotonicMs() - (limits.minIdleMs ?? 1_000));
      if (!victim) {
        warnAllBusy({ max: limits.max });
        socket.destroy();
        return;
      }
      warnReplaced({ address: victim[1].address, max: limits.max });
      release(...victim);
      victim[1].socket.destroy();
    }
    const id = `${address}:${port}`;
    const connection: Held = { address, socket, active: false, idleSince: realClock.monotonicMs() };
    held.set(id, connection);
    perAddress.set(address, (perAddress.get(address) ?? 0) + 1);
    socket.once("close", () => release(id, connection));
  });

  // A connection is busy from the first byte of a request to the end of its answer, so one whose next request is
  // on its way is never taken for idle.
  server.on("secureConnection", (tls: TLSSocket) => {
    const connection = held.get(`${tls.remoteAddress ?? ""}:${tls.remotePort ?? ""}`);
    if (!connection) return;
    tls.on("data", () => {
      connection.active = true;
    });
  });
  server.on("request", (req, res) => {
    const connection = held.get(`${req.socket.remoteAddress ?? ""}:${req.socket.remotePort ?? ""}`);
    if (!connection) return;
    res.once("close", () => {
      connection.active = false;
      connection.idleSince = realClock.monotonicMs();
    });
  });
}

/**
 * The connection to close for a newcomer: idle since `idleBefore` or earlier, of the address that holds the most
 * such connections, the longest idle of those.
 */
function idlestOfLargestIdleHolder(held: ReadonlyMap<string, Held>, idleBefore: number): [string, Held] | undefined {
  const idle = [...held].filter(([, connection]) => !connection.active && connection.idleSince <= idleBefore);
  const idleByAddress = new Map<string, number>();
  for (const [, connection] of idle) {
    idleByAddress.set(connection.address, (idleByAddress.get(connection.address) ?? 0) + 1);
  }
  let chosen: [string, Held] | undefined;
  for (const entry of idle) {
    const holds = idleByAddress.get(entry[1].address) ?? 0;
    const chosenHolds = chosen ? (idleByAddress.get(chosen[1].address) ?? 0) : -1;
    if (holds > chosenHolds || (holds === chosenHolds && chosen && entry[1].idleSince < chosen[1].idleSince)) {
      chosen = entry;
    }
  }
  return chosen;
}

/** A warning logged at most once per interval, with the number of times it happened since the last line. */
function throttledWarning(logger: Logger, message: string): (fields: Record<string, unknown>) => void {
  let lastAt: number | undefined;
  let since = 0;
  return (fields) => {
    since++;
    const now = realClock.monotonicMs();
    if (lastAt !== undefined && now - lastAt < warningIntervalMs) return;
    logger.warn({ ...fields, times: since }, message);
    lastAt = now;
    since = 0;
  };
}
