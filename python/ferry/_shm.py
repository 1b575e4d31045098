"""Batches from DataLoader worker processes to the training process through shared memory that
is reused, instead of PyTorch's default hand-over.

PyTorch pickles what a worker yields through a pipe; each tensor in it is first moved into a new
shared-memory segment whose file descriptor is then passed over a socket, one handshake per
tensor. For batches of small samples that per-batch cost, and bytes squeezed through a 64 KiB
pipe, are the ceiling of a DataLoader with workers (measured in docs/benchmarks.md).

Here a worker keeps a few shared-memory slots (anonymous memfd memory, created once, grown when a
batch does not fit; the training process gets each slot's fd once, with its first batch) and, when the DataLoader pickles a batch, copies its tensors, numpy arrays and
bytes (>= 512 B) into a free slot; only the rest (keys, ints, the batch's structure) goes through
the pipe. The training process copies them out into fresh objects when it unpickles the batch
and marks the slot free: the batch it gets is an ordinary dict/list/tuple of ordinary tensors,
arrays and bytes, and owns its memory (nothing refers to the slot afterwards). With no free slot
(8 in flight per worker, 1 GiB per worker at most) a batch goes the default way.

Slots are memfd memory: nothing appears in /dev/shm, and the memory is freed when the worker and
the training process are both done with it, however either ends (SIGKILL included); the training
process drops its mappings of workers that exited when it next maps a new slot.
"""

import mmap
import os
import pickle
import threading

import torch

_MAX_SLOTS = 8
_MAX_BYTES = 1 << 30      # all slots of one worker
_MIN_BYTES = 512          # bytes objects smaller than this travel in the pickle
_HEADER = 64              # slot header: the in-use flag (a byte) then padding; data is aligned
_ATOMS = (str, int, float, bool, type(None))
_counter = 0
_lock = threading.Lock()


class _Slot:
    """Anonymous shared memory (memfd): nothing in the file system, freed when the worker and the
    training process have both unmapped it, however they end."""

    def __init__(self, size):
        global _counter
        with _lock:
            _counter += 1
            self.id = _counter
        fd = os.memfd_create(f"ferry-batch-{self.id}", os.MFD_CLOEXEC)
        try:
            os.ftruncate(fd, size)
            self.map = mmap.mmap(fd, size)
            self.fd = os.dup(fd)  # handed to the training process with the slot's first batch
        finally:
            os.close(fd)
        self.size = size

    def free(self):
        return self.map[0] == 0

    def handle(self):
        """The fd for the training process while it has not mapped the slot (header byte 1)."""
        if self.map[1]:
            if self.fd is not None:
                os.close(self.fd)
                self.fd = None
            return None
        from multiprocessing.reduction import DupFd
        return DupFd(self.fd)

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        self.map.close()


class _Pool:
    """This worker's slots."""

    def __init__(self):
        self.slots = []
        from multiprocessing import util
        util.Finalize(self, _Pool.close_all, args=(self.slots,), exitpriority=10)

    @staticmethod
    def close_all(slots):
        for s in slots:
            s.close()
        slots.clear()

    def take(self, size):
        """A free slot of at least `size` bytes marked in use, or None."""
        for i, s in enumerate(self.slots):
            if s.free():
                if s.size < size:
                    if sum(x.size for x in self.slots) - s.size + size > _MAX_BYTES:
                        continue
                    s.close()
                    s = self.slots[i] = _Slot(_grow(size))
                s.map[0] = 1
                return s
        if len(self.slots) < _MAX_SLOTS and \
                sum(x.size for x in self.slots) + _grow(size) <= _MAX_BYTES:
            s = _Slot(_grow(size))
            self.slots.append(s)
            s.map[0] = 1
            return s
        return None


def _grow(size):
    """Slot sizes: the next power of two above `size` (>= 1 MiB), so slowly growing batches do
    not recreate slots each time."""
    n = 1 << 20
    while n < size:
        n <<= 1
    return n


_pool = None


class _Ref:
    """Where a tensor, array or bytes object of the batch lies in the slot."""
    __slots__ = ("kind", "offset", "nbytes", "dtype", "shape")

    def __init__(self, kind, offset, nbytes, dtype=None, shape=None):
        self.kind, self.offset, self.nbytes, self.dtype, self.shape = kind, offset, nbytes, dtype, shape

    def __reduce__(self):
        return (_Ref, (self.kind, self.offset, self.nbytes, self.dtype, self.shape))


