"""Device code generation with llvmlite, run in the forked worker by codegen.py (egglog_tensor.forked.run_job):
LLVM's AMDGPU and NVPTX backends end the process on what they cannot select (an intrinsic without a
library call), which must not be the caller's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import llvmlite.binding as llvm


def generate(ir_text: str, triple: str, chip: str, send: Callable[[Any], None]) -> None:
    """Send (assembly, object code: None for NVPTX, whose output is PTX text) of `ir_text` for the chip; O3 before both."""
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    machine = llvm.Target.from_triple(triple).create_target_machine(cpu=chip, opt=3, reloc="pic")
    module = llvm.parse_assembly(ir_text)
    module.triple = triple
    module.data_layout = str(machine.target_data)
    module.verify()
    builder = llvm.create_pass_builder(machine, llvm.create_pipeline_tuning_options(speed_level=3))
    builder.getModulePassManager().run(module, builder)
    optimized = str(module)  # code generation changes the module it runs on (AMDGPU's control flow annotations): one copy each
    obj = None if triple.startswith("nvptx") else machine.emit_object(llvm.parse_assembly(optimized))
    send((machine.emit_assembly(llvm.parse_assembly(optimized)), obj))
