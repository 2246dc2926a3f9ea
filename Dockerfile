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
RUN npm run build

FROM node:26-slim
ENV NODE_ENV=production
# A smaller young generation keeps peak RSS of big transfers well under 150 MB at no measured cost
# in throughput (test/bench/ANALYSIS.md); npm run bench runs mcp-warden with these options too.
ENV NODE_OPTIONS="--max-semi-space-size=4"
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY config ./config
USER node
EXPOSE 8787
ENTRYPOINT ["node", "dist/cli.js"]
CMD ["--help"]
