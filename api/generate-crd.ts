/**
 * `npm run manifests`: writes the CRD generated from the zod schema to config/crd/. Deterministic, so the file is
 * committed and a unit test proves it matches a fresh generation.
 */
import { writeFileSync } from "node:fs";
import { crdYaml } from "./crd.ts";
import { crdPath } from "./crd-path.ts";

writeFileSync(crdPath, crdYaml());
console.log(`wrote ${crdPath}`);
