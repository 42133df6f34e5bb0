/**
 * The counting proxy on its own thread: its TLS handshakes and piping do not share an event loop with the
 * benchmark's watches and timers. Posts `{ kubeconfig }` once listening, then one message per request (and, with
 * `answers`, one per answer).
 */
import { parentPort, workerData } from "node:worker_threads";
import { startCountingProxy } from "./counting-proxy.ts";

const { kubeconfigPath, label, answers } = workerData as { kubeconfigPath: string; label: string; answers: boolean };
const proxy = await startCountingProxy(kubeconfigPath, label);
proxy.onRequest((info, at) => parentPort!.postMessage({ request: info, epochMs: performance.timeOrigin + at }));
if (answers) {
  proxy.onAnswer((info, at, ms) => parentPort!.postMessage({ answer: info, epochMs: performance.timeOrigin + at, ms }));
}
parentPort!.on("message", (message: { close?: boolean }) => {
  if (message.close) void proxy.close().then(() => process.exit(0));
});
parentPort!.postMessage({ kubeconfig: proxy.kubeconfig });
