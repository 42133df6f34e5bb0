# syntax=docker/dockerfile:1
# The operator image: Node 24 running operator/main.ts directly (type stripping, no build step), as uid 65532.
#   docker build -t ghcr.io/example/myapp-operator:0.1.0 .
# Not built on the development machines (no container engine there); see components/README.md.

# ---- dependencies: production packages only, no install scripts (@pulumi/kubernetes's would try a download) ----
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

# ---- helm: the chart engine (spec.chart), built from the same wrapper module as the local toolchain ----
FROM golang:1.26-bookworm AS helm
WORKDIR /src
COPY tools/go/helm ./
RUN CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath \
      -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$(sed -n 's/.*helm.sh\/helm\/v4 \(v[^ ]*\).*/\1/p' go.mod)" \
      -o /out/helm helm.sh/helm/v4/cmd/helm

# ---- runtime: the same Node, the sources the operator imports, a non-root user ----
FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
# The operator's layers and the ground floor they import (see DESIGN.md); nothing of Pulumi, tools or tests.
COPY api ./api
COPY chart ./chart
COPY kube ./kube
COPY operator ./operator
COPY --from=helm /out/helm /usr/local/bin/helm
# 65532 matches the Deployment's runAsUser (distroless's "nonroot"); numeric so runAsNonRoot can verify it.
USER 65532:65532
EXPOSE 8080 8081
ENTRYPOINT ["node", "operator/main.ts"]
