/** What `npm run pulumi` and `npm run operator` say when the local setup they need is missing (after `npm run down`). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { missingLocalSetup } from "../../../tools/lib/local-setup.ts";

const all = { cluster: true, devStack: true };

test("after npm run down (no cluster, no dev stack): both named, and npm start, which makes them", () => {
  assert.equal(
    missingLocalSetup(all, { cluster: false, devStack: false }),
    "the local cluster is not up and the dev stack does not exist (yet, or since npm run down): npm start makes them",
  );
});

test("no cluster: said as npm run kubectl says it, with the kubeconfig it looked for", () => {
  assert.equal(
    missingLocalSetup({ cluster: true }, { cluster: false, devStack: false }),
    "the local cluster is not up (.local/kubeconfig does not exist): npm run cluster -- up, or npm start",
  );
  assert.match(missingLocalSetup(all, { cluster: false, devStack: true }) ?? "", /^the local cluster is not up \(/);
});

test("no dev stack on a running cluster: npm start creates it", () => {
  assert.equal(
    missingLocalSetup(all, { cluster: true, devStack: false }),
    "the dev stack does not exist (yet, or since npm run down): npm start creates it",
  );
});

test("nothing missing, or missing only what the command does not need: nothing to say", () => {
  assert.equal(missingLocalSetup(all, all), undefined);
  assert.equal(missingLocalSetup({ cluster: true }, { cluster: true, devStack: false }), undefined);
  assert.equal(missingLocalSetup({}, { cluster: false, devStack: false }), undefined);
});
