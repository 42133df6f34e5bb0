import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { after, describe, it } from "node:test";
import { BroadcastChannel, receiveMessageOnPort, type MessagePort } from "node:worker_threads";
import { readManifests } from "../../../chart/index.ts";
import { parseWorkerUrl, ParseThread } from "../../../chart/render-yaml-thread.ts";
import {
  maxDocumentBytes,
  maxNodeSeparators,
  offThreadFromBytes,
  parseDocument,
  readDocuments,
} from "../../../chart/render-yaml.ts";

/** A ConfigMap-like document of `items` flow items: what costs js-yaml most per byte. */
function flowDocument(items: number, template = "flow.yaml"): string {
  return `---\n# Source: c/templates/${template}\napiVersion: v1\nkind: List\nmetadata:\n  name: flow\nitems: [${Array(items).fill("1").join(",")}]\n`;
}

describe("ParseThread", () => {
  const threads: ParseThread[] = [];
  const thread = (options?: ConstructorParameters<typeof ParseThread>[0]) => {
    const made = new ParseThread(options);
    threads.push(made);
    return made;
  };
  after(() => Promise.all(threads.map((made) => made.close())));

  it("parses as the event loop would, keeping __proto__ keys, aliases and infinities", async () => {
    const text = `a: &x { __proto__: { polluted: 1 }, n: .inf }\nb: *x\nc: [${Array(70_000).fill("1").join(",")}]\n`;
    const parse = await thread().parse(text, maxDocumentBytes);
    assert.ok(!("refusal" in parse));
    const value = parse.value as { a: Record<string, unknown>; b: unknown; c: number[] };
    assert.deepEqual(Object.keys(value.a), ["__proto__", "n"]);
    assert.equal(Object.getPrototypeOf(value.a), Object.prototype);
    assert.equal(value.a["n"], Infinity);
    assert.equal(value.b, value.a, "an alias is the same object, as js-yaml made it");
    assert.equal(value.c.length, 70_000);
    assert.ok(parse.expandedBytes > 0);
    assert.deepEqual(value, parseDocument(text));
  });

  it("refuses a document that needs more heap than the thread has, and parses the next one", async () => {
    const made = thread({ heapMiB: 16 });
    const refused = await made.parse(flowDocument(240_000), maxDocumentBytes);
    assert.deepEqual(refused, { refusal: "it needs more than 16 MiB of memory to parse" });
    const next = await made.parse("a: 1\n", maxDocumentBytes);
    assert.deepEqual(next, { value: { a: 1 }, expandedBytes: 0 });
  });

  it("settles each document with its own answer, not with a late one of a thread its deadline ended", async () => {
    // GIVEN the parsing thread's module, which also says on a channel of its own when it has answered
    const channel = new BroadcastChannel(`render-yaml-late-answer-${process.pid}`);
    after(() => channel.close());
    const telling = `
      import { BroadcastChannel, parentPort } from "node:worker_threads";
      const told = new BroadcastChannel(${JSON.stringify(channel.name)});
      const answer = parentPort.postMessage.bind(parentPort);
      parentPort.postMessage = (message) => {
        answer(message);
        told.postMessage(message);
      };
      await import(${JSON.stringify(parseWorkerUrl().href)});`;
    const workerUrl = new URL(`data:text/javascript,${encodeURIComponent(telling)}`);
    // AND a short deadline, and an event loop held until the thread has answered the first document and the deadline
    // is past: when the loop is free, the deadline fires first (timers run before the answer is delivered) and ends
    // that thread, whose answer is then late
    const made = thread({ workerUrl, deadlineMs: 300 });
    const parsedAt = performance.now();
    const first = made.parse("job: 1\n", maxDocumentBytes);
    let answered: { message: unknown } | undefined;
    setImmediate(() => {
      const until = performance.now() + 60_000;
      // holds the event loop, as a busy operator would
      // (Node reads a BroadcastChannel so too; its types name only MessagePort)
      const port = channel as unknown as MessagePort;
      while (answered === undefined && performance.now() < until) answered = receiveMessageOnPort(port);
      while (performance.now() < parsedAt + 400);
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.deepEqual(answered, { message: { value: { job: 1 }, expandedBytes: 0 } }, "the thread answered in time");
    const second = made.parse("job: 2\n", maxDocumentBytes);
    // THEN the first is refused for its deadline, and the second gets its own value, not the first's late answer
    assert.deepEqual(await first, { refusal: "it took longer than 0.3 s to parse" });
    assert.deepEqual(await second, { value: { job: 2 }, expandedBytes: 0 });
  });

  it("holds its heap bound though the process's --max-old-space-size overrides the thread's own limit", () => {
    // GIVEN the container's Node flags (components/node-heap.ts), which make V8 ignore a worker's resourceLimits
    const script = [
      `import { ParseThread } from ${JSON.stringify(new URL("../../../chart/render-yaml-thread.ts", import.meta.url).href)};`,
      "const thread = new ParseThread({ heapMiB: 24 });",
      'const answer = await thread.parse(`items: [${Array(240_000).fill("1").join(",")}]\\n`, 3 * 1024 * 1024);',
      "console.log(JSON.stringify(answer));",
      "await thread.close();",
    ].join("\n");
    const printed = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
      env: { ...process.env, NODE_OPTIONS: "--max-old-space-size=672 --max-semi-space-size=1" },
    });
    // THEN a document that needs more than the thread's heap (24 MiB here) is refused all the same
    assert.deepEqual(JSON.parse(printed), { refusal: "it needs more than 24 MiB of memory to parse" });
  });

  it("starts a document after a heavy one on a fresh heap: the watch sees garbage, which the flags let it keep", () => {
    // GIVEN the container's Node flags, a heap of 64 MiB, and a document that takes ~45 MiB before one of ~25 MiB
    const script = [
      `import { ParseThread } from ${JSON.stringify(new URL("../../../chart/render-yaml-thread.ts", import.meta.url).href)};`,
      "const thread = new ParseThread({ heapMiB: 64 });",
      'const mapping = (n) => "data:\\n" + Array.from({ length: n }, (_, i) => `  k${i}: v\\n`).join("");',
      "const answers = [];",
      "for (let i = 0; i < 3; i++) {",
      "  answers.push(await thread.parse(mapping(120_000), 3 * 1024 * 1024));",
      "  answers.push(await thread.parse(mapping(60_000), 3 * 1024 * 1024));",
      "}",
      'console.log(JSON.stringify(answers.map((answer) => ("refusal" in answer ? answer.refusal : "parsed"))));',
      "await thread.close();",
    ].join("\n");
    const printed = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
      env: { ...process.env, NODE_OPTIONS: "--max-old-space-size=672 --max-semi-space-size=1" },
    });
    // THEN every document is parsed: the second never counts the first's remains against its bound
    assert.deepEqual(JSON.parse(printed), Array(6).fill("parsed"));
  });

  it("refuses a document that takes longer than the deadline", async () => {
    // 240,000 flow items take js-yaml ~0.1 s or more, and the thread's start tens of ms; the deadline is 50 ms.
    const parse = await thread({ deadlineMs: 50 }).parse(flowDocument(240_000), maxDocumentBytes);
    assert.deepEqual(parse, { refusal: "it took longer than 0.05 s to parse" });
  });

  it("refuses at once an answer the event loop cannot read back, instead of waiting for the deadline", async () => {
    // GIVEN a thread whose answer nests 9,000 levels deep: cloned there, it overflows the stack here
    const deep = `
      import { parentPort } from "node:worker_threads";
      parentPort.on("message", () => {
        let value = 1;
        for (let i = 0; i < 9000; i++) value = { a: value };
        parentPort.postMessage({ value });
      });`;
    const workerUrl = new URL(`data:text/javascript,${encodeURIComponent(deep)}`);
    const parse = await thread({ workerUrl, deadlineMs: 60_000 }).parse("a: 1", maxDocumentBytes);
    // THEN it is a refusal for the answer, not for the deadline (which would say "took longer")
    assert.ok("refusal" in parse && /cannot be passed back/.test(parse.refusal), JSON.stringify(parse));
  });

  it("answers a refusal of js-yaml's or of the bounds as a refusal", async () => {
    const parse = await thread().parse("a: 1\na: 2\n", maxDocumentBytes);
    assert.ok("refusal" in parse && /duplicated mapping key \(2:1\)/.test(parse.refusal));
  });

  it("finds its module beside the one that starts it, under the same extension", () => {
    assert.equal(parseWorkerUrl("file:///app/myapp-operator.mjs").href, "file:///app/render-yaml-worker.mjs");
    assert.equal(
      parseWorkerUrl("file:///p/build/chart/render-yaml-thread.js").pathname,
      "/p/build/chart/render-yaml-worker.js",
    );
    assert.match(parseWorkerUrl().pathname, /\/chart\/render-yaml-worker\.ts$/);
  });
});

describe("readDocuments with large documents", () => {
  it("parses them off the event loop: a timer queued before the read runs before its result", async () => {
    const text = flowDocument(200_000);
    assert.ok(text.length > offThreadFromBytes);
    let timerRan = false;
    setTimeout(() => (timerRan = true), 0);
    const [, document] = await readDocuments(text);
    assert.equal((document?.value as { items: number[] }).items.length, 200_000);
    assert.ok(timerRan, "the event loop turned while the document was parsed");
  });

  it("refuses a document of 1.4 million flow items unread, naming its template", async () => {
    await assert.rejects(
      readManifests(flowDocument(1_400_000, "items.yaml")),
      new RegExp(
        "^Error: c/templates/items\\.yaml is not valid YAML: it holds 1400\\d{3} commas, line breaks and opening " +
          `brackets, which YAML nodes follow; a document may hold at most ${maxNodeSeparators} \\(`,
      ),
    );
  });
});
