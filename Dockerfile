# syntax=docker/dockerfile:1
# The operator image: Node 24 running operator/main.ts directly (type stripping, no build step), as uid 65532.
#   docker build -t ghcr.io/example/myapp-operator:0.1.0 .
# Not built on the development machines (no container engine there); see components/README.md.

# ---- dependencies: production packages only, no install scripts (@pulumi/kubernetes's would try a download) ----
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

# ---- runtime: the same Node, the sources the operator imports, a non-root user ----
FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
# The operator's layers and the ground floor they import (see DESIGN.md); nothing of Pulumi, tools or tests.
COPY api ./api
COPY kube ./kube
COPY operator ./operator
# 65532 matches the Deployment's runAsUser (distroless's "nonroot"); numeric so runAsNonRoot can verify it.
USER 65532:65532
EXPOSE 8080 8081
ENTRYPOINT ["node", "operator/main.ts"]
