import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ListSplitter } from "../../../kube/list-stream.ts";

/** Splits `text` pushed in pieces at `cuts`; the items parsed and the list's own fields. */
function split(text: string, cuts: readonly number[] = []) {
  const items: unknown[] = [];
  const splitter = new ListSplitter((item) => items.push(JSON.parse(item)));
  let from = 0;
  for (const cut of [...cuts, text.length]) {
    splitter.push(text.slice(from, cut));
    from = cut;
  }
  return { items, list: splitter.end() };
}

/** A list as the apiserver writes it, with strings that look like JSON structure and an `items` of its own inside. */
const list = {
  kind: "ConfigMapList",
  apiVersion: "v1",
  metadata: { resourceVersion: "42", continue: "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ==", remainingItemCount: 3 },
  items: [
    {
      metadata: { name: "a", namespace: "n", labels: { "app.kubernetes.io/managed-by": "myapp-operator" } },
      data: { items: '{"items":[1,2]}', tricky: 'a "quoted" } ] [ { \\ value\\', unicode: "naïve ✓ 😀" },
    },
    { metadata: { name: "b", namespace: "n" }, data: { items: "[]" }, binaryData: {} },
    { metadata: { name: "c", namespace: "n" }, spec: { items: [{ x: [[], {}] }] } },
  ],
};

describe("ListSplitter", () => {
  it("hands over every item and keeps the list's own fields, wherever the text is cut", () => {
    const text = JSON.stringify(list);
    const expected = { items: list.items, list: { ...list, items: [] } };
    assert.deepEqual(split(text), expected);
    for (let cut = 1; cut < text.length; cut++) assert.deepEqual(split(text, [cut]), expected, `cut at ${cut}`);
    const everyChar = Array.from({ length: text.length - 1 }, (_, i) => i + 1);
    assert.deepEqual(split(text, everyChar), expected, "one character at a time");
  });

  it("reads the escapes Go writes: \\u0022, \\u003c, runs of backslashes before a quote", () => {
    const text = String.raw`{"metadata":{},"items":[{"a":"\u0022}\u003c","b":"\\\"]\\\\","c":"\\"},{"d":"{"}]}`;
    const expected = JSON.parse(text) as { items: unknown[] };
    for (let cut = 1; cut < text.length; cut++)
      assert.deepEqual(split(text, [cut]).items, expected.items, `cut at ${cut}`);
  });

  it("reads white space, an empty list and a null one", () => {
    assert.deepEqual(split(JSON.stringify(list, null, 2)).items, list.items);
    assert.deepEqual(split('{"kind":"PodList","metadata":{"resourceVersion":"7"},"items":[]}'), {
      items: [],
      list: { kind: "PodList", metadata: { resourceVersion: "7" }, items: [] },
    });
    assert.deepEqual(split('{"metadata":{"resourceVersion":"7"},"items":null}').list, {
      metadata: { resourceVersion: "7" },
      items: null,
    });
  });

  it("refuses a text that ends inside the list", () => {
    const text = JSON.stringify(list);
    for (const cut of [text.length - 1, text.indexOf('"b"'), 10]) {
      const splitter = new ListSplitter(() => {});
      splitter.push(text.slice(0, cut));
      assert.throws(() => splitter.end(), SyntaxError, `cut at ${cut}`);
    }
  });
});
