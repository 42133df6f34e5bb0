/**
 * The parsing thread's module (render-yaml-thread.ts): parses each document it is sent with render-yaml.ts's
 * bounds and answers with the value, the refusal, or a fault; or checks a chart's values schema and answers with
 * its problem (or null).
 */
import { parentPort } from "node:worker_threads";
import { parseBounded, RenderYamlError } from "./render-yaml.ts";
import type { ParseRequest } from "./render-yaml-thread.ts";
import { schemaReferenceProblem } from "./schema-references.ts";

parentPort?.on("message", (request: ParseRequest) => {
  try {
    if ("schemaFile" in request) {
      const problem = schemaReferenceProblem(request.text, request.schemaFile);
      parentPort?.postMessage({ value: problem ?? null, expandedBytes: 0 });
    } else {
      parentPort?.postMessage(parseBounded(request.text, request.budget));
    }
  } catch (error) {
    if (error instanceof RenderYamlError) parentPort?.postMessage({ refusal: error.message });
    else parentPort?.postMessage({ fault: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
});
