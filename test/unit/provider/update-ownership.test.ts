/**
 * What update writes when the spec is the same: nothing for new credentials or a new timeout (they live in the
 * state), the ownership annotations for a renamed stack or resource (else the object keeps the old name's marker,
 * and a later resource of that name adopts it without a word). A local HTTP server stands in for the apiserver:
 * one Ready instance, its GET and its server-side apply, which answers the apply's reconcile request at once.
 */
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { test, type TestContext } from "node:test";
import { standIn } from "./stand-in-apiserver.ts";
import { update } from "../../../provider/impl.ts";

const path = "/apis/example.com/v1/namespaces/shop/myappinstances/web-1";
const stackAnnotation = "myapp.example.com/pulumi-stack";
const resourceAnnotation = "myapp.example.com/pulumi-resource";

interface Live {
  metadata: Record<string, unknown> & { annotations: Record<string, string>; generation: number };
  spec: Record<string, unknown>;
  status: Record<string, unknown>;
}

function ready(live: Live, request?: string): Live["status"] {
  return {
    observedGeneration: live.metadata.generation,
    ...(request !== undefined ? { lastHandledReconcileAt: request } : {}),
    conditions: [
      {
        type: "Ready",
        status: "True",
        reason: "Ready",
        message: "",
        lastTransitionTime: "2026-01-01T00:00:00Z",
        observedGeneration: live.metadata.generation,
      },
    ],
  };
}

async function apiserver(t: TestContext) {
  const live: Live = {
    metadata: {
      name: "web-1",
      namespace: "shop",
      uid: "u-1",
      generation: 2,
      resourceVersion: "7",
      annotations: { [stackAnnotation]: "organization/shop/dev", [resourceAnnotation]: "web" },
    },
    spec: { image: "nginx:1.27", replicas: 1, port: 8080, storageReclaimPolicy: "Retain" },
    status: {},
  };
  live.status = ready(live);
  const applies: Live[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      const answer = (code: number, value: unknown) => {
        response.writeHead(code, { "content-type": "application/json" });
        response.end(JSON.stringify(value));
      };
      const url = new URL(request.url ?? "", "http://apiserver");
      if (url.pathname === "/api/v1/namespaces/kube-system") return answer(200, { metadata: { uid: "ks-1" } });
      if (url.pathname === path && request.method === "GET") return answer(200, live);
      if (url.pathname === path && request.method === "PATCH") {
        const applied = JSON.parse(body) as Live;
        applies.push(applied);
        Object.assign(live.metadata.annotations, applied.metadata.annotations);
        live.metadata.generation += 1;
        live.metadata.resourceVersion = String(Number(live.metadata.resourceVersion) + 1);
        live.status = ready(live, applied.metadata.annotations["myapp.example.com/reconcile-requested-at"]);
        return answer(200, live);
      }
      answer(404, { kind: "Status", code: 404, reason: "NotFound", message: "not found" });
    });
  });
  const { url, kubeconfig } = await standIn(t, server);
  const olds = {
    name: "web-1",
    namespace: "shop",
    image: "nginx:1.27",
    replicas: 1,
    port: 8080,
    storageReclaimPolicy: "Retain",
    kubeconfig,
    timeoutSeconds: 600,
    owner: "organization/shop/dev",
    logicalName: "web",
    uid: "u-1",
    cluster: { server: url, uid: "ks-1" },
  };
  return { live, applies, olds };
}

test("update: a new timeout is stored and nothing is written to the cluster", async (t) => {
  const { applies, olds } = await apiserver(t);
  const { outs } = await update("shop/web-1", olds, { ...olds, timeoutSeconds: 3600 });
  assert.equal(outs.timeoutSeconds, 3600);
  assert.equal(applies.length, 0);
});

test("update: a renamed stack or resource moves the object's ownership annotations with it", async (t) => {
  const { live, applies, olds } = await apiserver(t);
  // GIVEN the same spec under another stack name, then another resource name (an alias)
  const renamed = { ...olds, owner: "organization/shop/prod" };
  const { outs } = await update("shop/web-1", olds, renamed);
  // THEN the object is applied with the new marker, not left with the old one
  assert.equal(applies.length, 1);
  assert.equal(live.metadata.annotations[stackAnnotation], "organization/shop/prod");
  assert.equal(outs.owner, "organization/shop/prod");
  await update("shop/web-1", { ...renamed, ...outs }, { ...renamed, logicalName: "frontend" });
  assert.equal(applies.length, 2);
  assert.equal(live.metadata.annotations[resourceAnnotation], "frontend");
});
