"""Launches on a real GPU (marked `gpu`: deselected by default and by `-m slow`; on a machine with an NVIDIA or
AMD GPU and its driver: `pytest -m gpu -n 0 tests/test_gpu_launch.py`). Each kernel kind of test_gpu_kernels.py
launched on the device through gpu/launch.py and compared with NumPy, NumPy arrays copied in and out, and device
arrays (allocated with the driver, passed through __cuda_array_interface__) read and written in place."""

from __future__ import annotations

import numpy as np
import pytest

import egglog_tensor as et
from egglog_tensor.gpu.launch import DeviceBuffer, driver, launcher

pytestmark = pytest.mark.gpu
rng = np.random.default_rng(11)


def _backend() -> str:
    """The backend whose driver finds a device here (a DeviceError naming both libraries when none does)."""
    errors = []
    for backend in ("nvvm", "rocdl"):
        try:
            driver(backend)
            return backend
        except et.DeviceError as error:
            errors.append(str(error))
    raise et.DeviceError("tests marked gpu need a GPU and its driver: " + "; ".join(errors))


TARGET = {"nvvm": "nvvm:sm_80", "rocdl": "rocdl:gfx90a"}  # (PTX for sm_80 runs on any newer NVIDIA GPU; set EGGLOG_TENSOR_GPU to the AMD chip)


def _target() -> str:
    import os

    return os.environ.get("EGGLOG_TENSOR_GPU") or TARGET[_backend()]


def softmax(x):
    e = np.exp(x - np.max(x, axis=1, keepdims=True))
    return e / np.sum(e, axis=1, keepdims=True)


CASES = {
    "softmax": (softmax, (rng.standard_normal((1000, 300)).astype(np.float32),)),
    "broadcast": (lambda x, b: np.exp(x) * 0.5 + b, (rng.standard_normal((37, 513)).astype(np.float32), rng.standard_normal(513).astype(np.float32))),
    "long-rows (memref descriptors)": (lambda x: x.sum(axis=1), (rng.standard_normal((8, 20000)).astype(np.float32),)),
    "matmul-epilogue": (lambda a, b, s: np.tanh(a @ b + s), (rng.standard_normal((64, 32)).astype(np.float32),
                                                            rng.standard_normal((32, 48)).astype(np.float32), 0.5)),
    "transpose": (lambda x: x.T * 2.0 - 1.0, (np.asfortranarray(rng.standard_normal((50, 70))),)),
}


@pytest.mark.parametrize("case", CASES)
def test_launch_matches_numpy(case: str) -> None:
    fn, args = CASES[case]
    out = et.kernel(fn, target=_target())(*args)
    np.testing.assert_allclose(out, fn(*args), rtol=1e-5, atol=1e-5)


def test_device_arrays_in_place() -> None:
    """Device arrays (made with the driver, passed by __cuda_array_interface__) read in place, and an output written in place."""
    x = rng.standard_normal((256, 300)).astype(np.float32)
    on_device = DeviceBuffer(_backend(), x)
    f = et.kernel(softmax, target=_target())
    np.testing.assert_allclose(f(on_device), softmax(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(on_device.get(), x)  # (an input: not written)
    out = DeviceBuffer(_backend(), np.zeros_like(x))
    launcher(f.inspect(x))(on_device, out)
    np.testing.assert_allclose(out.get(), softmax(x), rtol=1e-5, atol=1e-6)
