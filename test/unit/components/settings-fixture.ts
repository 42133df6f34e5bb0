/** Resolved settings for tests, failing loudly when the arguments are invalid. */
import { resolveSettings, type MyAppOperatorArgs, type OperatorSettings } from "../../../components/settings.ts";

export function settingsFor(args: MyAppOperatorArgs = {}, name = "myapp-operator"): OperatorSettings {
  const resolved = resolveSettings(name, args);
  if (!resolved.ok) throw new Error(`test arguments are invalid: ${JSON.stringify(resolved.issues)}`);
  return resolved.settings;
}
