import assert from "node:assert/strict";
import { test } from "node:test";
import { appliedStack, destroyedStack, reachedStack } from "../../../tools/lib/pulumi-arguments.ts";

test("appliedStack: the stack an up names, the selected one (''), or none for other commands", () => {
  assert.equal(appliedStack(["up", "--stack", "dev", "--yes"]), "dev");
  assert.equal(appliedStack(["update", "-s", "dev"]), "dev");
  assert.equal(appliedStack(["up", "--stack=example"]), "example");
  assert.equal(appliedStack(["--non-interactive", "up"]), "");
  assert.equal(appliedStack(["-s", "dev", "up"]), "dev");
  assert.equal(appliedStack(["--cwd", "stacks", "up", "--yes"]), "");
  assert.equal(appliedStack(["preview", "--stack", "dev"]), undefined);
  assert.equal(appliedStack(["destroy", "--stack", "dev"]), undefined);
  assert.equal(appliedStack([]), undefined);
});

test("destroyedStack: the stack a destroy names (by any of its names), not a preview of it nor other commands", () => {
  assert.equal(destroyedStack(["destroy", "--stack", "dev", "--yes"]), "dev");
  assert.equal(destroyedStack(["down", "-s=dev"]), "dev");
  assert.equal(destroyedStack(["--non-interactive", "dn"]), "");
  assert.equal(destroyedStack(["destroy", "--stack", "dev", "--preview-only"]), undefined, "nothing is destroyed");
  // Part of the stack only: the platform stays, and so must the operator that reconciles the rest
  for (const partly of [
    ["--target", "urn:pulumi:dev::p::t::web"],
    ["-t", "urn:x"],
    ["--target=urn:x"],
    ["--exclude", "urn:x"],
    ["--exclude-protected"],
  ]) {
    assert.equal(destroyedStack(["destroy", "--stack", "dev", ...partly]), undefined, partly.join(" "));
  }
  assert.equal(destroyedStack(["up", "--stack", "dev"]), undefined);
  assert.equal(destroyedStack(["stack", "rm", "dev"]), undefined);
});

test("reachedStack: the stack a command that reaches its cluster names, the selected one (''), or none", () => {
  assert.equal(reachedStack(["preview", "--stack", "dev"]), "dev");
  assert.equal(reachedStack(["pre", "-s=dev"]), "dev");
  assert.equal(reachedStack(["refresh"]), "");
  for (const command of ["up", "destroy", "dn", "import"]) assert.equal(reachedStack([command, "-s", "x"]), "x");
  // Commands of the backend or the config alone need no cluster
  assert.equal(reachedStack(["stack", "select", "dev"]), undefined);
  assert.equal(reachedStack(["config", "set", "x", "y", "--stack", "dev"]), undefined);
  assert.equal(reachedStack([]), undefined);
});
