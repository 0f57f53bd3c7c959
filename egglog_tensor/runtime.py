"""Call JIT-compiled MLIR C-interface functions (`_mlir_ciface_<name>`) on NumPy arrays via memref descriptors."""

from __future__ import annotations

import ctypes
import functools
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .errors import KernelArgumentError
from .graph import numpy_dtype

# NumPy's array class, for `type(a) is NDARRAY`: the attribute np.ndarray is a stand-in while any thread traces
# a kernel (tracing/conversions.py), which isinstance accepts but `is` does not.
NDARRAY: type = np.ndarray

SUPPORTED_DTYPES: tuple[np.dtype, ...] = tuple(
    np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64, np.bool_,
                          np.float16, np.int8, np.int16, np.uint8, np.uint16, np.uint32, np.uint64)
)


def supported(dtype: np.dtype) -> bool:
    """Whether arrays of dtype can be passed: SUPPORTED_DTYPES, or ml_dtypes' bfloat16 (ml_dtypes is
    imported only when a dtype is named bfloat16)."""
    return dtype in SUPPORTED_DTYPES or (dtype.name == "bfloat16" and dtype == numpy_dtype("bfloat16"))


def check_supported(dtype: np.dtype, where: str = "") -> None:
    """KernelArgumentError naming the supported dtypes if arrays of dtype cannot be passed."""
    if not supported(dtype):
        names = ", ".join(d.name for d in SUPPORTED_DTYPES)
        raise KernelArgumentError(f"{where}unsupported dtype {dtype}; supported: {names}, bfloat16 (ml_dtypes)")

# PyArrayObject_fields (numpy/ndarraytypes.h), stable across NumPy 1.x / 2.x on 64-bit CPython:
# PyObject_HEAD; char *data; int nd; npy_intp *dimensions; npy_intp *strides; PyObject *base;
# PyArray_Descr *descr; int flags. Checked against NumPy's own accessors before first use.
_DATA, _ND, _DIMS, _STRIDES, _FLAGS = 16, 24, 32, 40, 64
_C_CONTIGUOUS, _ALIGNED, _WRITEABLE = 0x0001, 0x0100, 0x0400
OVERLAP = -1  # the argument reader's answer when an output shares bytes with an input


@functools.cache
def descriptor_type(rank: int) -> type[ctypes.Structure]:
    """The ctypes struct of a rank-`rank` memref descriptor {allocated, aligned, offset, sizes, strides}."""
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p), ("offset", ctypes.c_int64)]
    if rank > 0:
        fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
    return type(f"MemRefDescriptor{rank}D", (ctypes.Structure,), {"_fields_": fields})


