import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { removeStaleLocks } from "../../../tools/lib/stale-pulumi-locks.ts";

test("removes only the locks of this host whose pulumi no longer runs", (t) => {
  // GIVEN a file backend with four locks: a dead pid here, a live one here, a dead one of another host, and a file
  // being written (not JSON yet)
  const backend = mkdtempSync(path.join(tmpdir(), "stale-locks-"));
  t.after(() => rmSync(backend, { recursive: true, force: true }));
  const lock = (stack: string, name: string, content: string) => {
    const dir = path.join(backend, ".pulumi", "locks", "organization", "myapp-platform", stack);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, name), content);
    return path.join(dir, name);
  };
  const held = (pid: number, hostname: string) =>
    JSON.stringify({ pid, username: "root", hostname, timestamp: "2026-12-07T08:00:00Z" });
  const dead = lock("dev", "a.json", held(4001, "here"));
  const live = lock("other", "b.json", held(4002, "here"));
  const elsewhere = lock("third", "c.json", held(4001, "there"));
  const partial = lock("fourth", "d.json", '{"pid": 40');
  // WHEN stale locks are removed, pid 4002 running
  const removed = removeStaleLocks(backend, "here", (pid) => pid === 4002);
  // THEN only the dead pid's lock on this host is gone, and it is named
  assert.deepEqual(removed, [{ stack: "myapp-platform/dev", pid: 4001 }]);
  assert.deepEqual(
    [dead, live, elsewhere, partial].map((file) => existsSync(file)),
    [false, true, true, true],
  );
});

test("a backend without locks (a new checkout) has nothing to remove", () => {
  assert.deepEqual(removeStaleLocks(path.join(tmpdir(), "no-such-backend-dir")), []);
});
