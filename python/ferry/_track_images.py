"""Images for `ferry.track`'s `run.log_image`: what may be logged and how it becomes a file.

Accepted: a path to a .png/.jpg/.jpeg/.gif/.webp file (uploaded as is), encoded PNG or JPEG
bytes, a PIL image (saved as PNG by PIL), or an array: a numpy array or a torch tensor, HW
(grayscale), HWC or CHW with 1, 3 or 4 channels; uint8 as is, floats taken as 0..1 and
clipped. Arrays are encoded as PNG here with zlib, so neither PIL nor torchvision is needed.
"""
import pathlib
import re
import struct
import zlib

_EXTENSIONS = {".png": "png", ".jpg": "jpg", ".jpeg": "jpg", ".gif": "gif", ".webp": "webp"}
_MAGIC = ((b"\x89PNG\r\n\x1a\n", "png"), (b"\xff\xd8\xff", "jpg"), (b"GIF8", "gif"))
_KEY = re.compile(r"[A-Za-z0-9_.\- ]+(/[A-Za-z0-9_.\- ]+)*")


def artifact_name(key, step, ext):
    """`images/<key>/step-00000042.png`; `key` may hold '/' between plain names."""
    if not isinstance(key, str) or not _KEY.fullmatch(key) or \
            any(part in (".", "..") for part in key.split("/")):
        raise ValueError(f"ferry.track: image key {key!r} must be names of letters, digits, "
                         "'_', '-', '.', ' ' separated by '/' (no '.' or '..')")
    return f"images/{key}/step-{step:08d}.{ext}"


def image_bytes(image):
    """(encoded bytes, extension) for what log_image accepts; TypeError/ValueError otherwise."""
    if isinstance(image, (str, pathlib.Path)):
        path = pathlib.Path(image)
        ext = _EXTENSIONS.get(path.suffix.lower())
        if ext is None:
            raise ValueError(f"ferry.track: {path} is not a .png, .jpg, .gif or .webp file")
        return path.read_bytes(), ext
    if isinstance(image, (bytes, bytearray, memoryview)):
        data = bytes(image)
        for magic, ext in _MAGIC:
            if data.startswith(magic):
                return data, ext
        raise ValueError("ferry.track: image bytes are not PNG, JPEG or GIF")
    if hasattr(image, "save") and hasattr(image, "mode"):   # a PIL image
        import io
        buf = io.BytesIO()
        image.save(buf, format="PNG")
        return buf.getvalue(), "png"
    if hasattr(image, "detach"):   # a torch tensor
        image = image.detach().cpu().numpy()
    if hasattr(image, "shape") and hasattr(image, "dtype"):
        return encode_png(image), "png"
    raise TypeError(f"ferry.track: cannot log an image of type {type(image).__name__} (a path, "
                    "PNG/JPEG bytes, a PIL image, a numpy array or a torch tensor)")


def _to_hwc_uint8(array):
    import numpy as np
    a = np.asarray(array)
    if a.ndim == 2:
        a = a[:, :, None]
    elif a.ndim == 3 and a.shape[0] in (1, 3, 4) and a.shape[2] not in (1, 3, 4):
        a = a.transpose(1, 2, 0)   # CHW, as torch keeps images
    if a.ndim != 3 or a.shape[2] not in (1, 3, 4) or a.shape[0] == 0 or a.shape[1] == 0:
        raise ValueError(f"ferry.track: an image array must be HW, HWC or CHW with 1, 3 or 4 "
                         f"channels, not shape {tuple(np.shape(array))}")
    if a.dtype == np.uint8:
        return np.ascontiguousarray(a)
    if a.dtype == np.bool_:
        return np.ascontiguousarray(a.astype(np.uint8) * 255)
    if np.issubdtype(a.dtype, np.floating):
        return np.ascontiguousarray((np.clip(np.nan_to_num(a), 0.0, 1.0) * 255.0 + 0.5)
                                    .astype(np.uint8))
    if np.issubdtype(a.dtype, np.integer):
        return np.ascontiguousarray(np.clip(a, 0, 255).astype(np.uint8))
    raise ValueError(f"ferry.track: image arrays must be uint8, bool, int or float, not {a.dtype}")


def encode_png(array):
    """PNG bytes of an image array (8-bit grayscale, RGB or RGBA; filter 0 on each row)."""
    a = _to_hwc_uint8(array)
    height, width, channels = a.shape
    color = {1: 0, 3: 2, 4: 6}[channels]
    rows = b"".join(b"\x00" + a[y].tobytes() for y in range(height))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", width, height, 8, color, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 6))
            + chunk(b"IEND", b""))
