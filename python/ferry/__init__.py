"""Ferry: move training data and results between storage and GPU jobs.

`ferry.data.ShardDataset` streams tar-shard datasets (made by `ferry shard pack`) into PyTorch.
`ferry.track.init(...)` logs metrics, params and artifacts to `ferry serve`'s MLflow-compatible
tracker, W&B style (pure Python).
"""

__all__ = ["data", "track"]
