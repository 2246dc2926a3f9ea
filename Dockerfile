# mcp-warden: build with the dev toolchain, run with production dependencies only.
# Node 26 is the current LTS line; the code itself needs >=20.18.1 (package.json engines).
# .ci/run runs each of these steps as plain commands, since CI has no Docker engine.
FROM node:26-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` builds, and the sources are copied only below.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# The runtime stage takes the JavaScript only: no source maps, declarations or build info.
RUN npm run build && find dist -type f \( -name '*.map' -o -name '*.d.ts' -o -name .tsbuildinfo \) -delete

FROM node:26-slim
ENV NODE_ENV=production
# A smaller young generation keeps peak RSS of big transfers well under 150 MB at no measured cost
# in throughput (test/bench/ANALYSIS.md); npm run bench runs mcp-warden with these options too.
ENV NODE_OPTIONS="--max-semi-space-size=4"
# tini as PID 1: it reaps `mcp-warden stdio` servers' orphans and passes signals on (Kubernetes has
# no `docker run --init`).
RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# Source maps and type declarations serve no one at run time: 27 of the 54 MB of node_modules.
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force \
  && find node_modules -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \) -delete
COPY --from=build /app/dist ./dist
COPY config ./config
# Captures (the policy's capture.path) go here: the one directory the proxy writes, a volume in
# Kubernetes (deploy/kubernetes mounts an emptyDir, the root file system read-only).
RUN mkdir -p /var/lib/mcp-warden && chown node:node /var/lib/mcp-warden
# node, by number: Kubernetes' runAsNonRoot can verify a numeric user only.
USER 1000:1000
# The MCP port (--listen), the peer port of a fleet (--peer-address), the admin port (--admin).
EXPOSE 8787 8788 9090
ENTRYPOINT ["/usr/bin/tini", "--", "node", "dist/cli.js"]
CMD ["--help"]
