export * from "./client.ts";
export * from "./config.ts";
export * from "./credentials.ts";
export * from "./errors.ts";
export * from "./resources.ts";
export * from "./clock.ts";
export * from "./discovery.ts";
export * from "./object-key.ts";
