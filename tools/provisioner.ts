/**
 * Local volume provisioner for the kwok cluster, run by `npm run cluster -- up` as a background process.
 *
 * kwok runs no kubelet and no volume plugins, and nothing provisions volumes, so claims of our StorageClass would
 * stay Pending forever. This loop does what an external provisioner and resizer would: a PersistentVolume for each
 * pending claim (bound through claimRef), capacity growth for claims whose request grew (when the class allows
 * expansion), and removal of released volumes. Nothing is ever mounted: pods here do not run.
 *
 * It polls once a second instead of watching: three small lists per second are nothing for a local cluster, and
 * a level-based loop has no watch to lose.
 */
import { KubeClient, loadKubeConfig, type KubeObject } from "../kube/index.ts";
import { formatObjectKey } from "../kube/object-key.ts";
import { storageClassName, provisionerName } from "./lib/storage-class.ts";

interface Claim extends KubeObject {
  spec: {
    storageClassName?: string;
    accessModes?: string[];
    resources?: { requests?: { storage?: string } };
    volumeName?: string;
  };
  status?: { phase?: string; capacity?: { storage?: string } };
}
interface Volume extends KubeObject {
  spec: { capacity?: { storage?: string }; claimRef?: { namespace?: string; name?: string; uid?: string } };
  status?: { phase?: string };
}

const client = new KubeClient(loadKubeConfig());
const log = (event: string, fields: Record<string, unknown>) =>
  process.stdout.write(
    JSON.stringify({ time: new Date().toISOString(), component: "provisioner", event, ...fields }) + "\n",
  );

async function pass(): Promise<void> {
  const [claims, volumes, classes] = await Promise.all([
    client.list<Claim>("v1", "PersistentVolumeClaim"),
    client.list<Volume>("v1", "PersistentVolume"),
    client.list<KubeObject & { provisioner?: string; allowVolumeExpansion?: boolean }>(
      "storage.k8s.io/v1",
      "StorageClass",
    ),
  ]);
  // Every class whose provisioner is ours, not only the default one: tests and users may add their own.
  const ourClasses = new Map(
    classes.items.filter((c) => c.provisioner === provisionerName).map((c) => [c.metadata.name!, c]),
  );
  const volumeByClaimUid = new Map(volumes.items.map((v) => [v.spec.claimRef?.uid, v]));

  for (const claim of claims.items) {
    const claimClass = ourClasses.get(claim.spec.storageClassName ?? "");
    if (!claimClass || claim.metadata.deletionTimestamp) continue;
    const request = claim.spec.resources?.requests?.storage ?? "1Gi";
    const volume = volumeByClaimUid.get(claim.metadata.uid);
    if (!volume) {
      await client.create({
        apiVersion: "v1",
        kind: "PersistentVolume",
        metadata: {
          name: `pvc-${claim.metadata.uid}`,
          annotations: { "pv.kubernetes.io/provisioned-by": provisionerName },
        },
        spec: {
          capacity: { storage: request },
          accessModes: claim.spec.accessModes ?? ["ReadWriteOnce"],
          persistentVolumeReclaimPolicy: "Delete",
          storageClassName: claimClass.metadata.name,
          hostPath: { path: `/var/lib/myapp-local-volumes/${claim.metadata.uid}` },
          claimRef: { namespace: claim.metadata.namespace, name: claim.metadata.name, uid: claim.metadata.uid },
        },
      });
      log("provisioned", { claim: formatObjectKey(claim.metadata), storage: request });
    } else if (
      claimClass.allowVolumeExpansion &&
      volume.spec.capacity?.storage !== request &&
      claim.status?.phase === "Bound"
    ) {
      // Act as the resizer: grow the volume, then report the new capacity on the claim.
      await client.mergePatch("v1", "PersistentVolume", volume.metadata.name!, undefined, {
        spec: { capacity: { storage: request } },
      });
      await client.mergePatch(
        "v1",
        "PersistentVolumeClaim",
        claim.metadata.name!,
        claim.metadata.namespace,
        {
          status: { capacity: { storage: request } },
        },
        "status",
      );
      log("expanded", { claim: formatObjectKey(claim.metadata), storage: request });
    }
  }
  for (const volume of volumes.items) {
    const ownedByUs = volume.metadata.annotations?.["pv.kubernetes.io/provisioned-by"] === provisionerName;
    if (ownedByUs && volume.status?.phase === "Released") {
      await client.delete("v1", "PersistentVolume", volume.metadata.name!);
      log("deleted", { volume: volume.metadata.name });
    }
  }
}

let stopping = false;
for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => (stopping = true));
log("started", { provisioner: provisionerName, defaultClass: storageClassName });
while (!stopping) {
  try {
    await pass();
  } catch (error) {
    log("error", { message: error instanceof Error ? error.message : String(error) });
  }
  await new Promise((resolve) => setTimeout(resolve, 1000));
}
log("stopped", {});
