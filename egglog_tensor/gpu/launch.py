"""Running a GPU compilation on its device: the host function replayed with the vendor's driver API.

NVIDIA through `cuda-bindings` (the driver API: the PTX JIT-compiled by the driver on loading), AMD
through `hip-python` (`hipModuleLoadData` on the HSACO), each imported when a kernel is first called.
The host function's arguments are copied to the device (NumPy arrays) or used in place (device arrays
through `__cuda_array_interface__` or DLPack: CuPy, PyTorch, JAX); its allocations and constant arrays
become device buffers (lowering/gpu/host.py); each launch gets its kernel-params array from
signature.py; the outputs are copied back into the NumPy arrays given for them. Without a device or its
driver, `launcher` raises DeviceError saying which library was tried and where the artifacts are.
"""

from __future__ import annotations

import ctypes
import functools
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import DeviceError
from .signature import pack

if TYPE_CHECKING:
    from ..compiler import Compilation

INSTALL = {"nvvm": "pip install cuda-bindings (in egglog_tensor's [gpu] extra; its major version that of the CUDA driver)",
           "rocdl": "pip install hip-python==<your ROCm version>.* (it matches the ROCm release the machine has, so no extra pins it)"}
_DLPACK_GPU = {2: "CUDA", 10: "ROCm", 13: "CUDA managed"}  # DLDeviceType codes of device memory a kernel can read in place
_DLPACK_KIND = {0: "i", 1: "u", 2: "f", 6: "b"}


@dataclass(frozen=True)
class DeviceArray:
    """An array in device memory (address, shape, dtype, byte strides: None when C-contiguous), from its owner's interface."""

    address: int
    shape: tuple[int, ...]
    dtype: np.dtype
    strides: tuple[int, ...] | None
    owner: Any  # what keeps the memory alive (the array, or its DLPack capsule)

    @property
    def contiguous(self) -> bool:
        """Whether the array is C-contiguous (what the compiled code reads)."""
        if self.strides is None:
            return True
        step = self.dtype.itemsize
        for n, stride in zip(reversed(self.shape), reversed(self.strides), strict=True):
            if n > 1 and stride != step:
                return False
            step *= n
        return True


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


def dlpack_tensor(capsule: Any) -> tuple[int, int, DeviceArray]:
    """(DLPack device type, device id, the array) of a DLPack capsule (legacy "dltensor"), not consumed: its owner keeps it."""
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    tensor = _DLTensor.from_address(get(capsule, b"dltensor"))  # (the DLManagedTensor begins with its DLTensor)
    kind = _DLPACK_KIND.get(tensor.dtype.code)
    if kind is None or tensor.dtype.lanes != 1:
        raise DeviceError(f"a DLPack array of type code {tensor.dtype.code} x{tensor.dtype.lanes} lanes: not a NumPy dtype the kernel takes")
    dtype = np.dtype(f"{kind}{tensor.dtype.bits // 8}" if kind != "b" else "bool")
    shape = tuple(tensor.shape[i] for i in range(tensor.ndim))
    strides = None if not tensor.strides else tuple(tensor.strides[i] * dtype.itemsize for i in range(tensor.ndim))
    return (tensor.device.device_type, tensor.device.device_id,
            DeviceArray((tensor.data or 0) + tensor.byte_offset, shape, dtype, strides, capsule))


def device_array(value: Any) -> DeviceArray | None:
    """The DeviceArray of a device array (`__cuda_array_interface__`, else DLPack on a GPU), None for anything else (host data)."""
    interface = getattr(value, "__cuda_array_interface__", None)
    if interface is not None:
        strides = interface.get("strides")
        return DeviceArray(int(interface["data"][0]), tuple(interface["shape"]), np.dtype(interface["typestr"]),
                           None if strides is None else tuple(strides), value)
    if hasattr(value, "__dlpack_device__") and not isinstance(value, np.ndarray):
        device_type, _ = value.__dlpack_device__()
        if int(device_type) in _DLPACK_GPU:
            return dlpack_tensor(value.__dlpack__())[2]
    return None


def _checked(library: str, result: Any) -> Any:
    """The values of a cuda-bindings / hip-python call (a tuple: its error code first); DeviceError for an error."""
    error, *values = result if isinstance(result, tuple) else (result,)
    if int(getattr(error, "value", error)) != 0:
        raise DeviceError(f"{library}: {error!r}")
    return values[0] if len(values) == 1 else values


