"""GPU targets by name (egglog_tensor/gpu/targets.py), their errors, and what a GPU-targeted kernel
gives without a device: inspect's stages, et.compile's artifacts, DeviceError on a call."""

from __future__ import annotations

import json

import numpy as np
import pytest

import egglog_tensor as et
from egglog_tensor.gpu.targets import gpu_target
from egglog_tensor.lowering.pipelines import resolve_target


@pytest.mark.parametrize(("name", "backend", "units", "wave"), [
    ("rocdl:gfx942", "rocdl", 304, 64), ("rocdl:gfx90a", "rocdl", 110, 64), ("rocdl:gfx1100", "rocdl", 96, 32),
    ("rocdl:gfx1030", "rocdl", 64, 32), ("rocdl:gfx908", "rocdl", 64, 64),  # unknown chips: the vendor's defaults
    ("nvvm:sm_90", "nvvm", 132, 32), ("nvvm:sm_80", "nvvm", 108, 32), ("nvvm:sm_86", "nvvm", 64, 32),
])
def test_gpu_target_names(name: str, backend: str, units: int, wave: int) -> None:
    target = resolve_target(name)
    assert target.device is not None
    assert (target.name, f"{target.name}:{target.cpu}", target.device.units, target.device.wave) == (backend, name, units, wave)
    assert target.machine.bandwidth_gbs == target.device.bandwidth_gbs  # the cost model prices with the GPU's numbers
    assert target.label == f"{backend} on {name.split(':')[1]}"


def test_known_gpu_numbers() -> None:
    mi300x, h100 = gpu_target("rocdl:gfx942").device, gpu_target("nvvm:sm_90").device
    assert (mi300x.bandwidth_gbs, mi300x.shared) == (5300.0, 64 * 1024)
    assert (h100.bandwidth_gbs, h100.shared) == (3350.0, 227 * 1024)


@pytest.mark.parametrize(("name", "message"), [
    ("rocdl:sm_90", "not a AMD gfx chip name"), ("rocdl:gfx", "not a AMD gfx chip name"), ("rocdl:", "not a AMD gfx chip name"),
    ("nvvm:gfx942", "not a NVIDIA sm_ chip name"), ("nvvm:sm_9", "not a NVIDIA sm_ chip name"), ("nvvm:sm_90x", "not a NVIDIA sm_ chip name"),
    ("cuda:sm_90", "unknown target"), ("rocm", "unknown target"),
])
def test_bad_gpu_target_names(name: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        et.kernel(lambda x: x + 1.0, target=name)


def test_gpu_target_takes_no_threads() -> None:
    with pytest.raises(ValueError, match="threads is for the cpu-openmp target"):
        et.kernel(lambda x: x + 1.0, target="nvvm:sm_90", threads=2)


def _scale(x, b):
    return np.exp(x) * 0.5 + b


X = np.full((40, 300), 0.25, np.float32)
B = np.linspace(-1.0, 1.0, 300, dtype=np.float32)


@pytest.mark.parametrize(("target", "tried"), [("rocdl:gfx942", r"hip-python is not installed .*pip install hip-python|tried hip-python"),
                                               ("nvvm:sm_90", r"no GPU device or driver was found \(tried cuda-bindings")])
def test_call_without_device_names_artifacts(target: str, tried: str) -> None:
    """Here (no GPU, no driver): DeviceError saying which driver library was tried and where the artifacts are."""
    f = et.kernel(_scale, target=target)
    with pytest.raises(et.DeviceError, match=rf"cannot run here: .*({tried}).*; its artifacts are in (\S+)") as raised:
        f(X, B)
    folder = raised.value.args[0].split("artifacts are in ")[1].split(" ")[0]
    suffix = ".hsaco" if target.startswith("rocdl") else ".ptx"
    with open(f"{folder}/_scale{suffix}", "rb") as binary:
        assert binary.read()[:4] == (b"\x7fELF" if suffix == ".hsaco" else b"//\n/")


@pytest.mark.parametrize("target", ["rocdl:gfx90a", "nvvm:sm_80"])
def test_compile_writes_artifacts(tmp_path, target: str) -> None:
    comp = et.compile(_scale, X, B, target=target, out_dir=tmp_path)
    manifest = json.loads((tmp_path / "launches.json").read_text())
    assert manifest["target"] == target
    assert manifest["memrefs"] == "bare pointers"
    assert manifest["launches"] == [{"kernel": "kernel_kernel", "grid": [2, 40, 1], "block": [256, 1, 1],
                                     "args": ["%arg0: memref<40x300xf32>", "%arg1: memref<300xf32>", "%arg2: memref<40x300xf32>"]}]
    assert (tmp_path / f"_scale{'.hsaco' if target.startswith('rocdl') else '.ptx'}").stat().st_size > 1000
    assert (tmp_path / "llvm-ir.ll").read_text() == comp.stage("llvm-ir")
    assert "gpu.module" in (tmp_path / "gpu-outline.mlir").read_text()


def test_compile_of_a_kernel_for_another_target(tmp_path) -> None:
    f = et.kernel(_scale, target="cpu")
    comp = et.compile(f, X, B, target="nvvm:sm_90", out_dir=tmp_path)
    assert comp.options.target.name == "nvvm"
    assert (tmp_path / "asm.ptx").read_text().count(".entry kernel_kernel") == 1


def test_compile_for_the_cpu_writes_its_object(tmp_path) -> None:
    comp = et.compile(_scale, X, B, target="cpu", out_dir=tmp_path)
    assert (tmp_path / "_scale.o").read_bytes()[:4] == b"\x7fELF"
    assert comp.native is not None
    np.testing.assert_allclose(et.kernel(_scale, target="cpu")(X, B), np.exp(X) * 0.5 + B, rtol=1e-6, atol=1e-7)


def test_staged_lower_shows_gpu_stages() -> None:
    lowered = et.kernel(_scale, target="rocdl:gfx942").trace(X, B).optimize().lower()
    assert lowered.stages[3:] == ["linalg", "provenance", "destinations", "gpu-tile-script", "gpu-tile", "gpu-bufferize", "gpu-reduce",
                                  "gpu-map-script", "gpu-map", "gpu-outline", "math", "noalias", "rocdl", "device", "llvm-ir", "asm", "hsaco"]
    assert "transform.gpu.map_forall_to_blocks" in lowered.as_text("gpu-map-script")
    assert "gpu.launch blocks" in lowered.as_text("gpu-map")
    assert "math.exp" in lowered.as_text("gpu-outline") and "math.exp" not in lowered.as_text("math")  # inline exp on the device
    assert "define amdgpu_kernel void @kernel_kernel(ptr noalias %0, ptr noalias %1, ptr noalias %2)" in lowered.llvm_ir
    assert "amdhsa_code_object_version" in lowered.llvm_ir


@pytest.mark.parametrize(("fn", "message"), [
    (lambda x: np.fmod(x, 2.0), "fmod or a float % \\(arith.remf\\) would need the device's math library"),
    (lambda x: x[::-1] + 1.0, "a reversed view"),
    (lambda x: np.cumsum(x, axis=1), "scf.for would run on the host, outside a kernel"),
])
def test_unsupported_on_gpu(fn, message: str) -> None:
    with pytest.raises(et.UnsupportedError, match=message):
        et.kernel(fn, target="nvvm:sm_90").inspect(X)
