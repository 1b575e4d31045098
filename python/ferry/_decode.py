"""Sample decoders for ferry.data: bytes -> Python values and tensors, so that PyTorch's default
collate can batch the samples (webdataset's `.decode("torchrgb")` and friends).

    ds = ShardDataset(url, decode="torchrgb")                  # or decode=decoder("torchrgb")
    loader = DataLoader(ds, batch_size=64, num_workers=4)       # images stack into a tensor

By extension (the part after the last '.', lower case; `__key__` etc. are kept):
  cls, cls2, idx, label, index -> int;  txt, text -> str;  json -> its value;
  npy -> numpy array (a tensor with a torch* image mode);  pth -> torch.load (weights only);
  jpg, jpeg, png, ppm, pgm, bmp, webp, tif, tiff, gif -> per `image`:
    "pil"         PIL.Image (mode RGB)           "rgb8"  numpy uint8 HWC
    "rgb"         numpy float32 HWC in [0, 1]    "l8"/"l" the same in grey
    "torchrgb8"   torch uint8 CHW                "torchrgb" torch float32 CHW in [0, 1]
    "torchl8"     torch uint8 1HW                "torchl"   torch float32 1HW in [0, 1]
  anything else stays bytes.
"""

import functools
import io
import json

IMAGE_EXTS = frozenset(("jpg", "jpeg", "png", "ppm", "pgm", "bmp", "webp", "tif", "tiff", "gif"))
INT_EXTS = frozenset(("cls", "cls2", "idx", "label", "index"))
IMAGE_MODES = ("pil", "rgb8", "rgb", "l8", "l", "torchrgb8", "torchrgb", "torchl8", "torchl")


def _int(value):
    return int(value)  # int() takes ASCII digits as bytes, surrounding whitespace included


def _npy(value, torch_tensor):
    import numpy as np
    array = np.load(io.BytesIO(value), allow_pickle=False)
    if torch_tensor:
        import torch
        return torch.from_numpy(array)
    return array


def _pth(value):
    import torch
    return torch.load(io.BytesIO(value), weights_only=True)


def _image(value, mode):
    from PIL import Image
    image = Image.open(io.BytesIO(value))
    grey = mode in ("l8", "l", "torchl8", "torchl")
    image = image.convert("L" if grey else "RGB")
    if mode == "pil":
        return image
    import numpy as np
    array = np.asarray(image)
    if grey:
        array = array[:, :, None]
    if mode.startswith("torch"):
        import torch
        tensor = torch.from_numpy(array.copy()).permute(2, 0, 1).contiguous()
        return tensor if mode.endswith("8") else tensor.float().div_(255)
    if mode.endswith("8"):
        return array if not grey else array[:, :, 0]
    out = array.astype(np.float32) / 255
    return out if not grey else out[:, :, 0]


class Decoder:
    """A picklable sample decoder (DataLoader workers get a copy). `image`: one of IMAGE_MODES;
    `handlers`: {extension: function(bytes) -> value} that take precedence."""

    def __init__(self, image="torchrgb", handlers=None):
        if image not in IMAGE_MODES:
            raise ValueError(f"decoder: image={image!r} is not one of {', '.join(IMAGE_MODES)}")
        self.image = image
        self.handlers = dict(handlers or {})

    def value(self, ext, value):
        """`value` (bytes) of a file with extension `ext` (may be "seg.png"), decoded."""
        fn = self._function(ext)
        return value if fn is None else fn(value)

    def _function(self, ext):
        """The decoding function for `ext` (None: kept as it is), looked up once per extension."""
        fns = self.__dict__.setdefault("_fns", {})
        if ext in fns:
            return fns[ext]
        low = ext.lower()
        last = low.rsplit(".", 1)[-1]
        fn = None if ext.startswith("__") else (self.handlers.get(low) or self.handlers.get(last))
        if fn is None and not ext.startswith("__"):
            if last in INT_EXTS:
                fn = _int
            elif last in ("txt", "text"):
                fn = bytes.decode
            elif last == "json":
                fn = json.loads
            elif last in IMAGE_EXTS:
                fn = functools.partial(_image, mode=self.image)
            elif last == "npy":
                fn = functools.partial(_npy, torch_tensor=self.image.startswith("torch"))
            elif last == "pth":
                fn = _pth
        fns[ext] = fn
        return fn

    def __call__(self, sample):
        fns = self.__dict__.get("_fns") or {}
        out = {}
        for k, v in sample.items():
            fn = fns[k] if k in fns else self._function(k)
            out[k] = v if fn is None else fn(v)
        return out

    def __getstate__(self):
        return {"image": self.image, "handlers": self.handlers}

    def __repr__(self):
        return f"ferry.data.decoder(image={self.image!r})"


def decoder(image="torchrgb", handlers=None):
    """A sample decoder: images as `image` says (default "torchrgb", float32 CHW in [0, 1]),
    cls/txt/json/npy as Python values. See ferry/_decode.py for the table."""
    return Decoder(image, handlers)
