/** `npm run cluster -- up | down | status [--name NAME]`: a local Kubernetes cluster (default name: myapp). */
import { parseArgs } from "node:util";
import { clusterDown, clusterStatus, clusterUp, nodeCount } from "./lib/cluster.ts";
import { inClusterOperators, localOperators, operatorLines } from "./lib/operator-status.ts";
import { clusterName } from "./lib/paths.ts";

const usage = "usage: npm run cluster -- up|down|status [--name NAME]   (NAME defaults to myapp)";
// What each command does, for --help: `down` above all, which takes what is in the cluster with it.
const help = `${usage}

  up       start the local cluster, making it first if need be (kubeconfig: .local/kubeconfig, or
           .local/kubeconfig-NAME); a stopped one starts again with its objects
  down     delete the cluster and everything in it: every object and volume, a project of your own on it
           included (its instances and kept volume claims), with no stack destroyed first (npm run down
           destroys the dev stack first); the next up makes an empty one
  status   each process with its pid, /readyz, the operators, the Ready nodes (the default command)`;
let command = "status";
let name = clusterName;
try {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { name: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) {
    console.log(help);
    process.exit(0);
  }
  command = positionals[0] ?? "status";
  name = values.name ?? clusterName;
  if (positionals.length > 1 || !["up", "down", "status"].includes(command))
    throw new Error(`unknown command "${positionals.join(" ")}"`);
} catch (error) {
  console.error(`${error instanceof Error ? error.message : String(error)}\n${usage}`);
  process.exit(2);
}
try {
  if (command === "up") await clusterUp(name);
  else if (command === "down") await clusterDown(name);
  else {
    const status = await clusterStatus(name);
    if (!status.exists)
      console.log(
        `cluster ${name}: not created (npm run cluster -- up${name === clusterName ? "" : ` --name ${name}`})`,
      );
    for (const c of status.components)
      console.log(`${c.name.padEnd(24)} pid ${String(c.pid).padEnd(8)} ${c.running ? "running" : "STOPPED"}`);
    if (status.provisioner) {
      const p = status.provisioner;
      console.log(
        `${"volume-provisioner".padEnd(24)} pid ${String(p.pid).padEnd(8)} ${p.running ? "running" : "STOPPED"}`,
      );
    }
    // The operator is not part of the cluster's health: a cluster without one is healthy, its instances wait.
    const inCluster = !status.exists
      ? []
      : status.readyz === "ok"
        ? await inClusterOperators(status.kubeconfig).catch(
            (error: unknown) => `unknown: ${error instanceof Error ? error.message : String(error)}`,
          )
        : "unknown: the cluster does not answer";
    // The local operator (npm start, npm run operator) serves the default cluster.
    const local = name === clusterName ? await localOperators() : [];
    for (const line of operatorLines(local, inCluster)) console.log(line);
    console.log(`kubeconfig: ${status.kubeconfig}`);
    console.log(`readyz: ${status.readyz}`);
    console.log(`server: ${status.serverVersion || "-"}, Ready nodes: ${status.readyNodes}/${nodeCount}`);
    console.log(status.healthy ? "healthy" : "NOT healthy");
    process.exitCode = status.healthy ? 0 : 1;
  }
} catch (error) {
  console.error(`cluster ${command} failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
