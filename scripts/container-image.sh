#!/usr/bin/env bash
# Builds the `ferry serve` container image with Debian's podman (deploy/Containerfile,
# docs/guides/deploy-on-a-nas.md). Idempotent; each step is skipped when its result is there.
#   scripts/container-image.sh setup            podman settings this machine needs (below)
#   scripts/container-image.sh base             the Debian 12 base image, from debootstrap
#                                               (no registry is reachable here), cached
#   scripts/container-image.sh pack [FERRY]     the image with a ferry binary built already
#                                               (default build/release/src/apps/ferry): the fast
#                                               path, seconds once the base is there
#   scripts/container-image.sh build            the image built from source inside a container
#                                               (the Containerfile's default target)
# Environment: FERRY_IMAGE (default localhost/ferry:latest), FERRY_BASE_IMAGE (default
# localhost/debian:bookworm-min), FERRY_IMAGE_PACKAGES (extra Debian packages in the image, e.g.
# "libasan8 libubsan1" for a sanitizer build), FERRY_CONTAINER_CACHE (where the base's tarball
# is kept; default /var/cache/ferry-container).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
image="${FERRY_IMAGE:-localhost/ferry:latest}"
base="${FERRY_BASE_IMAGE:-localhost/debian:bookworm-min}"
cache="${FERRY_CONTAINER_CACHE:-/var/cache/ferry-container}"
say() { echo "container-image: $*" >&2; }

setup() {
  command -v podman >/dev/null || { say "podman is missing: scripts/install-deps.sh installs it"; exit 1; }
  local conf=/etc/containers/containers.conf.d/ferry.conf
  if [[ -f "$conf" ]]; then return; fi
  # Only what this machine needs, each found by a probe and said once:
  # - crun (podman's default runtime) fails on some hosts with "cgroups in hybrid mode not
  #   supported"; Debian's runc works there.
  # - podman's default ulimits fail on some hosts ("setrlimit RLIMIT_NOFILE: Operation not
  #   permitted"); then the container keeps the limits podman itself has.
  local runtime=crun engine="" containers=""
  if ! podman --runtime crun run --rm --network none --ulimit host "$base" true >/dev/null 2>&1; then
    runtime=runc
    engine="runtime = \"runc\""
    say "podman: runtime runc (crun does not run containers here: $(podman --runtime crun run --rm \
      --network none --ulimit host "$base" true 2>&1 | tail -1))"
  fi
  if ! podman --runtime "$runtime" run --rm --network none "$base" true >/dev/null 2>&1; then
    containers="default_ulimits = []"
    say "podman: default_ulimits = [] (its default ulimits fail here: $(podman --runtime \
      "$runtime" run --rm --network none "$base" true 2>&1 | tail -1))"
  fi
  [[ -z "$engine$containers" ]] && return
  install -d "$(dirname "$conf")"
  {
    echo "# Written by ferry's scripts/container-image.sh: what podman needs on this machine."
    [[ -n "$containers" ]] && printf '[containers]\n%s\n' "$containers"
    [[ -n "$engine" ]] && printf '[engine]\n%s\n' "$engine"
    true
  } >"$conf"
  say "wrote $conf"
}

base_image() {
  if podman image exists "$base"; then return; fi
  local tar="$cache/bookworm-minbase.tar"
  if [[ ! -s "$tar" ]]; then
    command -v debootstrap >/dev/null || { say "debootstrap is missing: scripts/install-deps.sh installs it"; exit 1; }
    local mirror
    mirror="$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)"
    mirror="${mirror:-http://deb.debian.org/debian}"
    local rootfs
    rootfs="$(mktemp -d)"
    say "debootstrap bookworm (minbase) from $mirror: about 3 minutes, once"
    debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$rootfs.log" 2>&1 ||
      { tail -5 "$rootfs.log" >&2; rm -rf "$rootfs"; say "debootstrap failed (log above)"; exit 1; }
    # No package lists or caches in the base: each image's apt-get update fetches its own.
    rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin
    install -d "$cache"
    tar -C "$rootfs" -cf "$tar.part" . && mv "$tar.part" "$tar"
    rm -rf "$rootfs" "$rootfs.log"
  fi
  podman import --quiet "$tar" "$base" >/dev/null
  say "base image $base ($(podman image inspect --format '{{.Size}}' "$base") bytes)"
}

build_args() {
  printf '%s\n' --format docker --build-arg "BASE=$base" \
    --build-arg "EXTRA_PACKAGES=${FERRY_IMAGE_PACKAGES:-}" -f "$root/deploy/Containerfile"
}

pack() {
  local bin="${1:-$root/build/release/src/apps/ferry}"
  [[ -x "$bin" ]] || { say "no ferry binary at $bin (cmake --preset release && cmake --build --preset release --target ferry)"; exit 1; }
  local ctx
  ctx="$(mktemp -d)"
  trap 'rm -rf "$ctx"' RETURN
  # Without its debug info (a release build's 120 MiB of it): the image carries ~5 MiB of ferry.
  strip -o "$ctx/ferry" "$bin" 2>/dev/null || cp "$bin" "$ctx/ferry"
  cp "$root/deploy/ferry-entrypoint" "$ctx/"
  mapfile -t args < <(build_args)
  podman build --quiet "${args[@]}" --target prebuilt -t "$image" "$ctx" >/dev/null
  say "image $image ($(podman image inspect --format '{{.Size}}' "$image") bytes) from $bin"
}

from_source() {
  mapfile -t args < <(build_args)
  # The build stage fetches uPlot from npm: where the host's npm trusts a CA bundle of its own
  # (a network that intercepts TLS), the build gets the same one, read-only.
  local cafile
  cafile="$(npm config get cafile 2>/dev/null || true)"
  if [[ -n "$cafile" && "$cafile" != null && -f "$cafile" ]]; then
    args+=(--volume "$cafile:/run/host-npm-ca.crt:ro" --build-arg NPM_CAFILE=/run/host-npm-ca.crt)
  fi
  podman build "${args[@]}" -t "$image" "$root"
  say "image $image ($(podman image inspect --format '{{.Size}}' "$image") bytes), built from source"
}

case "${1:-}" in
  setup) base_image; setup ;;
  base) base_image; setup ;;
  pack) base_image; setup; pack "${2:-}" ;;
  build) base_image; setup; from_source ;;
  *) echo "usage: container-image.sh setup|base|pack [FERRY]|build" >&2; exit 2 ;;
esac
