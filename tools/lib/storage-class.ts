/** The local cluster's default StorageClass, served by tools/provisioner.ts. */
export const storageClassName = "local";
export const provisionerName = "myapp.example.com/local-provisioner";

export const defaultStorageClass = {
  apiVersion: "storage.k8s.io/v1",
  kind: "StorageClass",
  metadata: {
    name: storageClassName,
    annotations: { "storageclass.kubernetes.io/is-default-class": "true" },
  },
  provisioner: provisionerName,
  reclaimPolicy: "Delete",
  volumeBindingMode: "Immediate",
  allowVolumeExpansion: true,
};
