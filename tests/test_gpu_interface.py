"""The GPU kernels' interfaces, without a GPU: the HSACO metadata and PTX entries checked against each
launch (lowering/gpu/metadata.py: a mismatch is refused naming the kernel), the kernel-params array
the launcher packs for each recorded launch (gpu/signature.py) read back as the views the kernels
see, and device arrays' interfaces (gpu/launch.py)."""

from __future__ import annotations

import ctypes
import re
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import egglog_tensor as et
from egglog_tensor.errors import CompileError
from egglog_tensor.gpu.launch import DeviceArray, device_array, dlpack_tensor
from egglog_tensor.gpu.signature import operand, pack, parameters
from egglog_tensor.gpu.targets import gpu_target
from egglog_tensor.lowering.gpu.codegen import DeviceKernel, check_hsaco, generate, link_hsaco, with_cov5
from egglog_tensor.lowering.gpu.metadata import check_hsaco_metadata, check_ptx_entries

rng = np.random.default_rng(3)


def softmax(x):
    e = np.exp(x - np.max(x, axis=1, keepdims=True))
    return e / np.sum(e, axis=1, keepdims=True)


KINDS = {  # (function, arguments): bare pointers; memref descriptors (a blocked sum of long rows); a 0-d scalar argument
    "softmax": (softmax, (rng.standard_normal((100, 300)).astype(np.float32),)),
    "long-rows": (lambda x: x.sum(axis=1), (rng.standard_normal((8, 20000)).astype(np.float32),)),
    "matmul-epilogue": (lambda a, b, s: np.tanh(a @ b + s), (rng.standard_normal((64, 32)).astype(np.float32),
                                                            rng.standard_normal((32, 48)).astype(np.float32), 0.5)),
}


@pytest.fixture(scope="module", params=[(k, t) for k in KINDS for t in ("rocdl:gfx942", "nvvm:sm_90")], ids="-".join)
def compiled(request):
    kind, target = request.param
    fn, args = KINDS[kind]
    return et.kernel(fn, target=target).inspect(*args), args


def _check(comp, kernels: tuple[DeviceKernel, ...]) -> None:
    """The compilation's metadata check, run on other launches."""
    code = comp.facts["device"]
    if comp.options.target.name == "rocdl":
        check_hsaco_metadata(comp.stage("hsaco"), kernels, code.bare)
    else:
        check_ptx_entries(comp.stage("asm"), kernels, code.bare)


def test_metadata_agrees_with_launches(compiled) -> None:
    comp, _ = compiled
    code = comp.facts["device"]
    assert code.bare is (comp.facts[comp.options.target.name].bare)
    _check(comp, code.kernels)  # (the compilation ran it too)
    if comp.options.target.name == "rocdl":
        sizes = re.findall(r"\.kernarg_segment_size:\s+(\d+)", comp.stage("hsaco"))
        assert sorted(map(int, sizes)) == sorted(8 * len(parameters(k.args, code.bare)) for k in code.kernels)


def test_metadata_mismatch_names_the_kernel(compiled) -> None:
    comp, _ = compiled
    kernels = comp.facts["device"].kernels
    last = kernels[-1]
    amd = comp.options.target.name == "rocdl"
    one_more = (*kernels[:-1], replace(last, args=(*last.args, "%x: memref<4xf32>")))
    with pytest.raises(CompileError, match=rf"kernel {last.name} .*(kernarg_segment_size|\.param sizes)"):
        _check(comp, one_more)
    wider = (replace(kernels[0], block=(2 * kernels[0].block[0], 1, 1)), *kernels[1:])
    with pytest.raises(CompileError, match=rf"kernel {kernels[0].name} .*{'reqd_workgroup_size' if amd else 'maxntid'}"):
        _check(comp, wider)


HIDDEN = """target triple = "amdgcn-amd-amdhsa"
declare ptr addrspace(4) @llvm.amdgcn.implicitarg.ptr()
define amdgpu_kernel void @k(ptr %p) #0 {
  %hidden = call ptr addrspace(4) @llvm.amdgcn.implicitarg.ptr()
  %v = load i32, ptr addrspace(4) %hidden
  store i32 %v, ptr %p
  ret void
}
attributes #0 = { "amdgpu-flat-work-group-size"="1,128" }
"""


