"""The fuzzer's programs (tests/fuzz_programs.py, finite data, C order) sampled on the GPU targets:
each compiles to checked device code (the HSACO's and ptxas's checks pass) or raises UnsupportedError
naming what a GPU target does not take yet; never another error. The compiled ones, emulated on the
CPU (lowering/gpu/emulate.py), match the same program compiled for the CPU."""

from __future__ import annotations

import numpy as np
import pytest
from fuzz_programs import arguments, fuzz_settings, programs
from hypothesis import given
from hypothesis import strategies as st

import egglog_tensor as et
from egglog_tensor.lowering.gpu.emulate import emulate


@pytest.mark.slow
@fuzz_settings(40)
@given(st.data())
def test_fuzz_programs_on_gpu_targets(data: st.DataObject) -> None:
    program = data.draw(programs())
    args = [np.require(a, requirements="C") for a in data.draw(arguments(program, finite=True))]
    target = data.draw(st.sampled_from(["rocdl:gfx942", "nvvm:sm_90"]))
    try:
        comp = et.kernel(program.function(), target=target).inspect(*args)
    except et.UnsupportedError:
        return
    cpu = et.kernel(program.function(), target="cpu")(*args)
    for out, ref in zip(emulate(comp, *args), cpu if isinstance(cpu, tuple) else (cpu,), strict=True):
        assert out.dtype == ref.dtype and out.shape == ref.shape
        np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4, equal_nan=True, err_msg=program.source())
