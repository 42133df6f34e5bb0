/** Where the generated CRD lives in the repository (kubebuilder's layout and file name: config/crd/GROUP_PLURAL.yaml). */
import { fileURLToPath } from "node:url";

/** Absolute path of the committed CRD YAML. */
export const crdPath = fileURLToPath(new URL("../config/crd/example.com_myappinstances.yaml", import.meta.url));
