/**
 * The parsing thread's module (render-yaml-thread.ts): parses each document it is sent with render-yaml.ts's
 * bounds and answers with the value, the refusal, or a fault.
 */
import { parentPort } from "node:worker_threads";
import { parseBounded, RenderYamlError } from "./render-yaml.ts";
import type { ParseRequest } from "./render-yaml-thread.ts";

parentPort?.on("message", ({ text, budget }: ParseRequest) => {
  try {
    parentPort?.postMessage(parseBounded(text, budget));
  } catch (error) {
    if (error instanceof RenderYamlError) parentPort?.postMessage({ refusal: error.message });
    else parentPort?.postMessage({ fault: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
});