def test_hidden_arguments_count_in_the_kernarg_size() -> None:
    """A kernel reading its implicit arguments keeps code object v5's 256 bytes of them after its own: 8 + 256."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _, obj = generate(with_cov5(HIDDEN), gpu_target("rocdl:gfx942"), folder)
        assert obj is not None
        link_hsaco(obj, folder)
        kernel = DeviceKernel("k", (1, 1, 1), (128, 1, 1), ("%arg0: memref<4xi32>",))
        report = check_hsaco(folder / "device.hsaco", (kernel,))
    assert re.search(r"\.kernarg_segment_size:\s+264\n", report) and "hidden_block_count_x" in report
    check_hsaco_metadata(report, (kernel,), bare=True)
    with pytest.raises(CompileError, match=r"kernel k .*max_flat_workgroup_size is 128, its launch's block has 256 threads"):
        check_hsaco_metadata(report, (replace(kernel, block=(256, 1, 1)),), bare=True)
    with pytest.raises(CompileError, match="the HSACO's metadata has no kernel other"):
        check_hsaco_metadata(report, (replace(kernel, name="other"),), bare=True)
    with pytest.raises(CompileError, match="no AMDGPU metadata note"):
        check_hsaco_metadata(report[: report.index("Displaying notes")], (kernel,), bare=True)


def _read(address: int, kind: type) -> int | float:
    return kind.from_address(address).value


def test_packed_params_are_the_views_of_each_launch(compiled) -> None:
    """Each launch's params array, packed with host buffers as the device buffers, read back through its
    void** entries: every memref operand a view inside its root buffer, of its type's shape."""
    comp, _ = compiled
    code = comp.facts["device"]
    roots = {name: np.zeros(size, np.uint8) for name, size in code.host.allocs.items()}
    roots |= {name: np.zeros(4 * 8 * 20000 + 8, np.uint8) for name in code.host.arguments}  # (at least each argument's bytes)
    bases = {op: roots[root].ctypes.data for op, root in code.host.roots.items()}
    for kernel in code.kernels:
        packed = pack(kernel.args, code.bare, bases, code.host.scalars)
        pointers = list(packed.array)
        assert len(pointers) == len(parameters(kernel.args, code.bare)) == len(packed.values)
        at = 0
        for arg in kernel.args:
            op = operand(arg)
            root = roots[code.host.roots[op.name]]
            if code.bare:
                assert _read(pointers[at], ctypes.c_void_p) == root.ctypes.data
                offset, shape, strides, at = 0, op.shape, op.strides, at + 1
            else:
                allocated, aligned = (_read(p, ctypes.c_void_p) for p in pointers[at:at + 2])
                rank = len(op.shape)
                offset, *rest = (_read(p, ctypes.c_int64) for p in pointers[at + 2:at + 3 + 2 * rank])
                shape, strides, at = tuple(rest[:rank]), tuple(rest[rank:]), at + 3 + 2 * rank
                assert allocated == aligned == root.ctypes.data
                assert shape == op.shape
            last = offset + sum((n - 1) * s for n, s in zip(shape, strides)) if all(shape) else -1
            assert 0 <= offset and (last + 1) * op.itemsize <= root.nbytes, (kernel.name, arg)


def test_descriptors_describe_numpy_views() -> None:
    """The blocked sum of 8 rows of 20000 (longer than a block's 256 threads add unblocked, 64 each): its launches
    read x[:, :18432] as 9 blocks of 2048 and x[:, 18432:], as packed."""
    x = rng.standard_normal((8, 20000)).astype(np.float32)
    comp = et.kernel(lambda x: x.sum(axis=1), target="rocdl:gfx942").inspect(x)
    code = comp.facts["device"]
    first, second = code.kernels[0].args[0], code.kernels[1].args[0]
    bases = {op: x.ctypes.data for op, root in code.host.roots.items() if root == code.host.arguments[0]}
    views = []
    for arg in (first, second):
        values = [v.value for v in pack((arg,), False, bases).values]
        rank = len(operand(arg).shape)
        offset, shape, strides = values[2], values[3:3 + rank], values[3 + rank:]
        views.append(np.lib.stride_tricks.as_strided(x.ravel()[offset:], shape, [s * 4 for s in strides]))
    np.testing.assert_array_equal(views[0], x[:, :18432].reshape(8, 9, 2048))
    np.testing.assert_array_equal(views[1], x[:, 18432:])


