/**
 * Who may hold a server's connections. Anyone on the pod network can reach the operator's ports, and some clients
 * must always get in: the apiserver at the admission webhook (with failurePolicy Fail, a refused connection is a
 * refused `kubectl apply` for every tenant), the kubelet at the probe port (a probe that times out three times
 * restarts the operator, and a failed readiness probe takes its webhooks out of the Service), Prometheus at /metrics.
 *
 * - At most `max` connections are open in all, and at most `maxPerAddress` from one address.
 * - What may make room for a newcomer depends on `replace`:
 *   - `"idle"` (the webhook's): only a connection with nothing on it since its last answer (not a byte of a next
 *     request) for `minIdleMs` or more. One address over its own limit has its newcomers closed as they come,
 *     before any TLS work, so one pod holding idle or half-open connections cannot take them all. At the ceiling a
 *     newcomer takes the place of an idle connection of the address that holds the most such connections, the
 *     longest idle of them. Kept-alive connections stay open 120 s after their last answer (the apiserver must be
 *     the one to close them), so without this a few pods sending one request per connection held the whole ceiling
 *     and shut admission. The apiserver keeps few idle connections (Go keeps a handful per host), so it is the
 *     largest idle holder only against an attacker spread over dozens of pods; only then can one of its idle
 *     connections be closed, and a request it starts on that connection in the same instant fails (Go does not
 *     retry a POST). When no connection is idle the newcomer is closed: a client that keeps requests open by
 *     sending their bodies slowly holds its connections until the 30 s request timeout; only a NetworkPolicy that
 *     admits the control plane alone closes that, where a platform can name the control plane's addresses.
 *   - `"unanswered"` (the probe and metrics ports'): any connection not carrying a request being answered: idle
 *     after an answer, or a request whose headers have not all come (a slowloris). The kubelet and Prometheus send a
 *     whole GET at once, and every request there is answered at once, so whatever has not finished its request is
 *     waiting on its client, and its client is the one to pay. At an address's own limit the newcomer takes the
 *     place of that address's connection waiting longest; at the ceiling, of the address holding the most such
 *     connections. A newcomer is closed only when every connection it could replace is being answered or has just come. So a pod that
 *     floods the port with connections it never finishes (and reconnects as soon as one is closed) only ever
 *     replaces its own; a new probe from another address always finds room.
 * - The newest connections are the last to go, and no connection accepted in this or the previous turn of the
 *   event loop goes at all: its request may be in the socket, not read yet. This is what keeps a probe that shares
 *   its address with a flood (a hostNetwork pod on the kubelet's node; every client of a test on 127.0.0.1): the
 *   flood's connections are replaced oldest first, the probe's request is read within a turn (Node accepts one
 *   connection per turn), and a connection whose request is being answered is never replaced. The address is
 *   not a way to tell them apart there, what a client has done on its connection is. Connections kept for their
 *   turn can take an address over its limit for that turn, never the server over `max`.
 *
 * Counted by hand: net.Server's maxConnections is one ceiling that refuses newcomers whoever holds the rest.
 */
import type { Server as HttpServer } from "node:http";
import type { Server as HttpsServer } from "node:https";
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import type { Logger } from "pino";
import { realClock } from "../../kube/index.ts";

export interface ConnectionLimits {
  /** Connections open at once. */
  readonly max: number;
  /** Connections open at once from one address (a turn's newcomers aside, see above). */
  readonly maxPerAddress: number;
  /**
   * What may make room for a newcomer (see above). `"idle"` refuses newcomers over an address's limit;
   * `"unanswered"` replaces one of that address's connections.
   * @default "idle"
   */
  readonly replace?: "idle" | "unanswered";
  /**
   * A connection idle (or, with `replace: "unanswered"`, waiting on its client) for less than this is never
   * closed for a newcomer.
   * @default 1000
   */
  readonly minIdleMs?: number;
  /** What the warnings call the server. @default "webhook" */
  readonly name?: string;
}

/** At most one warning of each kind per this long, with how many it stands for. */
const warningIntervalMs = 10_000;

/** What the limits know of one open connection. */
export interface HeldConnection {
  readonly address: string;
  /** Bytes of a next request came in since the last answer (TLS connections only: see limitConnections). */
  received: boolean;
  /** Its request's headers are all in and its answer is not finished. */
  answering: boolean;
  /** Accepted in this or the previous turn of the event loop: a request it sent may not have been read yet. */
  fresh: boolean;
  /** When it was accepted, or its last answer finished, on the monotonic clock. */
  since: number;
}

/** What to do with a newcomer from `address`: let it in, in place of `replace` if given, or close it. */
export type Admission<T> =
  { readonly admit: true; readonly replace?: T } | { readonly admit: false; readonly reason: "address" | "busy" };

/**
 * The limits' decision for a newcomer from `address`, given the connections open now (`held`) and how many each
 * address holds (`perAddress`). Pure.
 */