class _Driver:
    """What a launch needs of a vendor's API (`api`, on its first device), each call's error checked: the names
    of its calls that differ only in name (`INIT`, `COUNT`, `ALLOC`, ...), the others per vendor."""

    library: str
    INIT: str
    COUNT: str
    ALLOC: str
    FREE: str
    SYNC: str
    LOAD: str
    FUNCTION: str

    def __init__(self, api: Any) -> None:
        self.api = api
        self.call(self.INIT, 0)
        if self.call(self.COUNT) == 0:
            raise DeviceError(f"{self.library}: the driver sees no device")
        self.select()

    def select(self) -> None:
        """Make the first device current."""
        raise NotImplementedError

    def call(self, name: str, *args: Any) -> Any:
        return _checked(self.library, getattr(self.api, name)(*args))

    def image(self, binary: bytes) -> bytes:
        """The binary as the module loader takes it."""
        return binary

    def load(self, binary: bytes, names: list[str]) -> dict[str, Any]:
        """Each kernel's function handle, by name, from the loaded binary."""
        module = self.call(self.LOAD, self.image(binary))
        return {name: self.call(self.FUNCTION, module, name.encode()) for name in names}

    def alloc(self, nbytes: int) -> int:
        return int(self.call(self.ALLOC, max(nbytes, 1)))

    def free(self, address: int) -> None:
        self.call(self.FREE, address)

    def synchronize(self) -> None:
        self.call(self.SYNC)

    def copy(self, destination: int, source: int, nbytes: int, to_device: bool) -> None:
        raise NotImplementedError

    def to_device(self, address: int, array: np.ndarray) -> None:
        self.copy(address, array.ctypes.data, array.nbytes, True)

    def to_host(self, array: np.ndarray, address: int) -> None:
        self.copy(array.ctypes.data, address, array.nbytes, False)


class _Cuda(_Driver):
    """The CUDA driver API (cuda-bindings) on the first device's primary context; PTX JIT-compiled by the driver."""

    library, INIT, COUNT = "cuda-bindings", "cuInit", "cuDeviceGetCount"
    ALLOC, FREE, SYNC, LOAD, FUNCTION = "cuMemAlloc", "cuMemFree", "cuCtxSynchronize", "cuModuleLoadData", "cuModuleGetFunction"

    def __init__(self) -> None:
        from cuda.bindings import driver

        super().__init__(driver)

    def select(self) -> None:
        self.call("cuCtxSetCurrent", self.call("cuDevicePrimaryCtxRetain", self.call("cuDeviceGet", 0)))

    def image(self, binary: bytes) -> bytes:
        return binary + b"\0"  # PTX: NUL-terminated text

    def copy(self, destination: int, source: int, nbytes: int, to_device: bool) -> None:
        self.call("cuMemcpyHtoD" if to_device else "cuMemcpyDtoH", destination, source, nbytes)

    def launch(self, function: Any, grid: tuple[int, int, int], block: tuple[int, int, int], params: int) -> None:
        self.call("cuLaunchKernel", function, *grid, *block, 0, 0, params, 0)


class _Hip(_Driver):
    """The HIP runtime (hip-python) on the first device; the HSACO loaded as it is."""

    library, INIT, COUNT = "hip-python", "hipInit", "hipGetDeviceCount"
    ALLOC, FREE, SYNC, LOAD, FUNCTION = "hipMalloc", "hipFree", "hipDeviceSynchronize", "hipModuleLoadData", "hipModuleGetFunction"

    def __init__(self) -> None:
        from hip import hip

        super().__init__(hip)

    def select(self) -> None:
        self.call("hipSetDevice", 0)

    def copy(self, destination: int, source: int, nbytes: int, to_device: bool) -> None:
        kind = self.api.hipMemcpyKind
        self.call("hipMemcpy", destination, source, nbytes, kind.hipMemcpyHostToDevice if to_device else kind.hipMemcpyDeviceToHost)

    def launch(self, function: Any, grid: tuple[int, int, int], block: tuple[int, int, int], params: int) -> None:
        self.call("hipModuleLaunchKernel", function, *grid, *block, 0, None, params, None)


_DRIVERS = {"nvvm": _Cuda, "rocdl": _Hip}


