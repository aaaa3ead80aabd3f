# syntax=docker/dockerfile:1.7
# One Dockerfile for the five service images, built from the repository root:
#   docker build --build-arg SERVICE=identity --target service -t portal-identity .
#   docker build --build-arg SERVICE=media-worker --target media-worker -t portal-media-worker .
# SERVICE is one of gateway, identity, evidence, notifier (target "service") or media-worker
# (target "media-worker", which adds Debian's ffmpeg). Multi-stage: the toolchain that compiles
# better-sqlite3 stays in the build stages; the image runs as the unprivileged "node" user.
ARG NODE_IMAGE=node:20.19-bookworm-slim

FROM ${NODE_IMAGE} AS toolchain
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app

FROM toolchain AS build
ARG SERVICE
RUN test -n "$SERVICE" || { echo "--build-arg SERVICE=<gateway|identity|evidence|media-worker|notifier> is required" >&2; exit 1; }
COPY package.json package-lock.json tsconfig.base.json tsconfig.json ./
COPY packages ./packages
COPY services ./services
COPY web ./web
RUN npm ci --no-audit --no-fund
# The gateway also serves the built web app; the other images carry an empty web/dist.
RUN npx tsc -b "services/$SERVICE" \
 && if [ "$SERVICE" = gateway ]; then npm run build -w web; else rm -rf web/dist && mkdir -p web/dist; fi

FROM toolchain AS runtime-deps
ARG SERVICE
COPY package.json package-lock.json ./
COPY --from=build /app/packages ./packages
COPY --from=build /app/services ./services
COPY web/package.json ./web/package.json
# Only what this service needs at run time. The media worker uses the system's ffmpeg, so the npm
# fallback builds (about 150 MB) are removed from its image; the evidence service keeps them for
# ffprobe. (--omit=optional would also drop sharp's prebuilt libvips, an optional dependency.)
RUN npm ci --omit=dev --no-audit --no-fund --workspace "@portal/$SERVICE" \
 && if [ "$SERVICE" = media-worker ]; then rm -rf node_modules/@ffmpeg-installer node_modules/@ffprobe-installer; fi \
 && ln -s "services/$SERVICE/dist/main.js" main.js

FROM ${NODE_IMAGE} AS service
ENV NODE_ENV=production WEB_DIST=/app/web/dist
WORKDIR /app
COPY --from=runtime-deps --chown=node:node /app ./
COPY --from=build --chown=node:node /app/web/dist ./web/dist
USER node
# Ports: gateway 8080 (metrics 9464), identity 4001, evidence 4002, media-worker 4003, notifier 4004.
CMD ["node", "main.js"]

FROM service AS media-worker
USER root
RUN apt-get update \
 && apt-get install -y --no-install-recommends ffmpeg \
 && rm -rf /var/lib/apt/lists/*
USER node
