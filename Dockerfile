# syntax=docker/dockerfile:1
# The operator image: Node 24, the operator bundle and helm, nothing else (no node_modules, no npm, no shell, nothing of
# Pulumi), running as the nonroot user 65532.
#
#   npm ci && npm run bundle          # build/operator/myapp-operator.mjs (+ THIRD_PARTY_LICENSES.txt, helm)
#     # the first bundle builds helm from source, which needs Go >= 1.26.6 (tools/toolchain.sh);
#     # MYAPP_TOOLCHAIN_BIN=DIR takes DIR/helm, a helm of your own, instead
#   docker build -t <registry>/myapp-operator:0.2.0 .   # VERSION: the package version (a test holds them equal)
#
# BASE is any image with Node 24 at /nodejs/bin/node and the user 65532, as distroless's nodejs images have.
# `npm run image` builds this same file without a daemon (buildah), FROM a base it assembles offline in that layout
# from the Node binary `npm ci` installed and Debian's libc6/libgcc-s1/libstdc++6 (tools/lib/image-base.ts).
ARG BASE=gcr.io/distroless/nodejs24-debian12:nonroot
FROM ${BASE}
ARG VERSION=0.2.0
LABEL org.opencontainers.image.title="myapp-operator" \
      org.opencontainers.image.description="MyAppInstance operator (example.com/v1)" \
      org.opencontainers.image.version="${VERSION}"
WORKDIR /app
COPY build/operator/myapp-operator.mjs build/operator/render-yaml-worker.mjs build/operator/THIRD_PARTY_LICENSES.txt /app/
# The chart engine (spec.chart): the operator runs `helm template`; built by the toolchain's helm piece.
COPY build/operator/helm /usr/local/bin/helm
ENV NODE_ENV=production
# Two malloc arenas, not one per thread: ~12 MiB less resident memory (components/node-heap.ts, allocatorEnv).
ENV MALLOC_ARENA_MAX=2
# Numeric, so a pod's runAsNonRoot can verify it; the Deployment runs it with a read-only root filesystem.
USER 65532:65532
# Metrics, health probes, admission webhooks (components/operator-endpoints.ts).
EXPOSE 8080 8081 9443
ENTRYPOINT ["/nodejs/bin/node", "/app/myapp-operator.mjs"]
