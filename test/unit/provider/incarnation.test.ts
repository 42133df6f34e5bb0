/**
 * The object a state entry may delete is the one it created or adopted last (its incarnation): remove leaves alone
 * one a later create took over, a refresh does not hand an old entry the object's token, a busy object is deleted
 * once its status writes let a delete at its version through, and the namespace check of a platform's instances.
 * A local HTTP server stands in for the apiserver: one instance, its GET, list and DELETE (with preconditions).
 */
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { describe, it, type TestContext } from "node:test";
import { standIn } from "./stand-in-apiserver.ts";
import { check, read, remove } from "../../../provider/impl.ts";

const owner = "organization/shop/dev";
const path = "/apis/example.com/v1/namespaces/shop/myappinstances/web-1";

interface Instance {
  metadata: { uid: string; resourceVersion: string; annotations: Record<string, string> } & Record<string, unknown>;
}

/** The apiserver with `instance` (or none); each GET moves its resourceVersion on `busyReads` more times. */
async function apiserver(t: TestContext, instance: Instance | undefined) {
  const state = { instance, deletes: 0, busyReads: 0 };
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      const answer = (code: number, value: unknown) => {
        response.writeHead(code, { "content-type": "application/json" });
        response.end(JSON.stringify(value));
      };
      const url = new URL(request.url ?? "", "http://apiserver");
      const missing = { kind: "Status", code: 404, reason: "NotFound", message: "not found" };
      if (url.pathname === "/api/v1/namespaces/kube-system") return answer(200, { metadata: { uid: "ks-1" } });
      if (url.pathname === path && request.method === "GET") {
        if (!state.instance) return answer(404, missing);
        const copy = structuredClone(state.instance);
        // The operator writes its status right after: the version read is already old.
        if (state.busyReads > 0) {
          state.busyReads--;
          state.instance.metadata.resourceVersion = String(Number(state.instance.metadata.resourceVersion) + 1);
        }
        return answer(200, copy);
      }
      if (url.pathname === path && request.method === "DELETE") {
        if (!state.instance) return answer(404, missing);
        const { uid, resourceVersion } =
          (JSON.parse(body) as { preconditions?: Record<string, string> }).preconditions ?? {};
        const { metadata } = state.instance;
        if ((uid && uid !== metadata.uid) || (resourceVersion && resourceVersion !== metadata.resourceVersion)) {
          return answer(409, {
            kind: "Status",
            code: 409,
            reason: "Conflict",
            message: "the object has been modified",
          });
        }
        state.deletes++;
        state.instance = undefined;
        return answer(200, { kind: "Status", status: "Success" });
      }
      // The wait until it is gone starts from a list.
      if (url.pathname === path.slice(0, path.lastIndexOf("/")) && url.searchParams.get("watch") === null) {
        return answer(200, { metadata: { resourceVersion: "99" }, items: state.instance ? [state.instance] : [] });
      }
      answer(404, missing);
    });
  });
  const { kubeconfig } = await standIn(t, server);
  return { state, kubeconfig };
}

function stored(incarnation: string | undefined): Instance {
  return {
    apiVersion: "example.com/v1",
    kind: "MyAppInstance",
    metadata: {
      name: "web-1",
      namespace: "shop",
      uid: "u-1",
      generation: 1,
      resourceVersion: "10",
      annotations: {
        "myapp.example.com/pulumi-stack": owner,
        "myapp.example.com/pulumi-resource": "web",
        ...(incarnation !== undefined ? { "myapp.example.com/pulumi-incarnation": incarnation } : {}),
      },
    },
    spec: { image: "nginx:1.27", replicas: 1, port: 8080 },
    status: {},
  } as unknown as Instance;
}

/** A state entry of `web` for the object, as create stored it (with `incarnation`, when it has one). */
function entry(kubeconfig: string, incarnation: string | undefined) {
  return {
    name: "web-1",
    namespace: "shop",
    image: "nginx:1.27",
    replicas: 1,
    port: 8080,
    owner,
    logicalName: "web",
    kubeconfig,
    timeoutSeconds: 5,
    uid: "u-1",
    cluster: { server: "x", uid: "ks-1" },
    ...(incarnation !== undefined ? { incarnation } : {}),
  };
}

describe("remove: only the object this entry created or adopted last", () => {
  it("deletes the object with the entry's incarnation, and one written before incarnations by an entry without", async (t) => {
    for (const incarnation of ["i-1", undefined]) {
      const { state, kubeconfig } = await apiserver(t, stored(incarnation));
      await remove("shop/web-1", entry(kubeconfig, incarnation));
      assert.equal(state.deletes, 1, `incarnation ${incarnation}`);
    }
  });

  it("leaves alone one a later create took over, also for an entry written before incarnations", async (t) => {
    for (const incarnation of ["i-1", undefined]) {
      const { state, kubeconfig } = await apiserver(t, stored("i-3"));
      await remove("shop/web-1", entry(kubeconfig, incarnation));
      assert.equal(state.deletes, 0, `incarnation ${incarnation}`);
      assert.ok(state.instance);
    }
  });

  it("a refresh keeps the entry's own incarnation: the old entry still leaves the object alone after it", async (t) => {
    const { state, kubeconfig } = await apiserver(t, stored("i-3"));
    const refreshed = (await read("shop/web-1", entry(kubeconfig, "i-1"))) as { props?: Record<string, unknown> };
    assert.equal(refreshed.props?.["incarnation"], "i-1");
    await remove("shop/web-1", { ...refreshed.props, kubeconfig });
    assert.equal(state.deletes, 0);
  });

  it("deletes a busy object once a delete at the version it read goes through", async (t) => {
    const { state, kubeconfig } = await apiserver(t, stored("i-1"));
    state.busyReads = 3;
    await remove("shop/web-1", entry(kubeconfig, "i-1"));
    assert.equal(state.deletes, 1);
  });
});

describe("check: a platform's instance in a namespace its operator does not watch", () => {
  const platformNamespaces = { platform: "shop-platform", watched: ["shop"] };
  const news = { image: "nginx:1.27", owner, logicalName: "web", name: "web-1", previewing: false, platformNamespaces };

  it("refuses a new instance there, even while other inputs are not known yet", async () => {
    for (const image of ["nginx:1.27", "04da6b54-80e4-46f7-96ec-b56ff0331ba9"]) {
      const checked = await check({}, { ...news, image, namespace: "default" });
      assert.match(
        checked.failures?.[0]?.reason ?? "",
        /not one shop-platform's operator watches \(watchNamespaces: shop\)/,
      );
    }
  });

  it("admits one already there, one in a watched namespace, and a namespace not known yet", async () => {
    const olds = { name: "web-1", namespace: "default" };
    assert.equal((await check(olds, { ...news, namespace: "default" })).failures, undefined);
    assert.equal((await check({}, { ...news, namespace: "shop" })).failures, undefined);
    const unknown = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
    assert.equal((await check({}, { ...news, namespace: unknown })).failures, undefined);
  });
});
