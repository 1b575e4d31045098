#!/usr/bin/env bash
# Ferry's main job on one machine, with a local directory as the NAS and no server to install by
# hand: installs what is missing (Debian packages), builds ferry (release) and its Python module,
# then runs scripts/demo.py: ferry serve (tracker, UI, cache) on the NAS, a dataset packed into
# shards, a PyTorch training under `ferry run --track` interrupted once and resumed, the loader's
# speed, wheels installed through the cache. Run as root from the repository root:
#   bash scripts/demo.sh            # about 20 s after the build
#   bash scripts/demo.sh --keep     # leave ferry serve running to browse the UI
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --demo
cmake --preset release >/dev/null
cmake --build --preset release --target ferry ferry_native
exec /usr/bin/python3 scripts/demo.py --ferry build/release/src/apps/ferry \
  --python-path build/release/python --dir /tmp/ferry-demo "$@"
