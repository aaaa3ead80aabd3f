#!/usr/bin/env bash
# Builds the five service images from the repository's Dockerfile with buildah (no Docker daemon
# needed) and proves them: every service starts from its image against the servers of
# infra/local/servers.sh and the system smoke runs through the gateway image.
#
#   bash infra/images/build.sh [base|images|smoke|all|clean]     (default: all)
#
# base    A Debian trixie root file system made by mmdebstrap from Debian's packages, with the
#         Node.js this machine runs (binary, npm, headers for node-gyp), the machine's CA bundle
#         and apt sources, and a "node" user (uid 1000): the image NODE_IMAGE points at. It is
#         kept as a tar under IMAGE_CACHE_DIR, keyed by the Node version and this script, and
#         reused while the key holds (CI keeps that folder between runs).
# images  The five images, tagged portal-<service>:$IMAGE_TAG (default: the git commit).
#         buildah's layer cache shares the stages that do not depend on SERVICE (npm ci, tsc,
#         the web build), so they run once.
# clean   Removes the five images of every other tag, older bases, and the layer cache (buildah's
#         untagged images): buildah's storage otherwise grows with every build.
# smoke   Starts each image's service with `buildah run` (the image's own file system, as user
#         node, host network) and runs tests/images/smoke.test.ts against the gateway image.
#
# Needs: buildah and mmdebstrap (apt-get install buildah mmdebstrap), root (or a user with
# subordinate ids for buildah), and for smoke the servers' addresses in the environment
# (set -a; . infra/local/.env.servers; set +a).
#
# Environment: IMAGE_TAG, IMAGE_CACHE_DIR (default ~/.cache/portal-images), BUILDAH_ISOLATION
# (default chroot: works without a container runtime), NODE_BASE_IMAGE (skip "base" and build
# on this image instead, e.g. the Dockerfile's node:24-trixie-slim@sha256:... where a registry of
# images is reachable), DEBIAN_SUITE (default trixie) and DEBIAN_MIRROR, DEBIAN_SECURITY_MIRROR
# (default deb.debian.org: the base's apt sources, whatever this machine runs).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD

SERVICES=(gateway identity evidence media-worker notifier)
IMAGE_TAG=${IMAGE_TAG:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo dev)}
IMAGE_CACHE_DIR=${IMAGE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/portal-images}
ISOLATION=${BUILDAH_ISOLATION:-chroot}
BASE_REPO=localhost/portal-node-base
started=$SECONDS
say() { echo "[images $((SECONDS - started)) s] $*"; }

node_prefix() { dirname "$(dirname "$(command -v node)")"; }

DEBIAN_SUITE=${DEBIAN_SUITE:-trixie}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
DEBIAN_SECURITY_MIRROR=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}

# The base's key: what goes into it. A new Node on the machine, another suite or mirror, or a
# change to this script makes a new base; the Debian packages are whatever the suite has on the
# day the key first appears (its security updates included: make a new base to take newer ones).
base_key() {
  { node --version; npm --version; echo "$DEBIAN_SUITE $DEBIAN_MIRROR $DEBIAN_SECURITY_MIRROR"; sed -n '/^make_base()/,/^}/p' "$0"; } | sha256sum | cut -c1-16
}

make_base() {
  local out=$1 prefix
  prefix=$(node_prefix)
  [ -f "$prefix/include/node/node_version.h" ] || { echo "Node's headers are not under $prefix/include/node" >&2; exit 1; }
  # minbase: dpkg, apt and the essential packages; documentation and locales left out. The suite
  # with its updates and security updates, whatever this machine runs; mmdebstrap keeps these
  # sources in the image (the Dockerfile's apt-get reads them) and checks them with this
  # machine's keyring (bookworm's debian-archive-keyring 2023.3+deb12u2 holds trixie's keys).
  mmdebstrap --quiet --variant=minbase --include=ca-certificates \
    --aptopt='Acquire::Check-Valid-Until "false"' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --customize-hook="tar -C '$prefix' -c bin/node include/node lib/node_modules/npm | tar -C \"\$1/usr\" -x" \
    --customize-hook='ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/bin/npm"' \
    --customize-hook='ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/bin/npx"' \
    --customize-hook='cp /etc/ssl/certs/ca-certificates.crt "$1/etc/ssl/certs/ca-certificates.crt"' \
    --customize-hook='mkdir -p "$1/usr/etc" && printf "cafile=/etc/ssl/certs/ca-certificates.crt\nfund=false\naudit=false\nupdate-notifier=false\n" > "$1/usr/etc/npmrc"' \
    --customize-hook='chroot "$1" groupadd --gid 1000 node && chroot "$1" useradd --uid 1000 --gid node --create-home --shell /bin/bash node' \
    --customize-hook='rm -rf "$1/var/lib/apt/lists/"* "$1/var/cache/apt/"*' \
    "$DEBIAN_SUITE" "$out" \
    "deb $DEBIAN_MIRROR $DEBIAN_SUITE main" \
    "deb $DEBIAN_MIRROR $DEBIAN_SUITE-updates main" \
    "deb $DEBIAN_SECURITY_MIRROR $DEBIAN_SUITE-security main"
}