@functools.cache
def driver(backend: str) -> _Cuda | _Hip:
    """The backend's driver on its first device (made once); DeviceError saying which library was tried and why it failed."""
    kind = _DRIVERS[backend]
    try:
        return kind()
    except ImportError as exc:
        raise DeviceError(f"{kind.library} is not installed ({exc}): {INSTALL[backend]}") from exc
    except (RuntimeError, OSError) as exc:  # the library is there, the driver (libcuda.so, libamdhip64.so) or a device is not
        raise DeviceError(f"no GPU device or driver was found (tried {kind.library}: {exc})") from exc


class GpuFunction:
    """A GPU compilation's host function run on the device: called as the CPU's native function is, with
    the inputs, then the outputs (NumPy arrays, filled in; or device arrays, written in place). Its
    intermediate buffers and constant arrays are allocated on the first call and kept; calls take turns."""

    reads_natively = False  # (kernel.py: the checked call path)

    def __init__(self, comp: Compilation) -> None:
        self.code = comp.facts["device"]
        self.driver = driver(comp.options.target.name)
        self.functions = self.driver.load(self.code.binary, sorted({k.name for k in self.code.kernels}))
        self.kept: dict[str, int] = {}  # the host function's allocations and constants on the device
        self.lock = threading.Lock()

    def _kept(self) -> dict[str, int]:
        """The device buffers of the host function's allocations and constant arrays (made once)."""
        if not self.kept and (self.code.host.allocs or self.code.host.constants):
            for name, nbytes in self.code.host.allocs.items():
                self.kept[name] = self.driver.alloc(nbytes)
            for name, data in self.code.host.constants.items():
                self.kept[name] = self.driver.alloc(len(data))
                self.driver.to_device(self.kept[name], np.frombuffer(data, np.uint8))
        return self.kept

    def __call__(self, *arrays: Any) -> None:
        host, driver = self.code.host, self.driver
        owned: list[int] = []
        results: list[tuple[Any, np.ndarray, int]] = []  # (the caller's output, its C-contiguous copy, its device buffer)
        with self.lock:
            try:
                bases = dict(self._kept())
                for name, value in zip(host.arguments, arrays, strict=True):
                    on_device = device_array(value)
                    if on_device is not None:
                        if not on_device.contiguous:
                            raise DeviceError(f"argument {name}: a device array that is not C-contiguous (copy it first)")
                        bases[name] = on_device.address
                        continue
                    array = np.ascontiguousarray(value)
                    owned.append(driver.alloc(array.nbytes))
                    bases[name] = owned[-1]
                    if name in host.outputs:
                        results.append((value, array, bases[name]))
                    else:
                        driver.to_device(bases[name], array)
                views = {op: bases[root] for op, root in host.roots.items()}
                for kernel in self.code.kernels:  # (the driver copies the params array when the launch is made)
                    params = pack(kernel.args, self.code.bare, views, host.scalars)
                    driver.launch(self.functions[kernel.name], kernel.grid, kernel.block, params.address)
                driver.synchronize()
                for given, array, address in results:
                    driver.to_host(array, address)
                    if array is not given:
                        np.copyto(given, array)
            finally:
                for address in owned:
                    driver.free(address)

    def __del__(self) -> None:
        for address in getattr(self, "kept", {}).values():
            self.driver.free(address)


class DeviceBuffer:
    """A device allocation holding a copy of a NumPy array, with __cuda_array_interface__ (as CuPy's arrays have):
    a kernel reads and writes it in place; `get()` copies it back. For timing and tests without CuPy."""

    def __init__(self, backend: str, array: np.ndarray) -> None:
        self.driver, self.like = driver(backend), np.ascontiguousarray(array)
        self.address = self.driver.alloc(self.like.nbytes)
        self.driver.to_device(self.address, self.like)
        self.__cuda_array_interface__ = {"data": (self.address, False), "shape": self.like.shape, "typestr": self.like.dtype.str,
                                         "strides": None, "version": 3}

    def get(self) -> np.ndarray:
        out = np.empty_like(self.like)
        self.driver.to_host(out, self.address)
        return out

    def __del__(self) -> None:
        self.driver.free(self.address)


def launcher(comp: Compilation) -> GpuFunction:
    """The GpuFunction of a GPU compilation; DeviceError naming what was tried and where its artifacts are."""
    from .artifacts import device_unavailable

    try:
        return GpuFunction(comp)
    except DeviceError as exc:
        raise device_unavailable(comp, str(exc)) from exc