def _plan(obj, parts, offset):
    """The batch's skeleton with _Ref placeholders; `parts` collects (offset, memoryview)."""
    if isinstance(obj, torch.Tensor) and obj.device.type == "cpu" and not obj.is_sparse \
            and obj.layout == torch.strided and not obj.requires_grad:
        t = obj.contiguous()
        nbytes = t.numel() * t.element_size()
        offset[0] = (offset[0] + 63) & ~63
        ref = _Ref("tensor", offset[0], nbytes, t.dtype, tuple(t.shape))
        if nbytes:
            parts.append((offset[0], t.view(-1).view(torch.uint8).numpy().data))
        offset[0] += nbytes
        return ref
    if isinstance(obj, (bytes, bytearray)) and len(obj) >= _MIN_BYTES:
        ref = _Ref("bytes" if isinstance(obj, bytes) else "bytearray", offset[0], len(obj))
        parts.append((offset[0], memoryview(obj)))
        offset[0] += len(obj)
        return ref
    if type(obj) is dict:
        return {k: _plan(v, parts, offset) for k, v in obj.items()}
    if type(obj) is list:
        if obj and type(obj[0]) in _ATOMS and all(type(v) is type(obj[0]) for v in obj):
            return obj  # keys, labels: nothing to place
        if obj and all(type(v) is bytes for v in obj):  # one region for a list of bytes
            lengths = [len(v) for v in obj]
            total = sum(lengths)
            if total >= _MIN_BYTES:
                for v in obj:
                    parts.append((offset[0], memoryview(v)))
                    offset[0] += len(v)
                return _Ref("byteslist", offset[0] - total, total, None, lengths)
        return [_plan(v, parts, offset) for v in obj]
    if type(obj) is tuple:
        return tuple(_plan(v, parts, offset) for v in obj)
    if type(obj).__module__ == "numpy" and type(obj).__name__ == "ndarray" and \
            obj.dtype.hasobject is False and obj.dtype.kind in "biufc?":
        import numpy as np
        a = np.ascontiguousarray(obj)
        offset[0] = (offset[0] + 63) & ~63
        ref = _Ref("ndarray", offset[0], a.nbytes, a.dtype.str, a.shape)
        if a.nbytes:
            parts.append((offset[0], a.reshape(-1).view(np.uint8).data))
        offset[0] += a.nbytes
        return ref
    return obj


def _fill(skeleton, view):
    if isinstance(skeleton, _Ref):
        r = skeleton
        data = view[r.offset:r.offset + r.nbytes]
        if r.kind == "bytes":
            return bytes(data)
        if r.kind == "byteslist":
            out, at = [], r.offset
            for n in r.shape:  # the lengths
                out.append(bytes(view[at:at + n]))
                at += n
            return out
        if r.kind == "bytearray":
            return bytearray(data)
        if r.kind == "tensor":
            out = torch.empty(r.shape, dtype=r.dtype)
            import numpy as np
            if r.nbytes:
                out.view(-1).view(torch.uint8).numpy()[:] = np.frombuffer(data, dtype=np.uint8)
            return out
        import numpy as np
        out = np.empty(r.shape, dtype=np.dtype(r.dtype))
        if r.nbytes:
            out.reshape(-1).view(np.uint8)[:] = np.frombuffer(data, dtype=np.uint8)
        return out
    if type(skeleton) is dict:
        return {k: _fill(v, view) for k, v in skeleton.items()}
    if type(skeleton) is list:
        if skeleton and type(skeleton[0]) in _ATOMS and \
                all(type(v) is type(skeleton[0]) for v in skeleton):
            return skeleton
        return [_fill(v, view) for v in skeleton]
    if type(skeleton) is tuple:
        return tuple(_fill(v, view) for v in skeleton)
    return skeleton


_maps = {}  # in the training process: (worker pid, slot id) -> mmap


def _slot_map(pid, slot, size, handle):
    """The training process's mapping of a worker's slot, made from the fd that comes with the
    slot's first batch. Mappings of workers that exited are dropped."""
    m = _maps.get((pid, slot))
    if m is not None:
        return m
    if handle is None:
        raise RuntimeError(f"ferry.data: a DataLoader batch refers to shared memory of worker {pid} "
                           "that this process never received")
    for key in list(_maps):
        try:
            os.kill(key[0], 0)
        except ProcessLookupError:
            _maps.pop(key).close()
        except PermissionError:
            pass
    fd = handle.detach()
    try:
        m = mmap.mmap(fd, size)
    finally:
        os.close(fd)
    m[1] = 1  # mapped: the worker stops sending the fd
    _maps[(pid, slot)] = m
    return m


def _rebuild(pid, slot, size, handle, skeleton):
    """In the training process: the batch, copied out of the worker's slot, which is then free."""
    m = _slot_map(pid, slot, size, handle)
    view = memoryview(m)
    try:
        batch = _fill(pickle.loads(skeleton), view[_HEADER:])
    finally:
        view.release()
    m[0] = 0  # free: the worker may reuse the slot
    return batch


def _plain(batch):
    return batch


class SharedBatch:
    """A batch on its way out of a DataLoader worker; unpickles as the batch itself."""
    __slots__ = ("batch",)

    def __init__(self, batch):
        self.batch = batch

    def __reduce__(self):
        global _pool
        parts, offset = [], [0]
        skeleton = _plan(self.batch, parts, offset)
        if not parts:
            return (_plain, (self.batch,))
        if _pool is None:
            _pool = _Pool()
        need = _HEADER + offset[0]
        slot = _pool.take(need)
        if slot is None:
            return (_plain, (self.batch,))
        view = memoryview(slot.map)
        try:
            for at, data in parts:
                start = _HEADER + at
                view[start:start + data.nbytes] = data.cast("B")
        finally:
            view.release()
        return (_rebuild, (os.getpid(), slot.id, slot.size, slot.handle(),
                           pickle.dumps(skeleton, protocol=5)))


def wrap(batch):
    """`batch` as a DataLoader worker should hand it out (SharedBatch), or as it is in the
    training process (num_workers=0)."""
    if torch.utils.data.get_worker_info() is None:
        return batch
    return SharedBatch(batch)


def collate(samples):
    """PyTorch's default_collate, handed to the training process through shared memory when
    called in a DataLoader worker: DataLoader(ds, batch_size=64, num_workers=4,
    collate_fn=ferry.data.collate)."""
    return wrap(torch.utils.data.default_collate(samples))
