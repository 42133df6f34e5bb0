import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  runtimeConfig,
  serviceAccountMountPath,
  type OciConfig,
  type PodContainerSpec,
} from "../../../tools/lib/image-container.ts";

/** The shape of what `umoci unpack` writes for the operator image (trimmed). */
function umociConfig(): OciConfig {
  const caps = ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"];
  return {
    ociVersion: "1.0.0",
    process: {
      terminal: true,
      user: { uid: 65532, gid: 65532 },
      args: ["/nodejs/bin/node", "/app/myapp-operator.mjs"],
      env: ["PATH=/nodejs/bin:/usr/bin:/bin", "TERM=xterm", "NODE_ENV=production"],
      cwd: "/app",
      capabilities: { bounding: caps, effective: caps, inheritable: caps, permitted: caps, ambient: caps },
      noNewPrivileges: true,
    },
    root: { path: "rootfs" },
    hostname: "umoci-default",
    mounts: [{ destination: "/proc", type: "proc", source: "proc" }],
    linux: {
      namespaces: [{ type: "pid" }, { type: "network" }, { type: "ipc" }, { type: "uts" }, { type: "mount" }],
      maskedPaths: ["/proc/kcore"],
    },
  };
}

const spec: PodContainerSpec = {
  id: "myapp-operator-abc",
  imageRef: "/cache/images/myapp-operator-0123:0.1.0",
  args: ["--leader-elect", "--metrics-bind-address=127.0.0.1:9000"],
  env: { POD_NAMESPACE: "myapp-system", POD_NAME: "myapp-operator-abc" },
  runAsUser: 65532,
  runAsGroup: 65532,
  readOnlyRootFilesystem: true,
  allowPrivilegeEscalation: false,
  dropAllCapabilities: true,
  emptyDirs: [{ mountPath: "/tmp", sizeBytes: 64 * 1024 * 1024 }],
  apiServer: { host: "127.0.0.1", port: 6443 },
  serviceAccount: { token: "t", caCrt: "ca", namespace: "myapp-system" },
};

describe("runtimeConfig", () => {
  it("turns a restricted pod's container into a runc config", () => {
    // GIVEN umoci's config for the image WHEN the pod's settings are applied
    const config = runtimeConfig(umociConfig(), spec, "/tmp/bundle/serviceaccount");
    // THEN the entrypoint gets the container's args, and the process runs as the pod says, with no terminal
    assert.deepEqual(config.process.args, [
      "/nodejs/bin/node",
      "/app/myapp-operator.mjs",
      "--leader-elect",
      "--metrics-bind-address=127.0.0.1:9000",
    ]);
    assert.equal(config.process.terminal, false);
    assert.deepEqual(config.process.user, { uid: 65532, gid: 65532 });
    assert.equal(config.process.noNewPrivileges, true);
    for (const set of Object.values(config.process.capabilities ?? {})) assert.deepEqual(set, []);
    assert.equal(config.root.readonly, true);
    assert.equal(config.hostname, spec.id);
    // AND the environment is the image's plus the in-cluster variables and the pod's env, without TERM
    assert.deepEqual(config.process.env, [
      "PATH=/nodejs/bin:/usr/bin:/bin",
      "NODE_ENV=production",
      "HOSTNAME=myapp-operator-abc",
      "KUBERNETES_SERVICE_HOST=127.0.0.1",
      "KUBERNETES_SERVICE_PORT=6443",
      "POD_NAMESPACE=myapp-system",
      "POD_NAME=myapp-operator-abc",
    ]);
  });

  it("mounts the emptyDir as tmpfs and the ServiceAccount read-only, and shares only the host's network", () => {
    const config = runtimeConfig(umociConfig(), spec, "/tmp/bundle/serviceaccount");
    assert.deepEqual(config.mounts, [
      { destination: "/proc", type: "proc", source: "proc" },
      {
        destination: "/tmp",
        type: "tmpfs",
        source: "tmpfs",
        options: ["nosuid", "nodev", "mode=1777", `size=${64 * 1024 * 1024}`],
      },
      {
        destination: serviceAccountMountPath,
        type: "bind",
        source: "/tmp/bundle/serviceaccount",
        options: ["rbind", "ro", "nosuid", "nodev", "noexec"],
      },
    ]);
    assert.deepEqual(
      config.linux?.namespaces?.map((namespace) => namespace.type),
      ["pid", "ipc", "uts", "mount"],
    );
    assert.deepEqual(config.linux?.maskedPaths, ["/proc/kcore"], "the rest of umoci's config passes through");
  });

  it("keeps the image's capabilities and allows escalation only when the pod does", () => {
    const config = runtimeConfig(
      umociConfig(),
      { ...spec, dropAllCapabilities: false, allowPrivilegeEscalation: true, readOnlyRootFilesystem: false },
      "/sa",
    );
    assert.deepEqual(config.process.capabilities?.bounding, ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"]);
    assert.equal(config.process.noNewPrivileges, false);
    assert.equal(config.root.readonly, false);
  });
});
