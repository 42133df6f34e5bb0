import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

const read = (file: string) => readFileSync(new URL(`../../../${file}`, import.meta.url), "utf8");

// The e2e runs the README's program in a new project (test/e2e/package.test.ts); the template must be that program.
test("the template project's index.ts is the README's 'Use it from your own stack' program", () => {
  const section = read("README.md").split("## Use it from your own stack")[1] ?? "";
  const program = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(program, "the README section has a ts block");
  assert.equal(read("examples/new-project/index.ts"), program);
});
