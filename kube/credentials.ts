/**
 * The user's credentials as request headers, fresh for every request without touching the connection pool:
 * a static token; a token file, re-read once a minute (as client-go does) because projected ServiceAccount tokens
 * rotate; an exec plugin's token, cached until its expirationTimestamp; basic auth. After a 401 the caller
 * invalidates, and the next request reads everything again.
 * (Client certificates are TLS material, not headers: kube/transport.ts puts them on the pool.)
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { realClock, type Clock } from "./clock.ts";
import type { ExecConfig, User } from "./config.ts";

/** How long a token file's content is trusted before it is read again. */
const tokenFileMaxAgeMs = 60_000;
/** An exec credential is renewed this long before it expires. */
const execExpiryMarginMs = 30_000;

export interface ExecCredentialStatus {
  readonly token?: string;
  readonly clientCertificateData?: string;
  readonly clientKeyData?: string;
  readonly expirationTimestamp?: string;
}

export class Credentials {
  private readonly user: User | null;
  private readonly clock: Clock;
  /** The cached header, used while `fresh()`. */
  private cached: { readonly value: string | undefined; readonly fresh: () => boolean } | undefined;
  private pending: Promise<string | undefined> | undefined;

  constructor(user: User | null, options: { readonly clock?: Clock } = {}) {
    this.user = user;
    this.clock = options.clock ?? realClock;
  }

  /** The Authorization header value, or undefined for anonymous/client-certificate users. */
  async authorization(): Promise<string | undefined> {
    const user = this.user;
    if (!user) return undefined;
    if (user.token) return `Bearer ${user.token}`;
    if (user.username !== undefined) {
      return `Basic ${Buffer.from(`${user.username}:${user.password ?? ""}`).toString("base64")}`;
    }
    if (!user.tokenFile && !user.exec) return undefined;
    if (this.cached?.fresh()) return this.cached.value;
    // One read or exec at a time, shared by every request that needs it.
    this.pending ??= this.refresh(user).finally(() => (this.pending = undefined));
    return this.pending;
  }

  /** Forgets cached tokens (after a 401): the next request reads the file or runs the plugin again. */
  invalidate(): void {
    this.cached = undefined;
  }

  private async refresh(user: User): Promise<string | undefined> {
    if (user.tokenFile) {
      const token = (await readFile(user.tokenFile, "utf8")).trim();
      // An age: a duration, on the monotonic clock.
      const until = this.clock.monotonicMs() + tokenFileMaxAgeMs;
      this.cached = { value: token ? `Bearer ${token}` : undefined, fresh: () => this.clock.monotonicMs() < until };
      return this.cached.value;
    }
    const status = await runExecPlugin(user.name, user.exec!);
    if (!status.token && status.clientCertificateData) {
      throw new Error(
        `exec credential plugin of user "${user.name}" returned a client certificate: not supported, only tokens`,
      );
    }
    // The expiry is a time of day (the apiserver judges it by its own clock): compared with the wall clock, as
    // client-go does.
    const expires = status.expirationTimestamp ? Date.parse(status.expirationTimestamp) : Infinity;
    this.cached = {
      value: status.token ? `Bearer ${status.token}` : undefined,
      fresh: () => this.clock.wallTimeMs() < expires - execExpiryMarginMs,
    };
    return this.cached.value;
  }
}

/** Runs an exec credential plugin (client.authentication.k8s.io ExecCredential) and returns its status. */
function runExecPlugin(userName: string, exec: ExecConfig): Promise<ExecCredentialStatus> {
  const info = JSON.stringify({ apiVersion: exec.apiVersion, kind: "ExecCredential", spec: { interactive: false } });
  const env: NodeJS.ProcessEnv = { ...process.env, KUBERNETES_EXEC_INFO: info };
  for (const { name, value } of exec.env) env[name] = value;
  return new Promise((resolve, reject) => {
    execFile(exec.command, [...exec.args], { env, timeout: 60_000, maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
      if (error) {
        const detail = stderr.trim().split("\n").slice(-3).join(" ") || error.message;
        reject(new Error(`exec credential plugin "${exec.command}" of user "${userName}" failed: ${detail}`));
        return;
      }
      try {
        const status = (JSON.parse(stdout) as { status?: ExecCredentialStatus }).status;
        if (!status) throw new Error("no status in its output");
        resolve(status);
      } catch (parseError) {
        reject(
          new Error(
            `exec credential plugin "${exec.command}" of user "${userName}" printed no ExecCredential: ${String(parseError)}`,
          ),
        );
      }
    });
  });
}
