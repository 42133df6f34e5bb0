/** Resolved settings for tests, failing loudly when the arguments are invalid. */
import { resolveSettings, type MyAppOperatorArgs, type OperatorSettings } from "../../../components/settings.ts";

/** The operator image of in-cluster test settings: never pulled, unit tests only build objects. */
export const testImage = "registry.example/myapp-operator:test";

export function settingsFor(args: MyAppOperatorArgs = {}, name = "myapp-operator"): OperatorSettings {
  const resolved = resolveSettings(name, {
    // An external operator has no pods, so no image.
    ...(args.operatorPlacement === "external" ? {} : { image: testImage }),
    ...args,
  });
  if (!resolved.ok) throw new Error(`test arguments are invalid: ${JSON.stringify(resolved.issues)}`);
  return resolved.settings;
}
