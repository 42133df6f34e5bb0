/**
 * undici's Agent and ProxyAgent with their request API, without undici's index, which loads all of undici (fetch,
 * WebSocket, EventSource, mocks, cache stores, interceptors, SOCKS) for every operator and provider process, none
 * of which a cluster connection uses. Without it the operator loads in 228 ms instead of 248 and holds 2.6 MiB less
 * (resident, after a GC), the provider (once per pulumi command) in 126 ms instead of 148 and 4.3 MiB less. These
 * are the very modules the index assembles, by path: the version is pinned (package.json), and
 * test/unit/kube/undici.test.ts checks them against the index's, so an upgrade that moves them fails there.
 */
import type * as undici from "undici";
import api from "undici/lib/api/index.js";
import AgentClass from "undici/lib/dispatcher/agent.js";
import Dispatcher from "undici/lib/dispatcher/dispatcher.js";
import ProxyAgentClass from "undici/lib/dispatcher/proxy-agent.js";

// request() and the rest of the API are a mixin the index adds to every dispatcher; the same assignment here.
Object.assign(Dispatcher.prototype, api);

export const Agent: typeof undici.Agent = AgentClass;
export type Agent = undici.Agent;
export const ProxyAgent: typeof undici.ProxyAgent = ProxyAgentClass;
export type ProxyAgent = undici.ProxyAgent;
