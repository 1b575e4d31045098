#!/usr/bin/env python3
"""A training loop that survives preemption under `ferry run --resume` (docs/guides/resume.md).

    ferry run --resume /scratch/ckpt \\
        --out /scratch/ckpt=s3://bucket/runs/{job}/{attempt}/ \\
        -- python3 train_resume.py --data s3://bucket/datasets/train

The loop writes its checkpoint into the output directory (whole or not at all: written to a
temporary name, then renamed) and asks ferry to upload it at once. After a preemption the job is
started again with the same command: ferry counts the attempt, copies the job's newest complete
checkpoint set into the resume directory, and the loop continues from it with exactly the
samples an uninterrupted run would have seen next (ShardDataset.state_dict()).

With --catch-sigterm it also saves a checkpoint when it is asked to stop (ferry passes SIGTERM to
this process only, so the DataLoader's workers keep serving while it saves).

Runs on a CPU; the tests run it (tests/cli/test_resume.py).
"""
import argparse
import os
import signal
import sys
import time

import torch
from torch.utils.data import DataLoader

from ferry.data import ShardDataset


def save_checkpoint(directory, state):
    """Writes ckpt.pt whole or not at all."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "ckpt.pt")
    torch.save(state, path + ".tmp")
    os.replace(path + ".tmp", path)


def request_sync(timeout=120):
    """Asks ferry run to upload the outputs now and waits until it has (FERRY_SYNC_TRIGGER)."""
    trigger = os.environ.get("FERRY_SYNC_TRIGGER")
    if not trigger:
        return  # not under ferry run
    open(trigger, "w").close()
    deadline = time.time() + timeout
    while os.path.exists(trigger) and time.time() < deadline:
        time.sleep(0.05)
    if os.path.exists(trigger + ".failed"):
        print("checkpoint upload failed:", open(trigger + ".failed").read(), file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True, help="shard index URL or prefix")
    ap.add_argument("--out", default="out", help="checkpoint directory (default: $FERRY_OUTPUT)")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--persistent-workers", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--checkpoint-every", type=int, default=5, help="steps")
    ap.add_argument("--step-seconds", type=float, default=0.0, help="pretend each step takes this")
    ap.add_argument("--catch-sigterm", action="store_true")
    args = ap.parse_args()
    out = os.environ.get("FERRY_OUTPUT", args.out)

    torch.manual_seed(args.seed)
    model = torch.nn.Linear(1, 1)
    optim = torch.optim.SGD(model.parameters(), lr=0.001)
    dataset = ShardDataset(args.data, shuffle=True, seed=args.seed, batch_size=args.batch_size)
    loader = DataLoader(dataset, batch_size=args.batch_size, num_workers=args.workers,
                        persistent_workers=args.persistent_workers and args.workers > 0)

    # Where ferry put the newest complete checkpoint set (or, outside ferry, our own directory).
    epoch, seen, keys = 0, 0, []
    checkpoint = os.path.join(os.environ.get("FERRY_RESUME_DIR", out), "ckpt.pt")
    if os.path.exists(checkpoint):
        state = torch.load(checkpoint)
        model.load_state_dict(state["model"])
        optim.load_state_dict(state["optim"])
        dataset.load_state_dict(state["data"])
        epoch, seen, keys = state["epoch"], state["seen"], state["keys"]
        print(f"resumed from attempt {os.environ.get('FERRY_RESUME_ATTEMPT', '?')}: epoch {epoch}, "
              f"{seen} samples in", file=sys.stderr)

    def state():
        return {"model": model.state_dict(), "optim": optim.state_dict(), "epoch": epoch,
                "seen": seen, "keys": keys,
                "data": dataset.state_dict(samples_seen=seen, loader=loader)}

    stop = []
    if args.catch_sigterm:
        signal.signal(signal.SIGTERM, lambda *_: stop.append(True))

    while epoch < args.epochs:
        dataset.set_epoch(epoch)
        step = 0
        for batch in loader:
            x = torch.tensor([float(int(c)) for c in batch["cls"]]).unsqueeze(1)
            loss = ((model(x) - x) ** 2).mean()
            optim.zero_grad()
            loss.backward()
            optim.step()
            seen += len(batch["__key__"])  # a batch is a dict of lists: count its samples
            keys.extend(batch["__key__"])
            step += 1
            if stop:  # asked to stop: this batch came from live workers; save and leave
                save_checkpoint(out, state())
                print(f"stopping at epoch {epoch}, {seen} samples in; checkpoint saved",
                      file=sys.stderr)
                return 0
            if step % args.checkpoint_every == 0:
                save_checkpoint(out, state())
                request_sync()
            time.sleep(args.step_seconds)
        epoch, seen = epoch + 1, 0
        dataset.set_epoch(epoch)
        save_checkpoint(out, state())
        request_sync()

    with open(os.path.join(out, "result.txt"), "w") as f:
        f.write(" ".join(keys) + "\n")
        f.write(" ".join(f"{p.item():.9g}" for p in model.parameters()) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
