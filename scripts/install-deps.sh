#!/usr/bin/env bash
# Installs every Debian package Ferry needs to build, test and benchmark.
# Idempotent: when everything is present it only runs dpkg-query and exits.
#   scripts/install-deps.sh --build  what building ferry needs (with npm's uPlot for the web UI,
#                                    src/ui/web/package.json; pip, setuptools, wheel and venv for
#                                    `pip install --no-build-isolation ./python`)
#   scripts/install-deps.sh --demo   that + what scripts/demo.sh runs (torch, PIL, pip, nginx)
#   scripts/install-deps.sh          build + test dependencies (Ceph RGW, pytest, boto3, Slurm,
#                                    Chromium, the npm clients in tests/tools/npm)
#   scripts/install-deps.sh --bench  also the benchmark peers (awscli, rclone)
set -euo pipefail

build_pkgs=(
  build-essential cmake ninja-build pkg-config git lld
  libcurl4-openssl-dev libssl-dev libpugixml-dev nlohmann-json3-dev libcli11-dev
  libfmt-dev libyaml-cpp-dev libisal-dev libipsec-mb-dev libgtest-dev libgmock-dev libbenchmark-dev
  python3-dev pybind11-dev libfuse3-dev clang-format libboost1.81-dev libsqlite3-dev libpq-dev
  python3-pip python3-setuptools python3-wheel python3-venv
)
# clang 19 (Debian 12's clang 14 and 16 cannot use libstdc++ 12's <expected>): libFuzzer targets
# and the thread-safety analysis (scripts/fuzz.sh, scripts/thread_safety.py, the `clang` preset).
clang_pkgs=(clang-19 libclang-rt-19-dev)
# slurm-wlm and munge: tests/tools/slurm.sh runs a single-node Slurm for the sbatch example's test
# (tests/cli/test_slurm.py); python3-yaml reads the Kubernetes example (tests/cli/test_examples.py);
# nginx-light serves the PyPI stand-in (tests/tools/pypi_standin.py); postgresql is the tracker's
# shared database in tests (tests/tools/postgres.sh); chromium runs the web UI's tests (tests/ui,
# driven by npm's playwright-core; no tool downloads a browser of its own); podman,
# podman-compose, runc and debootstrap build and run the container image (deploy/,
# scripts/container-image.sh, tests/cli/test_container.py).
test_pkgs=(
  radosgw ceph-mon ceph-osd ceph-common uuid-runtime curl python3 python3-pytest python3-boto3
  fuse3 rclone python3-torch python3-numpy python3-pil python3-yaml slurm-wlm munge
  nginx-light postgresql chromium podman podman-compose runc debootstrap
)
bench_pkgs=(awscli time s3fs fio python3-braceexpand)
# scripts/demo.sh: the training (torch, PIL), pip through the cache, the PyPI stand-in (nginx).
demo_pkgs=(python3-torch python3-numpy python3-pil nginx-light)

case "${1:-}" in
  --build) want=("${build_pkgs[@]}") ;;
  --demo) want=("${build_pkgs[@]}" "${demo_pkgs[@]}") ;;
  --bench) want=("${build_pkgs[@]}" "${test_pkgs[@]}" "${bench_pkgs[@]}") ;;
  "") want=("${build_pkgs[@]}" "${test_pkgs[@]}" "${clang_pkgs[@]}") ;;
  *) echo "usage: install-deps.sh [--build|--demo|--bench]" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#want[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt_get() { apt-get -o DPkg::Lock::Timeout=600 "$@"; }
  # Refresh package lists only when an install fails for lack of them.
  apt_get install -y --no-install-recommends "${missing[@]}" ||
    { apt_get update && apt_get install -y --no-install-recommends "${missing[@]}"; }
fi

# npm packages, each directory pinned by its package-lock.json and installed again only when the
# lock file changed since the last install: the web UI's build-time assets (src/ui/web: uPlot,
# embedded into the binary, so also for --build) and the clients the tests drive
# (tests/tools/npm). Node and npm from Debian unless some node with npm is there already (a
# NodeSource nodejs conflicts with Debian's npm package).
if ! command -v npm >/dev/null; then
  apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends nodejs npm
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
npm_dirs=("$root/src/ui/web")
if [[ "${1:-}" != "--build" && "${1:-}" != "--demo" ]]; then
  npm_dirs+=("$root/tests/tools/npm")
fi
for npm_dir in "${npm_dirs[@]}"; do
  stamp="$npm_dir/node_modules/.ferry-installed"
  if [[ ! -f "$stamp" || "$npm_dir/package-lock.json" -nt "$stamp" ]]; then
    echo "install-deps: npm ci in ${npm_dir#"$root"/}"
    npm ci --prefix "$npm_dir" --no-audit --no-fund --loglevel=error
    touch "$stamp"
  else
    echo "install-deps: npm packages present in ${npm_dir#"$root"/}"
  fi
done