cmd_base() {
  if [ -n "${NODE_BASE_IMAGE:-}" ]; then say "base: $NODE_BASE_IMAGE (given)"; echo "$NODE_BASE_IMAGE" > "$IMAGE_CACHE_DIR/.base"; return; fi
  mkdir -p "$IMAGE_CACHE_DIR"
  local key image tar
  key=$(base_key)
  image="$BASE_REPO:$key"
  tar="$IMAGE_CACHE_DIR/base-$key.tar"
  if buildah inspect --type image "$image" >/dev/null 2>&1; then
    say "base: $image (in buildah's storage)"
  else
    if [ -f "$tar" ]; then
      say "base: root file system from the cache ($tar)"
    else
      say "base: making the root file system (mmdebstrap, $DEBIAN_SUITE, Node $(node --version))"
      rm -rf "$tar.partial.tar"
      make_base "$tar.partial.tar"
      mv "$tar.partial.tar" "$tar"
      find "$IMAGE_CACHE_DIR" -name 'base-*.tar' ! -name "base-$key.tar" -delete
    fi
    local ctr
    ctr=$(buildah from --pull=never scratch)
    buildah add --quiet "$ctr" "$tar" / >/dev/null
    buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      --env NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
      --env npm_config_nodedir=/usr --cmd node \
      --label "org.opencontainers.image.description=Debian $DEBIAN_SUITE with Node $(node --version)" "$ctr"
    buildah commit --quiet --rm "$ctr" "$image" >/dev/null
    say "base: $image"
  fi
  echo "$image" > "$IMAGE_CACHE_DIR/.base"
}

target_of() { if [ "$1" = media-worker ]; then echo media-worker; else echo service; fi; }

cmd_images() {
  [ -f "$IMAGE_CACHE_DIR/.base" ] || cmd_base
  local base
  base=$(cat "$IMAGE_CACHE_DIR/.base")
  for service in "${SERVICES[@]}"; do
    say "image portal-$service:$IMAGE_TAG (target $(target_of "$service"), on $base)"
    buildah bud --quiet --isolation "$ISOLATION" --pull=never --layers \
      --build-arg NODE_IMAGE="$base" --build-arg SERVICE="$service" \
      --target "$(target_of "$service")" \
      --label "org.opencontainers.image.revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)" \
      --tag "localhost/portal-$service:$IMAGE_TAG" --file Dockerfile . >/dev/null
  done
  say "sizes:"
  buildah images --format '{{.Name}}:{{.Tag}} {{.Size}}' | grep -E "portal-($(IFS='|'; echo "${SERVICES[*]}")):$IMAGE_TAG" | sed 's/^/  /'
}

cmd_smoke() {
  for name in KAFKA_BROKERS MONGO_URL REDIS_URL S3_BUCKET SMTP_URL; do
    [ -n "${!name:-}" ] || { echo "$name is not set: load infra/local/.env.servers" >&2; exit 1; }
  done
  say "smoke: the five images against the servers, the system smoke through the gateway image"
  PORTAL_IMAGE_TAG="$IMAGE_TAG" BUILDAH_ISOLATION="$ISOLATION" \
    npx vitest run --config vitest.images.config.ts
}

cmd_clean() {
  local keep
  keep=$(cat "$IMAGE_CACHE_DIR/.base" 2>/dev/null || true)
  buildah images --format '{{.Name}}:{{.Tag}}' | while read -r image; do
    case "$image" in
      "$keep") ;;
      localhost/portal-node-base:*) buildah rmi "$image" >/dev/null ;;
      localhost/portal-*:"$IMAGE_TAG") ;;
      localhost/portal-*) buildah rmi "$image" >/dev/null ;;
    esac
  done
  buildah rmi --prune >/dev/null || true
  say "clean: kept $keep and the images tagged $IMAGE_TAG"
}

# One compound command, read whole before it runs: editing this file during a build is harmless.
main() {
  case "${1:-all}" in
    base) cmd_base ;;
    images) cmd_images ;;
    smoke) cmd_smoke ;;
    all) cmd_base; cmd_images; cmd_smoke ;;
    clean) cmd_clean ;;
    *) echo "usage: $0 [base|images|smoke|all|clean]" >&2; exit 2 ;;
  esac
  say "done"
}
main "$@"; exit