export function admission<T extends HeldConnection>(
  held: Iterable<T>,
  perAddress: ReadonlyMap<string, number>,
  address: string,
  limits: ConnectionLimits,
  nowMs: number,
): Admission<T> {
  const replace = limits.replace ?? "idle";
  const waitedSince = nowMs - (limits.minIdleMs ?? 1_000);
  const replaceable = (connection: T) =>
    !connection.fresh &&
    !connection.answering &&
    (replace === "unanswered" || !connection.received) &&
    connection.since <= waitedSince;
  const all = [...held];
  const total = all.length;
  if ((perAddress.get(address) ?? 0) >= limits.maxPerAddress) {
    if (replace === "idle") return { admit: false, reason: "address" };
    const victim = longestWaiting(all.filter((c) => c.address === address && replaceable(c)));
    if (victim) return { admit: true, replace: victim };
    // Its own are all fresh or being answered: in over the address's limit for a turn, but never in place of
    // another address's connection.
    return total < limits.max ? { admit: true } : { admit: false, reason: "address" };
  }
  if (total < limits.max) return { admit: true };
  const victim = longestWaitingOfLargestHolder(all.filter(replaceable));
  return victim ? { admit: true, replace: victim } : { admit: false, reason: "busy" };
}

function longestWaiting<T extends HeldConnection>(candidates: readonly T[]): T | undefined {
  let chosen: T | undefined;
  for (const connection of candidates) if (!chosen || connection.since < chosen.since) chosen = connection;
  return chosen;
}

/** Of the address that holds the most `candidates`, the one waiting longest. */
function longestWaitingOfLargestHolder<T extends HeldConnection>(candidates: readonly T[]): T | undefined {
  const byAddress = new Map<string, number>();
  for (const connection of candidates) byAddress.set(connection.address, (byAddress.get(connection.address) ?? 0) + 1);
  let chosen: T | undefined;
  for (const connection of candidates) {
    const holds = byAddress.get(connection.address) ?? 0;
    const chosenHolds = chosen ? (byAddress.get(chosen.address) ?? 0) : -1;
    if (holds > chosenHolds || (holds === chosenHolds && chosen && connection.since < chosen.since)) {
      chosen = connection;
    }
  }
  return chosen;
}

interface Held extends HeldConnection {
  readonly socket: Socket;
  /** Its key in `held`, as it was accepted. */
  readonly id: string;
}

/** Applies `limits` to the connections `server` accepts. */
export function limitConnections(server: HttpServer | HttpsServer, limits: ConnectionLimits, logger: Logger): void {
  const name = limits.name ?? "webhook";
  // By the peer's address and port, which the TCP socket and the TLS socket over it share.
  const held = new Map<string, Held>();
  const perAddress = new Map<string, number>();
  const warnOverAddressLimit = throttledWarning(logger, `${name} connections from one address over the limit`);
  const warnAllBusy = throttledWarning(logger, `${name} connections at the limit and none idle: a newcomer closed`);
  const warnReplaced = throttledWarning(
    logger,
    limits.replace === "unanswered"
      ? `${name} connections at the limit: the one waiting longest on its client closed for a newcomer`
      : `${name} connections at the limit: an idle one closed for a newcomer`,
  );

  const release = (id: string, connection: Held) => {
    if (held.get(id) !== connection) return;
    held.delete(id);
    const left = (perAddress.get(connection.address) ?? 1) - 1;
    if (left > 0) perAddress.set(connection.address, left);
    else perAddress.delete(connection.address);
  };
  const idOf = (socket: { remoteAddress?: string | undefined; remotePort?: number | undefined }) =>
    `${socket.remoteAddress ?? ""}:${socket.remotePort ?? ""}`;

  server.on("connection", (socket: Socket) => {
    const { remoteAddress: address, remotePort: port } = socket;
    // Reset before it was accepted: nothing to serve or count.
    if (address === undefined || port === undefined) {
      socket.destroy();
      return;
    }
    const verdict = admission(held.values(), perAddress, address, limits, realClock.monotonicMs());
    if (!verdict.admit) {
      if (verdict.reason === "address") warnOverAddressLimit({ address, max: limits.maxPerAddress });
      else warnAllBusy({ max: limits.max });
      socket.destroy();
      return;
    }
    if (verdict.replace) {
      const victim = verdict.replace as Held;
      warnReplaced({
        address: victim.address,
        newcomer: address,
        max: limits.max,
        maxPerAddress: limits.maxPerAddress,
      });
      release(victim.id, victim);
      victim.socket.destroy();
    }
    const id = `${address}:${port}`;
    const connection: Held = {
      id,
      address,
      socket,
      received: false,
      answering: false,
      fresh: true,
      since: realClock.monotonicMs(),
    };
    held.set(id, connection);
    perAddress.set(address, (perAddress.get(address) ?? 0) + 1);
    socket.once("close", () => release(id, connection));
    // An immediate set from inside an immediate runs in the next turn, after that turn's reads (the poll phase).
    setImmediate(() => setImmediate(() => (connection.fresh = false)));
  });

  // A TLS connection has received from the first byte of a request to the end of its answer, so one whose next
  // request is on its way is never taken for idle. (A plain HTTP socket's bytes go to the parser without a 'data'
  // event; "unanswered" does not need them.)
  server.on("secureConnection", (tls: TLSSocket) => {
    const connection = held.get(idOf(tls));
    if (!connection) return;
    tls.on("data", () => {
      connection.received = true;
    });
  });
  // Before the server's own handler, which may answer at once.
  server.prependListener(
    "request",
    (req: { socket: Socket }, res: { once(event: "close", listener: () => void): unknown }) => {
      const connection = held.get(idOf(req.socket));
      if (!connection) return;
      connection.answering = true;
      res.once("close", () => {
        connection.answering = false;
        connection.received = false;
        connection.since = realClock.monotonicMs();
      });
    },
  );
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
