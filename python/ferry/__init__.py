"""Ferry: move training data and results between storage and GPU jobs.

`ferry.data.ShardDataset` streams tar-shard datasets (made by `ferry shard pack`) into PyTorch.
"""

__all__ = ["data"]
