// Types of the undici modules kube/undici.ts imports by path: undici types its index only.
declare module "undici/lib/api/index.js" {
  const api: Record<"request" | "stream" | "pipeline" | "upgrade" | "connect", unknown>;
  export default api;
}
declare module "undici/lib/dispatcher/agent.js" {
  import type { Agent } from "undici";
  const AgentClass: typeof Agent;
  export default AgentClass;
}
declare module "undici/lib/dispatcher/dispatcher.js" {
  import type { Dispatcher } from "undici";
  const DispatcherClass: typeof Dispatcher;
  export default DispatcherClass;
}
declare module "undici/lib/dispatcher/proxy-agent.js" {
  import type { ProxyAgent } from "undici";
  const ProxyAgentClass: typeof ProxyAgent;
  export default ProxyAgentClass;
}
