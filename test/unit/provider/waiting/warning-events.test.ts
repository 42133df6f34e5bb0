import assert from "node:assert/strict";
import { test } from "node:test";
import { summarizeWarnings, type CoreEvent } from "../../../../provider/waiting/warning-events.ts";

function event(kind: string, name: string, reason: string, at: string, extra: Partial<CoreEvent> = {}): CoreEvent {
  return {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: `${name}.${reason}` },
    involvedObject: { kind, name },
    reason,
    message: `${reason} happened`,
    type: "Warning",
    lastTimestamp: at,
    ...extra,
  };
}

test("the newest Warning events about the instance and the objects named after it, one line each", () => {
  const events = [
    event("ReplicaSet", "web-5d8f7", "FailedCreate", "2030-01-01T00:00:05Z", { count: 4 }),
    event("MyAppInstance", "web", "InvalidSpec", "2030-01-01T00:00:09Z"),
    event("PersistentVolumeClaim", "data-web-0", "ProvisioningFailed", "2030-01-01T00:00:07Z"),
    event("Pod", "web-5d8f7-abcde", "FailedScheduling", "2030-01-01T00:00:01Z", {
      lastTimestamp: null,
      eventTime: "2030-01-01T00:00:08Z",
    }),
    event("Deployment", "webshop", "Other", "2030-01-01T00:00:10Z"),
    event("Pod", "api-1", "FailedScheduling", "2030-01-01T00:00:11Z"),
    event("Pod", "web-5d8f7-zzzzz", "Pulled", "2030-01-01T00:00:12Z", { type: "Normal" }),
  ];
  assert.deepEqual(summarizeWarnings(events, "web"), [
    "Warning InvalidSpec MyAppInstance/web: InvalidSpec happened",
    "Warning FailedScheduling Pod/web-5d8f7-abcde: FailedScheduling happened",
    "Warning ProvisioningFailed PersistentVolumeClaim/data-web-0: ProvisioningFailed happened",
    "Warning FailedCreate ReplicaSet/web-5d8f7: FailedCreate happened (x4)",
  ]);
});

test("of repeated warnings about one object with one reason, only the newest", () => {
  const events = ["a", "b", "c"].map((pod, i) =>
    event("ReplicaSet", "web-5d8f7", "FailedCreate", `2030-01-01T00:00:0${i}Z`, {
      message: `pods "web-5d8f7-${pod}" is forbidden: exceeded quota`,
    }),
  );
  assert.deepEqual(summarizeWarnings(events, "web"), [
    'Warning FailedCreate ReplicaSet/web-5d8f7: pods "web-5d8f7-c" is forbidden: exceeded quota',
  ]);
});

test("at most `limit` lines", () => {
  const events = Array.from({ length: 9 }, (_, i) => event("Pod", `web-${i}`, "BackOff", `2030-01-01T00:00:0${i}Z`));
  const lines = summarizeWarnings(events, "web", 3);
  assert.deepEqual(lines, [
    "Warning BackOff Pod/web-8: BackOff happened",
    "Warning BackOff Pod/web-7: BackOff happened",
    "Warning BackOff Pod/web-6: BackOff happened",
  ]);
});
