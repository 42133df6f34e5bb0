// The dynamic provider's implementation, found by package specifier (`myapp-platform/provider-impl`, see
// provider/provider.ts), so the state a stack stores works from any checkout, directory or machine that has the
// package. Plain JavaScript on purpose: it must load both ways. In a checkout the TypeScript sources run natively;
// an installed package has no sources (Node does not strip types under node_modules), only build/.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const source = new URL("./impl.ts", import.meta.url);
const checkout = !fileURLToPath(import.meta.url).includes("/node_modules/") && existsSync(source);
const implementation = checkout ? await import(source.href) : await import("../build/provider/impl.js");

export const { check, diff, create, read, update, remove } = implementation;
