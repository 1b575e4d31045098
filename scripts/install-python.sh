#!/usr/bin/env bash
# Installs the `ferry` Python package (ferry.data + its native module) from a build into a
# virtualenv or any Python's site-packages.
#   python3 -m venv --system-site-packages .venv     # Debian's torch stays visible
#   bash scripts/install-python.sh .venv             # from build/release (built if missing)
#   bash scripts/install-python.sh .venv build/dev   # another build
# The module is built for Debian's /usr/bin/python3 (3.11); the venv must be made from it.
set -euo pipefail
venv="${1:?usage: install-python.sh VENV_DIR [BUILD_DIR]}"
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${2:-$root/build/release}"
if [[ ! -d "$build/python/ferry" ]]; then
  cmake --preset release -S "$root" >/dev/null
  cmake --build "$root/build/release" --target ferry_native ferry
  build="$root/build/release"
fi
py="$venv/bin/python3"
[[ -x "$py" ]] || { echo "install-python: $py not found (make the venv with /usr/bin/python3 -m venv --system-site-packages $venv)" >&2; exit 1; }
site="$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
rm -rf "$site/ferry"
cp -r "$build/python/ferry" "$site/ferry"
"$py" -c 'import ferry.data; print("installed ferry.data into", ferry.data.__file__.rsplit("/", 2)[0])'
