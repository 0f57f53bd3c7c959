"""Device code generation with llvmlite, run as a script in a child process by codegen.py: LLVM's
AMDGPU and NVPTX backends end the process on what they cannot select (an intrinsic without a
library call), which must not be the caller's. Imports only llvmlite (no egglog_tensor: quick to start).

    python llc.py <triple> <chip> <in.ll> <out.s> [<out.o>]

writes the assembly (PTX for nvptx64) and, given a path, the object file; O3 before both.
"""

from __future__ import annotations

import sys

import llvmlite.binding as llvm


def generate(ir_text: str, triple: str, chip: str) -> tuple[str, bytes | None]:
    """(assembly, object code: None for NVPTX, whose output is PTX text) of `ir_text` for the chip."""
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
    return machine.emit_assembly(llvm.parse_assembly(optimized)), obj


def main(argv: list[str]) -> None:
    triple, chip, source, asm_path, *obj_path = argv
    with open(source) as f:
        asm, obj = generate(f.read(), triple, chip)
    with open(asm_path, "w") as f:
        f.write(asm)
    if obj_path and obj is not None:
        with open(obj_path[0], "wb") as f:
            f.write(obj)


if __name__ == "__main__":
    main(sys.argv[1:])
