"""Output buffers of kernel calls: a recycling pool for large results, and checked `out=` arrays.

A large NumPy allocation is a fresh `mmap` (glibc serves blocks of more than 32 MiB at most that
way), so every call of a kernel returning a 64 MiB array pays the kernel's zeroing of 16,384
pages on first touch: about 5 ms per 64 MiB on one core here, as long as the whole computation of
an elementwise chain. The pool keeps such a buffer when the last array viewing it is garbage
collected and hands it to the next call asking for as many bytes, pages already mapped. That is
what the caching allocators of JAX and PyTorch do; results are ordinary writable ndarrays whose
`.base` is the lease holding the buffer.

Only outputs of at least MIN_BYTES are pooled (smaller ones come from malloc's free lists anyway,
and the lease costs a microsecond). The pool holds at most `limit` idle bytes (default 256 MiB,
EGGLOG_TENSOR_POOL_MB overrides, 0 turns pooling off); `POOL.clear()` returns them to the system.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Sequence

import numpy as np

from .errors import KernelArgumentError
from .runtime import NDARRAY

MIN_BYTES = 4 << 20


def _limit_from_env() -> int:
    text = os.environ.get("EGGLOG_TENSOR_POOL_MB", "").strip()
    if not text:
        return 256 << 20
    try:
        return max(0, int(float(text) * (1 << 20)))
    except ValueError:
        raise ValueError(f"EGGLOG_TENSOR_POOL_MB must be a number of MiB, got {text!r}") from None


class _Lease:
    """Owner of one pooled buffer while arrays view it; gives the buffer back when they are all gone."""

    __slots__ = ("__array_interface__", "buffer", "pool")

    def __init__(self, buffer: np.ndarray, pool: OutputPool, shape: tuple[int, ...], dtype: np.dtype) -> None:
        self.buffer = buffer
        self.pool = pool
        self.__array_interface__ = {
            "shape": shape, "typestr": dtype.str, "data": (buffer.ctypes.data, False), "version": 3,
        }

    def __del__(self) -> None:
        try:
            self.pool._give_back(self.buffer)
        except Exception:  # interpreter shutdown: the pool may already be gone
            pass


ALIGN = 64  # a cache line: a large NumPy array starts 16 bytes past one, so every vector store splits


def _aligned_bytes(nbytes: int) -> np.ndarray:
    """`nbytes` uninitialized bytes starting on a cache line (a view into a slightly larger array).

    Vector stores that straddle two cache lines cost bandwidth: a streaming a * 2 + 1 on two cores
    here wrote 47 GB/s to a cache-line aligned output and 30-35 GB/s to one 16 bytes off (a C loop of
    64-byte stores), and large NumPy arrays are 16 bytes off."""
    raw = np.empty(nbytes + ALIGN, np.uint8)
    start = -raw.ctypes.data % ALIGN
    return raw[start:start + nbytes]


class OutputPool:
    """Idle output buffers by byte size, at most `limit` bytes in all."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._idle: dict[int, list[np.ndarray]] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def idle_bytes(self) -> int:
        """Bytes held by buffers waiting for reuse."""
        return self._bytes

    def empty(self, shape: tuple[int, ...], dtype: np.dtype, min_bytes: int = MIN_BYTES) -> np.ndarray:
        """An uninitialized C-ordered array like np.empty, from a recycled buffer when it has at least
        `min_bytes` (a kernel's workspace is recycled from a smaller size: lowering/workspace.py)."""
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes < min_bytes or self.limit <= 0:
            return np.empty(shape, dtype)
        with self._lock:
            idle = self._idle.get(nbytes)
            buffer = idle.pop() if idle else None
            if buffer is not None:
                self._bytes -= nbytes
        if buffer is None:
            buffer = _aligned_bytes(nbytes)
        return np.asarray(_Lease(buffer, self, shape, dtype))

    def _give_back(self, buffer: np.ndarray) -> None:
        with self._lock:
            if self._bytes + buffer.nbytes <= self.limit:
                self._idle.setdefault(buffer.nbytes, []).append(buffer)
                self._bytes += buffer.nbytes

    def clear(self) -> None:
        """Free every idle buffer."""
        with self._lock:
            self._idle.clear()
            self._bytes = 0


POOL = OutputPool(_limit_from_env())


def allocator(outputs: Sequence[tuple[tuple[int, ...], np.dtype]]) -> Callable[[tuple[int, ...], np.dtype], np.ndarray]:
    """How a kernel call allocates these results: POOL.empty if one may be pooled, else np.empty
    (decided once per specialization: small results skip the pool's bookkeeping on each call)."""
    large = any(math.prod(shape) * dtype.itemsize >= MIN_BYTES for shape, dtype in outputs)
    return POOL.empty if large else np.empty


def check_out(out: object, expected: Sequence[tuple[tuple[int, ...], np.dtype]], name: str) -> tuple[np.ndarray, ...]:
    """The user's `out=` arrays, one per result, each checked: ndarray, writable, exact shape and dtype."""
    arrays = out if isinstance(out, tuple) else (out,)
    if len(arrays) != len(expected):
        raise KernelArgumentError(f"{name}(): out= needs {len(expected)} array(s), one per result; got {len(arrays)}")
    for i, (array, (shape, dtype)) in enumerate(zip(arrays, expected, strict=True)):
        where = f"{name}(): out={'' if len(expected) == 1 else f'[{i}]'}"
        if type(array) is not NDARRAY:
            raise KernelArgumentError(f"{where}: expected a numpy.ndarray, got {type(array).__name__}")
        if array.shape != shape or array.dtype != dtype:
            raise KernelArgumentError(f"{where}: expected shape {shape} and dtype {dtype}, got shape {array.shape} and dtype {array.dtype}")
        if not array.flags.writeable:
            raise KernelArgumentError(f"{where}: the array is read-only")
    return arrays


def direct(out: np.ndarray, inputs: Sequence[np.ndarray]) -> bool:
    """Whether the kernel may write a checked `out` itself (check_out: its dtype is the native one):
    C-contiguous, aligned, sharing no memory with an input."""
    return out.flags.c_contiguous and out.flags.aligned and not any(np.may_share_memory(out, a) for a in inputs)
