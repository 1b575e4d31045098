#!/usr/bin/env python3
"""Train a small image classifier from WebDataset shards on a NAS or in S3, under `ferry run`.

    ferry run --track http://nas:8780 --experiment demo \\
        --resume ckpt --out ckpt=/nas/runs/{job}/{attempt}/ --delete-after-upload 'ckpt.pt' \\
        -- python3 examples/train.py --data /nas/shards/train.index.json --out ckpt

What it shows (scripts/demo.sh runs it twice, interrupted once):
- the data streams from the shards with `ferry.data.ShardDataset` (no copy to local disk first),
  decoded in DataLoader workers, and `ferry.data.timed` makes data stalls a chart
  (`data/train/wait_fraction`, `batches_per_second`; docs/semantics/shards.md, "Data stalls");
- metrics go to the run that `ferry run --track` created (`ferry.track.init` attaches to
  MLFLOW_RUN_ID; with --mlflow, plain MLflow calls do the same);
- a checkpoint (model, optimiser, step and the loader's exact position) is written whole or not
  at all every --checkpoint-every steps, and `ferry run` is asked to upload it at once;
- on SIGTERM (preemption, `scancel`, a Kubernetes eviction) it saves one more checkpoint and
  exits 143; the next attempt of the same job starts where it stopped: `ferry run --resume`
  puts the newest complete checkpoint into FERRY_RESUME_DIR.
Runs on a CPU in about a minute with the demo's dataset.
"""
import argparse
import io
import os
import signal
import sys
import time

import torch
from torch import nn
from torch.utils.data import DataLoader

import ferry.data
from ferry.data import ShardDataset


def to_tensors(batch):
    """Collate: PNG bytes -> float tensor N x 3 x H x W, class -> long tensor (in the workers)."""
    from PIL import Image
    images = []
    for png in batch["png"]:
        with Image.open(io.BytesIO(png)) as im:
            images.append(torch.frombuffer(bytearray(im.convert("RGB").tobytes()),
                                           dtype=torch.uint8).view(im.height, im.width, 3))
    x = torch.stack(images).permute(0, 3, 1, 2).float().div_(255)
    y = torch.tensor([int(c) for c in batch["cls"]])
    return x, y, list(batch["__key__"])


def collate(samples):
    return to_tensors({k: [s[k] for s in samples] for k in samples[0]})


def save_checkpoint(directory, state):
    """ckpt.pt whole or not at all: written to a temporary name, then renamed."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "ckpt.pt")
    torch.save(state, path + ".tmp")
    os.replace(path + ".tmp", path)


def request_sync(timeout=120):
    """Asks `ferry run` to upload the outputs now and waits until it has (FERRY_SYNC_TRIGGER)."""
    trigger = os.environ.get("FERRY_SYNC_TRIGGER")
    if not trigger:
        return
    open(trigger, "w").close()
    deadline = time.time() + timeout
    while os.path.exists(trigger) and time.time() < deadline:
        time.sleep(0.05)
    if os.path.exists(trigger + ".failed"):
        print("checkpoint upload failed:", open(trigger + ".failed").read(), file=sys.stderr)


class Logger:
    """ferry.track by default; --mlflow uses the mlflow package's own calls instead."""

    def __init__(self, use_mlflow, config):
        self.mlflow = None
        if use_mlflow:
            import mlflow  # MLFLOW_TRACKING_URI and MLFLOW_RUN_ID come from ferry run --track
            self.mlflow = mlflow
            mlflow.start_run()
            mlflow.log_params(config)
        else:
            import ferry.track
            self.run = ferry.track.init(project="demo", config=config)

    def log(self, values, step):
        if self.mlflow:
            self.mlflow.log_metrics(values, step=step)
        else:
            self.run.log(values, step=step)

    def finish(self, exit_code):
        if self.mlflow:
            self.mlflow.end_run("FINISHED" if exit_code == 0 else "KILLED")
        else:
            self.run.finish(exit_code=exit_code)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="shards: index URL, brace pattern or list")
    ap.add_argument("--out", default="ckpt", help="checkpoint directory (the --out dir of ferry run)")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--checkpoint-every", type=int, default=20, help="steps")
    ap.add_argument("--mlflow", action="store_true", help="log with the mlflow package")
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                          nn.Flatten(), nn.Linear(32, 10))
    optim = torch.optim.Adam(model.parameters(), lr=args.lr)
    dataset = ShardDataset(args.data, shuffle=True, seed=args.seed, batch_size=args.batch_size)
    loader = DataLoader(dataset, batch_size=args.batch_size, num_workers=args.workers,
                        collate_fn=collate, persistent_workers=args.workers > 0)

    epoch, seen, step = 0, 0, 0
    resume = os.path.join(os.environ.get("FERRY_RESUME_DIR", args.out), "ckpt.pt")
    if os.path.exists(resume):
        state = torch.load(resume)
        model.load_state_dict(state["model"])
        optim.load_state_dict(state["optim"])
        dataset.load_state_dict(state["data"])
        epoch, seen, step = state["epoch"], state["seen"], state["step"]
        print(f"train: resumed at epoch {epoch}, step {step}, {seen} samples into the epoch "
              f"(from attempt {os.environ.get('FERRY_RESUME_ATTEMPT', '?')})", file=sys.stderr)

    def state():
        return {"model": model.state_dict(), "optim": optim.state_dict(), "epoch": epoch,
                "seen": seen, "step": step,
                "data": dataset.state_dict(samples_seen=seen, loader=loader)}

    stop = []
    # Only this process gets SIGTERM from ferry run: the workers keep serving while it saves.
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    # The loader's workers are forked here, before the tracker starts its sender thread: a fork
    # while another thread holds a lock (an allocator's, a library's) can leave a worker stuck.
    dataset.set_epoch(epoch)
    batches = iter(loader)
    log = Logger(args.mlflow, {"lr": args.lr, "batch_size": args.batch_size,
                               "epochs": args.epochs, "workers": args.workers})
    started = time.time()
    while epoch < args.epochs:
        if batches is None:
            dataset.set_epoch(epoch)
            batches = iter(loader)  # persistent workers: no new fork
        correct = total = 0
        # A new meter each epoch feeds the same "train" stream as the last one, so ferry.track's
        # data/train/* windows cover every batch: the first of an epoch (its wait is a real
        # stall) as the rest; the checkpoint between epochs is outside the loop (not a stall).
        for x, y, keys in ferry.data.timed(batches, "train"):
            out = model(x)
            loss = nn.functional.cross_entropy(out, y)
            optim.zero_grad()
            loss.backward()
            optim.step()
            seen += len(keys)
            step += 1
            correct += (out.argmax(1) == y).sum().item()
            total += len(keys)
            log.log({"loss": loss.item(), "accuracy": correct / total}, step=step)
            if step % 10 == 0:
                print(f"train: epoch {epoch} step {step} loss {loss.item():.3f} "
                      f"accuracy {correct / total:.2f}", file=sys.stderr, flush=True)
            if stop:
                save_checkpoint(args.out, state())
                request_sync()
                print(f"train: stopped at step {step}; checkpoint saved and uploaded",
                      file=sys.stderr)
                log.finish(exit_code=143)
                return 143
            if step % args.checkpoint_every == 0:
                save_checkpoint(args.out, state())
                request_sync()
        batches = None
        epoch, seen = epoch + 1, 0
        dataset.set_epoch(epoch)  # the checkpoint's loader position: the start of the next epoch
        save_checkpoint(args.out, state())
        request_sync()
    print(f"train: done, {step} steps in {time.time() - started:.1f} s", file=sys.stderr)
    log.finish(exit_code=0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
