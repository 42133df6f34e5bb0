/**
 * A preload (`node --import`) that records every HTTP request a process sends through undici, as one JSON line
 * per request in the file MYAPP_RECORD_REQUESTS: method, path (with query) and response status. It subscribes to
 * undici's diagnostics channels, so the recorded process runs its own unmodified code: this is how the
 * least-privilege test sees exactly what the real operator calls. See rbac-requests.ts for turning lines into
 * RBAC verbs.
 */
import { appendFileSync } from "node:fs";
import { subscribe } from "node:diagnostics_channel";

interface UndiciRequest {
  readonly method: string;
  readonly path: string;
}

const file = process.env.MYAPP_RECORD_REQUESTS;
if (file) {
  // The status arrives with the headers; a request that never gets an answer is recorded with status 0 and the
  // error that ended it. Times are ms since the process started (sent: headers written; answered: status or error);
  // port is the local port of the connection it went on, so requests that share a connection can be told apart.
  interface Pending {
    readonly method: string;
    readonly path: string;
    sentAt?: number;
    port?: number;
  }
  const pending = new WeakMap<object, Pending>();
  const now = () => Math.round(performance.now());
  const record = (entry: Pending, fields: Record<string, unknown>) =>
    appendFileSync(file, `${JSON.stringify({ ...entry, ...fields, answeredAt: now() })}\n`);
  subscribe("undici:request:create", (message) => {
    const { request } = message as { request: UndiciRequest };
    pending.set(request, { method: request.method, path: request.path });
  });
  subscribe("undici:client:sendHeaders", (message) => {
    const { request, socket } = message as { request: UndiciRequest; socket: { localPort?: number } };
    const entry = pending.get(request);
    if (!entry) return;
    entry.sentAt = now();
    if (socket.localPort !== undefined) entry.port = socket.localPort;
  });
  subscribe("undici:request:headers", (message) => {
    const { request, response } = message as { request: UndiciRequest; response: { statusCode: number } };
    const entry = pending.get(request) ?? { method: request.method, path: request.path };
    pending.delete(request);
    record(entry, { status: response.statusCode });
  });
  subscribe("undici:request:error", (message) => {
    const { request, error } = message as { request: UndiciRequest; error: unknown };
    const entry = pending.get(request);
    if (!entry) return;
    pending.delete(request);
    record(entry, { status: 0, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
  });
}
