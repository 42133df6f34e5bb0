/** `npm run cluster -- up | down | status`: the local Kubernetes cluster. */
import { clusterDown, clusterStatus, clusterUp, nodeCount } from "./lib/cluster.ts";

const command = process.argv[2] ?? "status";
try {
  if (command === "up") await clusterUp();
  else if (command === "down") await clusterDown();
  else if (command === "status") {
    const status = await clusterStatus();
    if (!status.exists) console.log("cluster: not created (npm run cluster -- up)");
    for (const c of status.components)
      console.log(`${c.name.padEnd(24)} pid ${String(c.pid).padEnd(8)} ${c.running ? "running" : "STOPPED"}`);
    if (status.provisioner) {
      const p = status.provisioner;
      console.log(
        `${"volume-provisioner".padEnd(24)} pid ${String(p.pid).padEnd(8)} ${p.running ? "running" : "STOPPED"}`,
      );
    }
    console.log(`readyz: ${status.readyz}`);
    console.log(`server: ${status.serverVersion || "-"}, Ready nodes: ${status.readyNodes}/${nodeCount}`);
    console.log(status.healthy ? "healthy" : "NOT healthy");
    process.exitCode = status.healthy ? 0 : 1;
  } else {
    console.error(`unknown command "${command}": use up, down or status`);
    process.exitCode = 2;
  }
} catch (error) {
  console.error(`cluster ${command} failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
