/**
 * The MyAppInstance CRD, read from the generated manifest of the api (config/crd/), never a copy: what
 * `kubectl apply -f config/crd` installs is exactly what the component and dist/install.yaml install.
 */
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { crdName } from "../api/index.ts";
import { crdPath } from "../api/crd-path.ts";
import type { CustomResourceDefinitionManifest } from "./manifest-types.ts";

/** Absolute path of the generated CRD manifest, as the api writes it. */
export const crdManifestPath: string = crdPath;

/** Reads and checks the generated CRD; the error says how to regenerate it when it is missing or wrong. */
export function loadCrdManifest(path: string = crdManifestPath): CustomResourceDefinitionManifest {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new Error(`cannot read the CRD manifest ${path} (${String(error)}); generate it with 'npm run manifests'`, {
      cause: error,
    });
  }
  const crd = parse(text) as CustomResourceDefinitionManifest | null;
  if (crd?.kind !== "CustomResourceDefinition" || crd.metadata?.name !== crdName) {
    throw new Error(
      `${path} is not the ${crdName} CustomResourceDefinition (found kind ${String(crd?.kind)}, ` +
        `name ${String(crd?.metadata?.name)}); regenerate it with 'npm run manifests'`,
    );
  }
  return crd;
}