def element_strides(array: np.ndarray) -> tuple[int, ...]:
    """Strides of array in elements; KernelArgumentError if a byte stride is not a multiple of the itemsize."""
    itemsize = array.itemsize
    if any(stride % itemsize and size > 1 for size, stride in zip(array.shape, array.strides)):
        raise KernelArgumentError(
            f"array strides {array.strides} (bytes) are not multiples of the itemsize {itemsize}: "
            "a memref cannot describe it; pass a copy (np.ascontiguousarray)"
        )
    return tuple(stride // itemsize for stride in array.strides)


def describe(array: np.ndarray) -> ctypes.Structure:
    """A memref descriptor viewing array's memory (any strides, negative too; aligned = the view's data pointer)."""
    if not isinstance(array, np.ndarray):
        raise KernelArgumentError(f"expected a numpy.ndarray, got {type(array).__name__}")
    check_supported(array.dtype)
    if not array.flags.aligned:
        raise KernelArgumentError("array data is not aligned to its itemsize; pass a copy (np.ascontiguousarray)")
    strides = element_strides(array)
    descriptor = descriptor_type(array.ndim)()
    descriptor.allocated = descriptor.aligned = array.ctypes.data
    descriptor.offset = 0
    if array.ndim:
        descriptor.sizes[:] = array.shape
        descriptor.strides[:] = strides
    return descriptor


@dataclass(frozen=True)
class ArgType:
    """What a compiled kernel accepts for one argument; None in shape means any size for that axis."""

    dtype: np.dtype
    shape: tuple[int | None, ...]
    contiguous: bool = False
    writable: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", np.dtype(self.dtype))
        object.__setattr__(self, "shape", tuple(self.shape))

    def check(self, array: object, index: int) -> None:
        """Raise KernelArgumentError saying why array does not fit this argument (no-op if it does)."""
        where = f"argument {index}"
        if not isinstance(array, np.ndarray):
            raise KernelArgumentError(f"{where}: expected a numpy.ndarray, got {type(array).__name__}")
        if array.dtype != self.dtype or not array.dtype.isnative:
            raise KernelArgumentError(f"{where}: expected dtype {self.dtype}, got {array.dtype}")
        if array.ndim != len(self.shape) or any(s is not None and s != n for s, n in zip(self.shape, array.shape)):
            raise KernelArgumentError(f"{where}: expected shape {self.shape}, got {array.shape}")
        if self.contiguous and not array.flags.c_contiguous:
            raise KernelArgumentError(f"{where}: expected a C-contiguous array, got strides {array.strides}")
        if self.writable and not array.flags.writeable:
            raise KernelArgumentError(f"{where}: output array is read-only")
        if not array.flags.aligned:
            raise KernelArgumentError(f"{where}: array data is not aligned to its itemsize; pass a copy")
        element_strides(array)


@functools.cache
def _numpy_layout_matches() -> bool:
    """Whether ndarray objects have the field offsets the native argument reader assumes."""
    probe = np.zeros((3, 5), dtype=np.float64)[::-1, ::2]

    def read(offset: int, ctype: type) -> int:
        return ctype.from_address(id(probe) + offset).value

    dims, strides = read(_DIMS, ctypes.c_void_p), read(_STRIDES, ctypes.c_void_p)
    return (
        read(_DATA, ctypes.c_void_p) == probe.ctypes.data
        and read(_ND, ctypes.c_int) == probe.ndim
        and tuple((ctypes.c_int64 * 2).from_address(dims)) == probe.shape
        and tuple((ctypes.c_int64 * 2).from_address(strides)) == probe.strides
        and read(_FLAGS, ctypes.c_int) == probe.flags.num
    )


def _reader_ir(arg_types: Sequence[ArgType]) -> str:
    """LLVM IR of `i32 read(ptr fn, ptr arr0, ...)`: check each ndarray, build its descriptor, call fn.

    Returns 0 after calling fn; without calling it, i+1 if argument i does not fit arg_types[i], or
    OVERLAP if the bytes an output (writable argument) spans meet those of an input: the kernel could
    read what it already wrote. Spans are [lowest, highest element + itemsize), empty for no elements.
    """
    params = ", ".join(["ptr %fn"] + [f"ptr %a{i}" for i in range(len(arg_types))])
    lines = [f"define i32 @read_and_call({params}) {{", "entry:"]
    spans: list[tuple[str, str, str]] = []  # per argument: lowest byte, end, whether it has no elements
    for i, spec in enumerate(arg_types):
        rank, size = len(spec.shape), spec.dtype.itemsize
        required = _ALIGNED | (_C_CONTIGUOUS if spec.contiguous else 0) | (_WRITEABLE if spec.writable else 0)
        a = f"%a{i}"
        lines += [
            f"  %d{i} = alloca [{3 + 2 * rank} x i64], align 8",
            f"  %ndp{i} = getelementptr i8, ptr {a}, i64 {_ND}",
            f"  %nd{i} = load i32, ptr %ndp{i}",
            f"  %flp{i} = getelementptr i8, ptr {a}, i64 {_FLAGS}",
            f"  %fl{i} = load i32, ptr %flp{i}",
            f"  %flm{i} = and i32 %fl{i}, {required}",
            f"  %rankok{i} = icmp eq i32 %nd{i}, {rank}",
            f"  %flok{i} = icmp eq i32 %flm{i}, {required}",
            f"  %hdrok{i} = and i1 %rankok{i}, %flok{i}",
            f"  br i1 %hdrok{i}, label %axes{i}, label %bad{i}",
            f"axes{i}:",
            f"  %datap{i} = getelementptr i8, ptr {a}, i64 {_DATA}",
            f"  %data{i} = load ptr, ptr %datap{i}",
            f"  store ptr %data{i}, ptr %d{i}",
            f"  %alp{i} = getelementptr i64, ptr %d{i}, i64 1",
            f"  store ptr %data{i}, ptr %alp{i}",
            f"  %offp{i} = getelementptr i64, ptr %d{i}, i64 2",
            f"  store i64 0, ptr %offp{i}",
            f"  %dimsp{i} = getelementptr i8, ptr {a}, i64 {_DIMS}",
            f"  %dims{i} = load ptr, ptr %dimsp{i}",
            f"  %strp{i} = getelementptr i8, ptr {a}, i64 {_STRIDES}",
            f"  %strs{i} = load ptr, ptr %strp{i}",
        ]
        ok, low, high, empty = "true", f"%base{i}", f"%top{i}_0", "false"
        lines += [f"  %base{i} = ptrtoint ptr %data{i} to i64", f"  %top{i}_0 = add i64 %base{i}, {size}"]
        for k, expected in enumerate(spec.shape):
            n = f"{i}_{k}"
            lines += [
                f"  %szp{n} = getelementptr i64, ptr %dims{i}, i64 {k}",
                f"  %sz{n} = load i64, ptr %szp{n}",
                f"  %szd{n} = getelementptr i64, ptr %d{i}, i64 {3 + k}",
                f"  store i64 %sz{n}, ptr %szd{n}",
                f"  %stp{n} = getelementptr i64, ptr %strs{i}, i64 {k}",
                f"  %st{n} = load i64, ptr %stp{n}",
                f"  %rem{n} = srem i64 %st{n}, {size}",
                f"  %quo{n} = sdiv i64 %st{n}, {size}",
                f"  %std{n} = getelementptr i64, ptr %d{i}, i64 {3 + rank + k}",
                f"  store i64 %quo{n}, ptr %std{n}",
                # a stride only matters on an axis longer than 1
                f"  %remok{n} = icmp eq i64 %rem{n}, 0",
                f"  %short{n} = icmp sle i64 %sz{n}, 1",
                f"  %strok{n} = or i1 %remok{n}, %short{n}",
                f"  %ok{n}a = and i1 {ok}, %strok{n}",
            ]
            ok = f"%ok{n}a"
            lines += [  # this axis widens the span by (size - 1) * stride bytes, downwards if negative
                f"  %last{n} = sub i64 %sz{n}, 1",
                f"  %reach{n} = mul i64 %last{n}, %st{n}",
                f"  %up{n} = icmp sgt i64 %reach{n}, 0",
                f"  %upby{n} = select i1 %up{n}, i64 %reach{n}, i64 0",
                f"  %downby{n} = select i1 %up{n}, i64 0, i64 %reach{n}",
                f"  %top{i}_{k + 1} = add i64 {high}, %upby{n}",
                f"  %low{n} = add i64 {low}, %downby{n}",
                f"  %none{n} = icmp eq i64 %sz{n}, 0",
                f"  %empty{n} = or i1 {empty}, %none{n}",
            ]
            low, high, empty = f"%low{n}", f"%top{i}_{k + 1}", f"%empty{n}"
            if expected is not None:
                lines += [f"  %szok{n} = icmp eq i64 %sz{n}, {expected}", f"  %ok{n}b = and i1 {ok}, %szok{n}"]
                ok = f"%ok{n}b"
        lines += [f"  br i1 {ok}, label %next{i}, label %bad{i}", f"bad{i}:", f"  ret i32 {i + 1}", f"next{i}:"]
        spans.append((low, high, empty))
    inputs = [i for i, t in enumerate(arg_types) if not t.writable]
    meets = "false"
    for w in (i for i, t in enumerate(arg_types) if t.writable):
        for r in inputs:  # [low_w, high_w) and [low_r, high_r) intersect, neither empty
            (lw, hw, ew), (lr, hr, er) = spans[w], spans[r]
            lines += [
                f"  %lt{w}_{r} = icmp ult i64 {lw}, {hr}",
                f"  %gt{w}_{r} = icmp ult i64 {lr}, {hw}",
                f"  %both{w}_{r} = and i1 %lt{w}_{r}, %gt{w}_{r}",
                f"  %anyempty{w}_{r} = or i1 {ew}, {er}",
                f"  %noempty{w}_{r} = xor i1 %anyempty{w}_{r}, true",
                f"  %meet{w}_{r} = and i1 %both{w}_{r}, %noempty{w}_{r}",
                f"  %meets{w}_{r} = or i1 {meets}, %meet{w}_{r}",
            ]
            meets = f"%meets{w}_{r}"
    lines += [f"  br i1 {meets}, label %overlap, label %call", "overlap:", f"  ret i32 {OVERLAP}", "call:"]
    args = ", ".join(f"ptr %d{i}" for i in range(len(arg_types)))
    lines += [f"  call void %fn({args})", "  ret i32 0", "}"]
    return "\n".join(lines) + "\n"


_readers_lock = threading.Lock()
_readers: dict[tuple[tuple[int, tuple[int | None, ...], bool, bool], ...], tuple[object, int]] = {}


def _reader_address(arg_types: Sequence[ArgType]) -> int:
    """Address of the JIT-compiled argument reader for this signature (compiled once for this machine, kept alive)."""
    from .lowering.llvm import load_llvm_ir
    from .target import Target

    key = tuple((t.dtype.itemsize, t.shape, t.contiguous, t.writable) for t in arg_types)
    with _readers_lock:
        if key not in _readers:
            module = load_llvm_ir(_reader_ir(arg_types), Target.host())
            _readers[key] = (module, module.address("read_and_call"))
        return _readers[key][1]


@functools.cache
def _prototype(n_pointers: int, result: type | None) -> type:
    """ctypes function type taking n_pointers pointers (cached: creating one per call is slow)."""
    return ctypes.CFUNCTYPE(result, *([ctypes.c_void_p] * n_pointers))


class NativeFunction:
    """A `_mlir_ciface_<name>` function called on arrays (inputs then outputs) checked against arg_types;
    an output (writable argument) may not share memory with an input.

    owner is kept referenced so the code at address (e.g. a LoadedModule's JIT engine) outlives this object.
    """

    __slots__ = ("address", "arg_types", "owner", "_dtypes", "_fast", "_generic")

    def __init__(self, address: int, arg_types: Sequence[ArgType], owner: object = None) -> None:
        for t in arg_types:
            check_supported(t.dtype)
        self.address = address
        self.owner = owner
        self.arg_types = tuple(arg_types)
        self._dtypes = tuple(t.dtype for t in self.arg_types)
        self._generic = _prototype(len(self.arg_types), None)(address)
        self._fast = (
            _prototype(len(self.arg_types) + 1, ctypes.c_int32)(_reader_address(self.arg_types))
            if _numpy_layout_matches()
            else None
        )

    def __call__(self, *arrays: np.ndarray) -> None:
        """Run the function on arrays; KernelArgumentError (before running) if any does not fit."""
        if len(arrays) != len(self._dtypes):
            raise KernelArgumentError(f"expected {len(self._dtypes)} arrays, got {len(arrays)}")
        for array, dtype in zip(arrays, self._dtypes):
            if type(array) is not NDARRAY or array.dtype is not dtype:
                return self.call_generic(*arrays)
        return self.call_typed(*arrays)

    def call_typed(self, *arrays: np.ndarray) -> None:
        """Like calling it, for a caller that knows each array is an exact ndarray of its argument's
        dtype (a kernel's dispatch cache): shapes, strides and flags are still checked natively."""
        if self._fast is None:
            return self.call_generic(*arrays)
        bad = self._fast(self.address, *map(id, arrays))
        if bad == OVERLAP:
            self._check_no_overlap(arrays)
            raise KernelArgumentError("an output shares memory with an input (native argument check)")
        if bad:
            self.arg_types[bad - 1].check(arrays[bad - 1], bad - 1)
            raise KernelArgumentError(f"argument {bad - 1} rejected by the native argument check")

    @property
    def reads_natively(self) -> bool:
        """Whether try_typed is available (NumPy's array layout is the one the native reader knows)."""
        return self._fast is not None

    def try_typed(self, *arrays: np.ndarray) -> int:
        """call_typed that reports instead of raising (needs reads_natively): 0 after running, else
        nothing ran and the answer is i+1 for an argument i that does not fit, or OVERLAP."""
        return self._fast(self.address, *map(id, arrays))

    def _check_no_overlap(self, arrays: Sequence[np.ndarray]) -> None:
        """KernelArgumentError naming an output that shares memory with an input."""
        for w, (out, t) in enumerate(zip(arrays, self.arg_types)):
            for r, (array, s) in enumerate(zip(arrays, self.arg_types)):
                if t.writable and not s.writable and np.may_share_memory(out, array):
                    raise KernelArgumentError(f"argument {w} (an output) shares memory with argument {r} (an input): "
                                              "the kernel could read what it already wrote; pass a separate array")

    def call_generic(self, *arrays: np.ndarray) -> None:
        """Run the function via ctypes descriptors built by describe(): slower, same checks and result."""
        if len(arrays) != len(self.arg_types):
            raise KernelArgumentError(f"expected {len(self.arg_types)} arrays, got {len(arrays)}")
        for index, (array, spec) in enumerate(zip(arrays, self.arg_types)):
            spec.check(array, index)
        self._check_no_overlap(arrays)
        descriptors = [describe(a) for a in arrays]
        self._generic(*(ctypes.addressof(d) for d in descriptors))
