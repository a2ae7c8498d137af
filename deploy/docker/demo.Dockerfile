# The demo platform of docker compose's `demo` profile (deploy/docker/demo/main.ts): the recorded
# YouTube replay of `npm run demo`, plus the seeding of the fixed demo key. Not a subx service
# image (those come from deploy/docker/Dockerfile and carry no test code or fixtures): this one
# exists to carry the recorded fixtures.
#   docker build -f deploy/docker/demo.Dockerfile -t subx/demo-youtube .
ARG NODE_IMAGE=node:24-slim

FROM ${NODE_IMAGE} AS prune
ARG TURBO_VERSION=2.11.11
RUN npm install -g "turbo@${TURBO_VERSION}" --no-audit --no-fund
WORKDIR /repo
COPY . .
# @subx/testing holds the replaying fake; the gateway's sources give the key hashing and types.
RUN node deploy/docker/runtime-manifests.mjs services/*/package.json packages/*/package.json \
 && turbo prune @subx/testing @subx/gateway --docker --out-dir /out

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY --from=prune /out/json/ ./
RUN npm pkg delete devDependencies \
 && npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/ ./
COPY --from=prune /out/full/ ./
COPY services/embedded/src/demo.ts /app/services/embedded/src/demo.ts
COPY services/embedded/src/demo-speech.ts /app/services/embedded/src/demo-speech.ts
COPY services/embedded/src/demo-embeddings.ts /app/services/embedded/src/demo-embeddings.ts
COPY deploy/docker/demo/main.ts /app/deploy/docker/demo/main.ts
USER node
EXPOSE 8079
ENV DEMO_YOUTUBE_PORT=8079
CMD ["node", "--disable-warning=ExperimentalWarning", "/app/deploy/docker/demo/main.ts"]
HEALTHCHECK --interval=5s --timeout=3s --start-period=20s --retries=5 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.DEMO_YOUTUBE_PORT + '/sw.js_data').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
