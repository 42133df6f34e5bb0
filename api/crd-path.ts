/** Where the generated CRD lives in the repository (kubebuilder's file name, config/crd/ as in DESIGN.md). */
import { fileURLToPath } from "node:url";

/** Absolute path of the committed CRD YAML. */
export const crdPath = fileURLToPath(new URL("../config/crd/example.com_myappinstances.yaml", import.meta.url));
