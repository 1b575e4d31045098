"""The on-disk spool of `ferry.track`: points wait here until the server acknowledged them."""
import json
import os
import pathlib


def default_spool_root():
    return pathlib.Path(os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache") \
        / "ferry" / "track"


class _Spool:
    """One run's directory: meta.json (what sync needs to recreate or find the run) and
    batch-NNNNNNNN.jsonl files of points not yet acknowledged, sent and deleted oldest first."""

    def __init__(self, directory):
        self.dir = pathlib.Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        existing = self.batches()
        self.seq = int(existing[-1].stem.split("-")[1]) if existing else 0

    def batches(self):
        return sorted(self.dir.glob("batch-*.jsonl"))

    def write_batch(self, points):
        self.seq += 1
        path = self.dir / f"batch-{self.seq:08d}.jsonl"
        tmp = path.with_suffix(".tmp")
        with open(tmp, "w") as f:
            f.writelines(json.dumps(p, allow_nan=False) + "\n" for p in points)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        return path

    @staticmethod
    def read_batch(path):
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]

    def meta(self):
        p = self.dir / "meta.json"
        return json.loads(p.read_text()) if p.exists() else {}

    def update_meta(self, **values):
        meta = self.meta()
        meta.update(values)
        tmp = self.dir / "meta.json.tmp"
        tmp.write_text(json.dumps(meta, indent=1, allow_nan=False))
        os.replace(tmp, self.dir / "meta.json")

    def remove_if_done(self):
        """Deletes the directory once nothing is left to send (refused batches, renamed
        *.rejected, keep it)."""
        if self.batches() or list(self.dir.glob("*.rejected")):
            return False
        for p in self.dir.iterdir():
            p.unlink()
        self.dir.rmdir()
        return True
