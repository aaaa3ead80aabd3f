# syntax=docker/dockerfile:1.7
# One Dockerfile for the five service images, built from the repository root:
#   docker build --build-arg SERVICE=identity --target service -t portal-identity .
#   docker build --build-arg SERVICE=media-worker --target media-worker -t portal-media-worker .
# SERVICE is one of gateway, identity, evidence, notifier (target "service") or media-worker
# (target "media-worker", which adds Debian's ffmpeg). infra/images/build.sh builds all five (with
# buildah where there is no Docker) and boots them.
#
# The stages before "runtime" do not depend on SERVICE, so a builder with a layer cache runs
# `npm ci` (which compiles better-sqlite3) and the TypeScript and web builds once for all five
# images. The toolchain (python3, make, g++) stays in those stages; the images run as the
# unprivileged "node" user (uid 1000).
#
# Node 24 is the supported LTS the images run on (Node 20 reached its end of life in April 2026),
# on Debian 13 (trixie; bookworm's regular security support ended in June 2026). The default is
# pinned by digest: a tag is moved by every rebuild of the image, a digest always means the same
# bytes (update both together). NODE_IMAGE may name any Debian trixie based image with node and
# npm in PATH, Node's headers (for node-gyp) and a "node" user: infra/images/build.sh gives its own.
ARG NODE_IMAGE=node:24-trixie-slim@sha256:8ec5d7557396cfe32d21c3f9c13072355ceab22b584578ca4bb28af31120cffe

FROM ${NODE_IMAGE} AS toolchain
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app

# The manifests only: the dependency layers below stay cached until one of them changes.
FROM toolchain AS manifests
COPY package.json package-lock.json ./
COPY packages/contracts/package.json packages/contracts/
COPY packages/platform/package.json packages/platform/
COPY packages/all-in-one/package.json packages/all-in-one/
COPY services/identity/package.json services/identity/
COPY services/evidence/package.json services/evidence/
COPY services/media-worker/package.json services/media-worker/
COPY services/notifier/package.json services/notifier/
COPY services/gateway/package.json services/gateway/
COPY web/package.json web/

# What the five services need at run time, compiled once (better-sqlite3 builds from source).
FROM manifests AS prod-deps
RUN npm ci --omit=dev --no-audit --no-fund \
      --workspace @portal/gateway --workspace @portal/identity --workspace @portal/evidence \
      --workspace @portal/media-worker --workspace @portal/notifier

# The build adds the development dependencies to those (npm keeps what is installed, so nothing
# compiles twice), then builds every workspace and the web app.
FROM prod-deps AS build
RUN npm install --no-audit --no-fund
COPY tsconfig.base.json tsconfig.json ./
COPY packages ./packages
COPY services ./services
COPY web ./web
RUN npx tsc -b && npm run build -w web

# One service's files: the shared packages, the service, its dependencies. The npm ffmpeg/ffprobe
# static builds (about 150 MB) stay only where they are used: the evidence service keeps ffprobe
# (it probes uploads); the media worker uses Debian's ffmpeg (target media-worker); the others use
# neither. The face detector (TensorFlow.js, its WASM binaries and face-api's model files, read
# from disk: docs/decisions/0044) stays only in the media worker. Only the gateway carries the built web app. Of better-sqlite3 only the compiled module
# stays (its SQLite sources and object files are 25 MB).
FROM prod-deps AS runtime
ARG SERVICE
RUN case "$SERVICE" in gateway|identity|evidence|media-worker|notifier) ;; \
      *) echo "--build-arg SERVICE=<gateway|identity|evidence|media-worker|notifier> is required" >&2; exit 1 ;; esac
COPY --from=build /app/packages/contracts/dist ./packages/contracts/dist
COPY --from=build /app/packages/platform/dist ./packages/platform/dist
# The backup script (k8s/components/backup-cronjob runs it in the identity image, whose
# node_modules hold MongoDB's driver and the S3 client it needs).
COPY infra/backup/portal-backup.mjs ./infra/backup/portal-backup.mjs
COPY --from=build /app/services/${SERVICE}/dist ./services/${SERVICE}/dist
COPY --from=build /app/web/dist ./build-web
RUN mkdir -p web/dist \
 && if [ "$SERVICE" = gateway ]; then cp -a build-web/. web/dist/; fi \
 && rm -rf build-web packages/all-in-one \
 && for other in gateway identity evidence media-worker notifier; do \
      if [ "$other" != "$SERVICE" ]; then rm -rf "services/$other" "node_modules/@portal/$other"; fi; \
    done \
 && rm -rf node_modules/@portal/all-in-one node_modules/@portal/web node_modules/@ffmpeg-installer \
 && if [ "$SERVICE" != evidence ]; then rm -rf node_modules/@ffprobe-installer; fi \
 && if [ "$SERVICE" != media-worker ]; then rm -rf node_modules/@tensorflow node_modules/@vladmandic; \
    else rm -rf node_modules/@vladmandic/face-api/demo; find node_modules/@tensorflow node_modules/@vladmandic -name '*.map' -delete; fi \
 && cd node_modules/better-sqlite3 \
 && rm -rf deps src build/deps build/Release/obj build/Release/obj.target build/Release/.deps build/Release/test_extension.node \
 && cd /app \
 && ln -s "services/$SERVICE/dist/main.js" main.js

FROM ${NODE_IMAGE} AS service
ENV NODE_ENV=production WEB_DIST=/app/web/dist
WORKDIR /app
COPY --from=runtime --chown=node:node /app ./
USER node
# Ports: gateway 8080 (metrics 9464), identity 4001, evidence 4002, media-worker 4003, notifier 4004.
CMD ["node", "main.js"]

# The media worker: Debian's ffmpeg first, so that its layer stays cached while the code changes.
# Debian's ffmpeg brings Mesa's OpenGL/Vulkan drivers and the LLVM they compile shaders with
# (about 160 MB) for its device and filter libraries; nothing here renders with a GPU, and the
# drivers are loaded only on demand, so they go (the ldd check fails the build if a library that
# ffmpeg or ffprobe links to is missing).
FROM ${NODE_IMAGE} AS ffmpeg
USER root
RUN apt-get update \
 && apt-get install -y --no-install-recommends ffmpeg \
 && unused=$(dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' 'libgl1-mesa-dri' 'mesa-vulkan-drivers' 'libllvm*' 'libz3-*' 2>/dev/null | awk '$1 == "ii" { print $2 }') \
 && if [ -n "$unused" ]; then dpkg --purge --force-depends $unused; fi \
 && if ldd /usr/bin/ffmpeg /usr/bin/ffprobe | grep 'not found'; then exit 1; fi \
 && ffmpeg -hide_banner -loglevel error -f lavfi -i testsrc2=size=64x64:duration=1 -c:v libx264 -f null - \
 && rm -rf /var/lib/apt/lists/*

FROM ffmpeg AS media-worker
ENV NODE_ENV=production WEB_DIST=/app/web/dist
WORKDIR /app
COPY --from=runtime --chown=node:node /app ./
USER node
CMD ["node", "main.js"]
