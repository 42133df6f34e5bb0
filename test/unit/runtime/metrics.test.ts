import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { OperatorMetrics } from "../../../operator/runtime/metrics.ts";

describe("OperatorMetrics", () => {
  it("registers exactly controller-runtime's names plus the API write counter", async () => {
    const metrics = new OperatorMetrics();
    const names = (await metrics.registry.getMetricsAsJSON()).map((m) => m.name).sort();
    assert.deepEqual(names, [
      "controller_runtime_reconcile_errors_total",
      "controller_runtime_reconcile_time_seconds",
      "controller_runtime_reconcile_total",
      "controller_runtime_webhook_latency_seconds",
      "controller_runtime_webhook_requests_in_flight",
      "controller_runtime_webhook_requests_total",
      "leader_election_master_status",
      "myapp_operator_api_writes_total",
      "workqueue_adds_total",
      "workqueue_depth",
      "workqueue_queue_duration_seconds",
      "workqueue_retries_total",
      "workqueue_work_duration_seconds",
    ]);
  });

  it("times and counts each webhook request by path and code, as controller-runtime does", async () => {
    const metrics = new OperatorMetrics();
    metrics.webhooks.started("/validate");
    metrics.webhooks.finished("/validate", 200, 0.0007);
    metrics.webhooks.started("/validate");
    const text = await metrics.registry.metrics();
    assert.match(text, /controller_runtime_webhook_requests_total\{webhook="\/validate",code="200"\} 1/);
    assert.match(text, /controller_runtime_webhook_latency_seconds_bucket\{le="0.001",webhook="\/validate"\} 1/);
    assert.match(text, /controller_runtime_webhook_requests_in_flight\{webhook="\/validate"\} 1/);
  });

  it("labels the work queue's depth by priority with controller-runtime's numbers", async () => {
    const metrics = new OperatorMetrics();
    metrics.queue("c").depth({ normal: 2, low: 7 });
    const text = await metrics.registry.metrics();
    assert.match(text, /workqueue_depth\{name="c",priority="0"\} 2/);
    assert.match(text, /workqueue_depth\{name="c",priority="-100"\} 7/);
  });

  it("counts errors both in reconcile_total{result=error} and reconcile_errors_total", async () => {
    const metrics = new OperatorMetrics();
    metrics.registerController("c");
    metrics.reconciled("c", "error", 0.2);
    metrics.reconciled("c", "success", 0.1);
    const text = await metrics.registry.metrics();
    assert.match(text, /controller_runtime_reconcile_total\{controller="c",result="error"\} 1/);
    assert.match(text, /controller_runtime_reconcile_total\{controller="c",result="requeue"\} 0/);
    assert.match(text, /controller_runtime_reconcile_errors_total\{controller="c"\} 1/);
    assert.match(text, /controller_runtime_reconcile_time_seconds_count\{controller="c"\} 2/);
  });

  it("counts every API write the process sends, by verb and kind", async () => {
    const metrics = new OperatorMetrics();
    metrics.processApiWrite("apply", "Deployment");
    metrics.processApiWrite("apply", "Deployment");
    metrics.processApiWrite("patch", "MyAppInstance");
    metrics.processApiWrite("update", "Lease");
    const text = await metrics.registry.metrics();
    assert.match(text, /myapp_operator_api_writes_total\{verb="apply",kind="Deployment"\} 2/);
    assert.match(text, /myapp_operator_api_writes_total\{verb="patch",kind="MyAppInstance"\} 1/);
    assert.match(text, /myapp_operator_api_writes_total\{verb="update",kind="Lease"\} 1/);
  });
});
