"""What ferry.data.ShardDataset accepts, as webdataset does, turned into a list of URLs for the
C++ resolver (src/shard/resolve.h), which finds or builds the Ferry index they stand for:

- Ferry's index URL (`s3://b/ds/train.index.json`) or the prefix given to `ferry shard pack`;
- a directory or prefix (`/nas/ds/`, `s3://b/ds/`) holding a Ferry index or just .tar shards;
- shard URLs: a list, a brace pattern (`s3://b/ds/train-{000000..000099}.tar`,
  `/nas/ds/train-{0..9}.tar`, `{a,b}`; nested braces too), several patterns joined with `::`
  (webdataset's form), or a list of any of these. Shards without a Ferry index are indexed when
  the dataset is made, and the index is cached (docs/semantics/shards.md).
"""

import os
import re

_RANGE = re.compile(r"^(-?\d+)\.\.(-?\d+)$")


def _close(text, start):
    """The position of the '}' that closes the '{' at `start`, or -1."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _split_top(body):
    """`body` split at its top-level commas."""
    parts, depth, last = [], 0, 0
    for i, c in enumerate(body):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(body[last:i])
            last = i + 1
    parts.append(body[last:])
    return parts


def expand_braces(pattern):
    """Expands `{000..099}` (zero-padded to the wider bound when either is padded), `{0..9}`
    and `{a,b,c}` groups, nested or several, in order. A '{' without a matching '}', or a group
    that is neither a range nor a list, is kept as it is."""
    start = pattern.find("{")
    while start >= 0:
        end = _close(pattern, start)
        if end < 0:
            return [pattern]
        body = pattern[start + 1:end]
        m = _RANGE.match(body)
        if m:
            lo, hi = int(m.group(1)), int(m.group(2))
            padded = any(len(g.lstrip("-")) > 1 and g.lstrip("-").startswith("0")
                         for g in m.groups())
            width = max(len(m.group(1)), len(m.group(2))) if padded else 0
            step = 1 if hi >= lo else -1
            items = [str(i).zfill(width) for i in range(lo, hi + step, step)]
        elif "," in body and len(_split_top(body)) > 1:
            items = [x for part in _split_top(body) for x in expand_braces(part)]
        else:
            start = pattern.find("{", start + 1)
            continue
        head, tail = pattern[:start], pattern[end + 1:]
        return [head + item + rest for item in items for rest in expand_braces(tail)]
    return [pattern]


def shard_inputs(source):
    """`source` (a string, a path, or a list/tuple of them) as a flat list of URL strings: each
    string split at `::` and brace-expanded."""
    if isinstance(source, (str, os.PathLike)):
        items = [source]
    else:
        try:
            items = list(source)
        except TypeError:
            raise TypeError(f"ShardDataset: expected a URL, a path or a list of them, not "
                            f"{type(source).__name__}") from None
    out = []
    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f"ShardDataset: {item!r} is not a URL or a path")
        for part in os.fspath(item).split("::"):
            if part:
                out.extend(expand_braces(part))
    if not out:
        raise ValueError("ShardDataset: no shard URLs given")
    return out
