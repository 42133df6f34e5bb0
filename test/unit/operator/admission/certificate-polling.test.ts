/**
 * The certificate check's loop: every interval, or sooner when asked (a webhook configuration changed), never two
 * at once, and at most one a second however often it is asked.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { pino } from "pino";
import { PolledCertificates } from "../../../../operator/admission/certificate-polling.ts";
import { FakeClock } from "../../runtime/fake-clock.ts";

class CountedChecks extends PolledCertificates {
  started = 0;
  running = 0;
  overlapped = false;
  release: (() => void) | undefined;
  constructor(clock: FakeClock) {
    super(clock, pino({ level: "silent" }), 60_000);
  }
  override async check(): Promise<void> {
    this.started++;
    this.overlapped ||= this.running > 0;
    this.running++;
    await new Promise<void>((resolve) => (this.release = resolve));
    this.running--;
  }
}

test("checkSoon checks now rather than at the interval, once more if asked during a check, never two at once", async () => {
  const clock = new FakeClock();
  const checks = new CountedChecks(clock);
  checks.start();
  await clock.advance(0);
  assert.equal(checks.started, 0, "the first check waits its interval");

  // WHEN a check is asked for: it runs at once
  checks.checkSoon();
  await clock.advance(0);
  assert.equal(checks.started, 1);

  // AND asked for twice more while it runs: one more, a second after the first began, not before
  checks.checkSoon();
  checks.checkSoon();
  checks.release?.();
  await clock.advance(999);
  assert.equal(checks.started, 1);
  await clock.advance(1);
  assert.equal(checks.started, 2);
  checks.release?.();
  await clock.advance(59_000);
  assert.equal(checks.started, 2, "nothing more until the interval");
  await clock.advance(1_000);
  assert.equal(checks.started, 3);
  assert.equal(checks.overlapped, false);
  checks.release?.();
  await checks.stop();
});
