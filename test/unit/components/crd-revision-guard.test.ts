/**
 * The CRD downgrade guard (components/crd-revision-guard.ts): what the component does with its CRD given the live
 * one's schema revision, and the read of that revision.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it, type TestContext } from "node:test";
import { crdName, crdRevision, crdRevisionAnnotation } from "../../../api/index.ts";
import { loadCrdManifest } from "../../../components/crd.ts";
import {
  crdRevisionOf,
  crdRevisionVerdict,
  parseCrdRevision,
  readLiveCrdRevision,
} from "../../../components/crd-revision-guard.ts";

const subject = 'MyAppOperator "shop-platform"';

describe("crdRevisionVerdict", () => {
  it("applies over no CRD, or one an older build applied without the annotation", () => {
    assert.deepEqual(crdRevisionVerdict(subject, 3, undefined), { verdict: "apply" });
  });

  it("applies over a lower or the same revision", () => {
    assert.deepEqual(crdRevisionVerdict(subject, 3, "2"), { verdict: "apply" });
    assert.deepEqual(crdRevisionVerdict(subject, 3, "3"), { verdict: "apply" });
  });

  it("refuses a higher revision, naming both and what to do instead", () => {
    const verdict = crdRevisionVerdict(subject, 3, "4");
    assert.equal(verdict.verdict, "refuse");
    const message = "message" in verdict ? verdict.message : "";
    assert.ok(
      message.startsWith(
        `${subject}: the cluster's CRD ${crdName} is at schema revision 4 (annotation ${crdRevisionAnnotation}), ` +
          "newer than this myapp-platform package's revision 3:",
      ),
      message,
    );
    assert.match(message, /a platform on this cluster runs a newer build/);
    assert.match(message, /drop fields its operator writes/);
    assert.match(message, /Upgrade this project's myapp-platform to that build/);
    assert.match(message, /`npm install \.\/myapp-platform-VERSION\.tgz`, then `pulumi up`/);
    assert.match(message, /A shared CRD is never downgraded/);
    assert.match(message, /`kubectl annotate crd myappinstances\.example\.com myapp\.example\.com\/schema-revision-`/);
  });

  it("compares numbers, not text", () => {
    assert.equal(crdRevisionVerdict(subject, 9, "10").verdict, "refuse");
    assert.equal(crdRevisionVerdict(subject, 10, "9").verdict, "apply");
  });

  it("applies over a value that is no revision, with a warning that quotes it", () => {
    for (const live of ["", "two", "0", "-1", "1.5", " 4", "04", "99999999999"]) {
      const verdict = crdRevisionVerdict(subject, 3, live);
      assert.equal(verdict.verdict, "warn", JSON.stringify(live));
      assert.match("message" in verdict ? verdict.message : "", /which is no schema revision; applying/);
    }
  });
});

describe("parseCrdRevision and crdRevisionOf", () => {
  it("read whole numbers from 1 as the annotation writes them, nothing else", () => {
    assert.equal(parseCrdRevision("1"), 1);
    assert.equal(parseCrdRevision("42"), 42);
    for (const text of [undefined, "", "0", "01", "1e3", "+1", "0x10", "1 "]) {
      assert.equal(parseCrdRevision(text), undefined, JSON.stringify(text));
    }
  });

  it("finds this package's revision on the generated manifest, none on one without the annotation", () => {
    const manifest = loadCrdManifest();
    assert.equal(crdRevisionOf(manifest), crdRevision);
    assert.equal(crdRevisionOf({ ...manifest, metadata: { name: crdName } }), undefined);
  });
});

describe("readLiveCrdRevision", () => {
  /** An apiserver that answers GETs of the CRD with `answer`, on plain HTTP. */
  async function apiserver(t: TestContext, answer: (request: IncomingMessage, response: ServerResponse) => void) {
    const paths: string[] = [];
    const server = createServer((request, response) => {
      paths.push(request.url ?? "");
      answer(request, response);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    const kubeconfig = [
      "apiVersion: v1",
      "kind: Config",
      `clusters: [{ name: c, cluster: { server: "http://127.0.0.1:${port}" } }]`,
      "users: [{ name: u, user: { token: t } }]",
      "contexts: [{ name: x, context: { cluster: c, user: u } }]",
      "current-context: x",
    ].join("\n");
    return { connection: { kubeconfig, source: "a test kubeconfig" }, paths };
  }
  const json = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { "content-type": "application/json" });
    response.end(JSON.stringify(body));
  };

  it("reads the annotation of the live CRD, by name", async (t) => {
    const { connection, paths } = await apiserver(t, (_, response) =>
      json(response, 200, {
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: crdName, annotations: { [crdRevisionAnnotation]: "7" } },
      }),
    );
    assert.deepEqual(await readLiveCrdRevision(connection), { revision: "7" });
    assert.deepEqual(paths, [`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crdName}`]);
  });

  it("finds no revision on a CRD without the annotation, or no CRD at all", async (t) => {
    let found = true;
    const { connection } = await apiserver(t, (_, response) =>
      found
        ? json(response, 200, { apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: {} })
        : json(response, 404, { kind: "Status", apiVersion: "v1", status: "Failure", reason: "NotFound", code: 404 }),
    );
    assert.deepEqual(await readLiveCrdRevision(connection), { revision: undefined });
    found = false;
    assert.deepEqual(await readLiveCrdRevision(connection), { revision: undefined });
  });

  it("says why when it cannot read the CRD (then the component applies as before)", async (t) => {
    const { connection } = await apiserver(t, (_, response) =>
      json(response, 403, { kind: "Status", apiVersion: "v1", status: "Failure", reason: "Forbidden", code: 403 }),
    );
    assert.ok("unavailable" in (await readLiveCrdRevision(connection)));
    assert.deepEqual(await readLiveCrdRevision({ kubeconfig: undefined, source: "KUBECONFIG" }), {
      unavailable: "no kubeconfig (KUBECONFIG)",
    });
  });
});