def test_pack_refuses_what_it_cannot_pass() -> None:
    with pytest.raises(ValueError, match="no device buffer for %b"):
        pack(("%b: memref<4xf32>",), True, {})
    with pytest.raises(ValueError, match="not a static memref"):
        pack(("%b: memref<?xf32>",), True, {"%b": 0})
    with pytest.raises(ValueError, match="a scalar without a value"):
        pack(("%n: index",), True, {})
    assert [v.value for v in pack(("%n: index", "%s: f32"), True, {}, {"%n": 7, "%s": 0.5}).values] == [7, 0.5]


class FakeCupyArray:
    """An object carrying only a __cuda_array_interface__ (what CuPy, Numba and PyTorch's CUDA tensors expose)."""

    def __init__(self, address: int, shape: tuple[int, ...], typestr: str, strides: tuple[int, ...] | None) -> None:
        self.__cuda_array_interface__ = {"data": (address, False), "shape": shape, "typestr": typestr, "strides": strides, "version": 3}


def test_cuda_array_interface_is_read_in_place() -> None:
    array = device_array(FakeCupyArray(0x7F0000001000, (4, 300), "<f4", None))
    assert array == DeviceArray(0x7F0000001000, (4, 300), np.dtype(np.float32), None, array.owner) and array.contiguous
    assert not device_array(FakeCupyArray(0x7F0000001000, (300, 4), "<f4", (4, 1200))).contiguous  # a transposed view
    assert device_array(np.ones(3)) is None  # host data: copied by the launcher


def test_dlpack_capsule_is_read_without_copy() -> None:
    """NumPy's DLPack capsule (device type 1, the CPU) read as the launcher reads a GPU array's: address, shape, byte strides."""
    x = np.arange(12, dtype=np.int32).reshape(3, 4)[:, 1:]
    device_type, _, array = dlpack_tensor(x.__dlpack__())
    assert (device_type, array.address, array.shape, array.dtype, array.strides) == (1, x.ctypes.data, (3, 3), np.dtype(np.int32), (16, 4))
    assert not array.contiguous
    assert device_array(x) is None  # a CPU DLPack array is host data


def test_kernels_take_device_arrays_by_their_interface() -> None:
    """A device array's signature comes from its __cuda_array_interface__ (no copy to the host); a strided one is refused."""
    x = np.ones((4, 30), np.float32)
    comp = et.kernel(lambda x: x * 2.0, target="nvvm:sm_90").inspect(FakeCupyArray(x.ctypes.data, (4, 30), "<f4", None))
    assert (comp.specs[0].shape, comp.specs[0].dtype, comp.specs[0].layout) == ((4, 30), "float32", "C")
    with pytest.raises(et.KernelArgumentError, match="argument 'x': a device array must be C-contiguous"):
        et.kernel(lambda x: x * 2.0, target="nvvm:sm_90")(FakeCupyArray(x.ctypes.data, (30, 4), "<f4", (4, 120)))


def test_host_constants_become_device_buffers() -> None:
    """A captured array the host function reads as a constant (memref.get_global): its bytes kept for the
    launcher to copy to the device, and the launch's operand a view of it."""
    c = np.sqrt(np.arange(300, dtype=np.float32))
    comp = et.kernel(lambda a: a * c, target="rocdl:gfx942").inspect(np.ones((10, 300), np.float32))
    code = comp.facts["device"]
    ((name, data),) = code.host.constants.items()
    np.testing.assert_array_equal(np.frombuffer(data, np.float32), c)
    assert code.host.outputs == (code.host.arguments[-1],) and not code.host.allocs
    assert any(operand(a).name == name for a in code.kernels[0].args)
    check_hsaco_metadata(comp.stage("hsaco"), code.kernels, code.bare)
