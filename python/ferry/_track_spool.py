"""The on-disk spool of `ferry.track`: points and images wait here until the server
acknowledged them."""
import json
import os
import pathlib
import threading


def default_spool_root():
    return pathlib.Path(os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache") \
        / "ferry" / "track"


class _Spool:
    """One run's directory: meta.json (what sync needs to recreate or find the run) and
    batch-NNNNNNNN.jsonl files of points not yet acknowledged, and image-NNNNNNNN.bin files
    (with the artifact name in image-NNNNNNNN.name) not yet uploaded; both are sent and deleted
    oldest first, in one sequence. A file appears under its final name only when complete."""

    def __init__(self, directory):
        self.dir = pathlib.Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        existing = self.pending()
        self.seq = int(existing[-1].stem.split("-")[1]) if existing else 0
        self._seq_lock = threading.Lock()   # the training thread writes images, the sender batches

    def _next(self, prefix, suffix):
        with self._seq_lock:
            self.seq += 1
            return self.dir / f"{prefix}-{self.seq:08d}{suffix}"

    def batches(self):
        return sorted(self.dir.glob("batch-*.jsonl"))

    def pending(self):
        """Point batches and images not yet acknowledged, oldest first."""
        return sorted([*self.dir.glob("batch-*.jsonl"), *self.dir.glob("image-*.bin")],
                      key=lambda p: p.stem.split("-")[1])

    @staticmethod
    def _write(path, write, mode="w"):
        """Writes `path` through path.tmp, fsynced, renamed; a failure (a full disk) leaves
        neither file behind and raises the OSError."""
        tmp = path.with_name(path.name + ".tmp") if path.suffix == ".json" else path.with_suffix(".tmp")
        try:
            with open(tmp, mode) as f:
                write(f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except OSError:
            tmp.unlink(missing_ok=True)
            raise

    def write_image(self, name, data):
        path = self._next("image", ".bin")
        try:
            self._write(path.with_suffix(".name"), lambda f: f.write(name))
            self._write(path, lambda f: f.write(data), "wb")
        except OSError:
            path.with_suffix(".name").unlink(missing_ok=True)
            raise
        return path

    @staticmethod
    def image_name(path):
        return pathlib.Path(path).with_suffix(".name").read_text()

    @staticmethod
    def remove_image(path):
        path = pathlib.Path(path)
        path.unlink()
        path.with_suffix(".name").unlink(missing_ok=True)

    def write_batch(self, points):
        path = self._next("batch", ".jsonl")
        text = "".join(json.dumps(p, allow_nan=False) + "\n" for p in points)
        self._write(path, lambda f: f.write(text))
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
        text = json.dumps(meta, indent=1, allow_nan=False)
        self._write(self.dir / "meta.json", lambda f: f.write(text))

    def remove_if_done(self):
        """Deletes the directory once nothing is left to send (refused batches, renamed
        *.rejected, keep it)."""
        if self.pending() or list(self.dir.glob("*.rejected")):
            return False
        for p in self.dir.iterdir():
            p.unlink()
        self.dir.rmdir()
        return True
