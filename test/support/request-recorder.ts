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
  // The status arrives with the headers; a request that never gets an answer is recorded with status 0.
  const pending = new WeakMap<object, { method: string; path: string }>();
  subscribe("undici:request:create", (message) => {
    const { request } = message as { request: UndiciRequest };
    pending.set(request, { method: request.method, path: request.path });
  });
  subscribe("undici:request:headers", (message) => {
    const { request, response } = message as { request: UndiciRequest; response: { statusCode: number } };
    const seen = pending.get(request) ?? { method: request.method, path: request.path };
    pending.delete(request);
    appendFileSync(file, `${JSON.stringify({ ...seen, status: response.statusCode })}\n`);
  });
  subscribe("undici:request:error", (message) => {
    const { request } = message as { request: UndiciRequest };
    if (!pending.has(request)) return;
    pending.delete(request);
    appendFileSync(file, `${JSON.stringify({ method: request.method, path: request.path, status: 0 })}\n`);
  });
}
