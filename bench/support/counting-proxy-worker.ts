/**
 * The counting proxy on its own thread: its TLS handshakes and piping do not share an event loop with the
 * benchmark's watches and timers. Posts `{ kubeconfig }` once listening, then one message per request.
 */
import { parentPort, workerData } from "node:worker_threads";
import { startCountingProxy } from "./counting-proxy.ts";

const { kubeconfigPath, label } = workerData as { kubeconfigPath: string; label: string };
const proxy = await startCountingProxy(kubeconfigPath, label);
proxy.onRequest((info, at) => parentPort!.postMessage({ request: info, epochMs: performance.timeOrigin + at }));
parentPort!.on("message", (message: { close?: boolean }) => {
  if (message.close) void proxy.close().then(() => process.exit(0));
});
parentPort!.postMessage({ kubeconfig: proxy.kubeconfig });
