"""Load LLVM IR with llvmlite: verify, optimize at O3 for the target's CPU and generate the object code
in the forked worker (egglog_tensor/forked.py), load it with MCJIT, keep IR and assembly."""

from __future__ import annotations

import ctypes
import functools
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import llvmlite.binding as llvm

from ..errors import CompileError
from ..forked import ChildDied, run_job
from ..target import Target, llvm_host
from ..toolchain import load_openmp_runtime, save_failure_input
from .elf import undefined_symbols
from .stages import streams
from .stages.vecmath import _libmvec


def _target_machine(target: Target) -> llvm.TargetMachine:
    """A fresh O3 TargetMachine for `target`'s CPU and features; MCJIT takes ownership of it."""
    return llvm_host()[0].create_target_machine(cpu=target.cpu, features=target.features, opt=3, jit=True)


@dataclass(frozen=True, eq=False)
class LoadedModule:
    """A JIT-compiled module: its IR before and after optimization, its assembly, and the live engine."""

    llvm_ir: str
    optimized_ir: str
    target: Target
    streamed: streams.Streamed = field(repr=False)  # the vector stores `_optimized_object` made non-temporal
    object_code: bytes = field(repr=False)  # the relocatable object the engine loaded (the cache stores it)
    _engine: llvm.ExecutionEngine = field(repr=False)

    def address(self, symbol: str) -> int:
        """Address of a function in the loaded code; CompileError if the module does not define it."""
        address = self._engine.get_function_address(symbol)
        if not address:
            raise CompileError(f"symbol {symbol!r} not found in the JIT-compiled module")
        return address

    @functools.cached_property
    def asm(self) -> str:
        """The assembly of the optimized IR, generated when first read: it costs as much as the object
        code, and only inspection reads it."""
        return _codegen(self.optimized_ir, self.target, assembly=True)


def _parse(llvm_ir: str) -> llvm.ModuleRef:
    """Parse and verify LLVM IR, raising CompileError with the IR saved to a file."""
    try:
        module = llvm.parse_assembly(llvm_ir)
        module.verify()
    except RuntimeError as exc:
        saved = save_failure_input(llvm_ir, "llvmlite-parse", suffix=".ll")
        raise CompileError(f"llvmlite failed at stage 'parse/verify'\n  input saved to: {saved}\n  error: {exc}") from None
    return module


def _optimized_object(llvm_ir: str, target: Target, send: Callable[[Any], None]) -> None:
    """In the worker: LLVM's O3 pipeline (loop and SLP vectorization on, as `opt -O3`) for `target`'s CPU,
    the marked stores it proved aligned made non-temporal (lowering/stages/streams.py: how many), then
    the object code; sends ("stage", name) as each step starts and (optimized IR, Streamed, object) last.

    In the worker, not in this process: each run of LLVM's O3 pipeline keeps 150-400 KB that LLVM never
    frees (1,000 kernels grew RSS by ~220 MB); the worker's memory goes when a new one replaces it. Code
    that may call libmvec realigns its stack (`stackrealign`, lowering/stages/vecmath.py)."""
    send(("stage", "O3"))
    machine = _target_machine(target)
    module = _parse(llvm_ir)
    tuning = llvm.create_pipeline_tuning_options(speed_level=3)
    tuning.loop_vectorization = tuning.slp_vectorization = True
    builder = llvm.create_pass_builder(machine, tuning)
    builder.getModulePassManager().run(module, builder)
    optimized_ir, streamed = streams.mark(for_codegen(str(module)))
    send(("stage", "codegen"))
    send((optimized_ir, streamed, machine.emit_object(_parse(optimized_ir))))


# float -> bfloat rounded to nearest even (a NaN kept quiet), as compiler-rt's __truncsfbf2: LLVM's code
# generator calls it for a bfloat value it keeps in a register (promoted to float) on CPUs without
# AVX512-BF16, and no library loaded in this process defines it.
_TRUNCSFBF2 = """
define bfloat @__truncsfbf2(float %x) {
  %b = bitcast float %x to i32
  %magnitude = and i32 %b, 2147483647
  %nan = icmp ugt i32 %magnitude, 2139095040
  %high = lshr i32 %b, 16
  %odd = and i32 %high, 1
  %bias = add i32 %odd, 32767
  %rounded = add i32 %b, %bias
  %nearest = lshr i32 %rounded, 16
  %quiet = or i32 %high, 64
  %bits = select i1 %nan, i32 %quiet, i32 %nearest
  %half = trunc i32 %bits to i16
  %value = bitcast i16 %half to bfloat
  ret bfloat %value
}
"""


# A scalar bfloat load: LLVM's x86 code generator asserts ("Shift operators return type must be the
# same as their first arg") when a loaded bfloat's bits are sign-extended (`load bfloat`, `bitcast` to
# i16, `sext`: InstCombine's form of copysign or signbit by a bfloat), so its loads read i16 instead.
_BFLOAT_LOAD = re.compile(r"^(\s*)(%[-\w.$]+) = load bfloat, (ptr .*)$", re.MULTILINE)


def for_codegen(optimized_ir: str) -> str:
    """Optimized IR as LLVM's code generator can take it: where it has bfloat values, its scalar bfloat
    loads read the bits as i16 (`_BFLOAT_LOAD`), and the runtime functions code generation may call that
    no library defines (__truncsfbf2) are appended."""
    if "bfloat" not in optimized_ir or "define bfloat @__truncsfbf2(" in optimized_ir:
        return optimized_ir
    count = itertools.count()

    def as_bits(match: re.Match[str]) -> str:
        indent, value, address = match.groups()
        bits = f"%bfloat.bits.{next(count)}"
        return f"{indent}{bits} = load i16, {address}\n{indent}{value} = bitcast i16 {bits} to bfloat"

    return _BFLOAT_LOAD.sub(as_bits, optimized_ir) + _TRUNCSFBF2


def _check_externals(module: llvm.ModuleRef, llvm_ir: str) -> None:
    """Every function the code calls but does not define must exist in the process.

    MCJIT leaves an unresolved symbol at address 0, so calling it would crash the interpreter.
    """
    missing = [f.name for f in module.functions if f.is_declaration and not f.name.startswith("llvm.") and not resolves(f.name)]
    if missing:
        saved = save_failure_input(llvm_ir, "llvmlite-link", suffix=".ll")
        raise CompileError(
            f"llvmlite failed at stage 'link': the code calls {', '.join(sorted(missing))}, "
            f"which no loaded library defines\n  input saved to: {saved}"
        )


def resolves(symbol: str) -> bool:
    """Whether MCJIT finds `symbol`: added to llvmlite, or in the process or a library loaded with RTLD_GLOBAL."""
    return bool(llvm.address_of_symbol(symbol)) or hasattr(ctypes.CDLL(None), symbol)


def load_llvm_ir(llvm_ir: str, target: Target) -> LoadedModule:
    """Parse, verify, optimize, generate code for `target` and JIT-load LLVM IR (its object code kept
    in `LoadedModule.object_code` for the compilation cache); loads the OpenMP runtime and libmvec
    first if the IR needs them. CompileError if this machine cannot run code for `target`."""
    check_runs_here(target)
    machine = _target_machine(target)
    if "__kmpc_" in llvm_ir:
        load_openmp_runtime()
    if "_ZGV" in llvm_ir:  # vector variants of libm calls (stages/vecmath.py; the stage ran in another process)
        _libmvec()
    module = _parse(llvm_ir)
    _check_externals(module, llvm_ir)
    module.triple = machine.triple
    module.data_layout = str(machine.target_data)
    optimized_ir, streamed, object_code = _in_worker(functools.partial(_optimized_object, str(module), target), llvm_ir)
    return load_object(object_code, target, llvm_ir, optimized_ir, machine, streamed=streamed)


def _codegen(optimized_ir: str, target: Target, assembly: bool = False) -> Any:
    """The object code (bytes) or, with `assembly`, the assembly (str) of optimized IR, generated in the worker."""
    return _in_worker(functools.partial(_generate, optimized_ir, target, assembly), optimized_ir)


def _generate(optimized_ir: str, target: Target, assembly: bool, send: Callable[[Any], None]) -> None:
    """In the worker: send ("stage", "codegen"), then the object code or assembly of optimized IR."""
    send(("stage", "codegen"))
    machine = _target_machine(target)
    module = _parse(optimized_ir)
    send(machine.emit_assembly(module) if assembly else machine.emit_object(module))


def _in_worker(job: functools.partial[None], llvm_ir: str) -> Any:
    """Run a job of this module's in the forked worker: what it sent last. LLVM ends the process running
    it on what it cannot do ("LLVM ERROR: Cannot select"), which must not be this one (a notebook's
    kernel): that becomes a CompileError naming the step, with the IR saved."""
    sent: list[Any] = [("stage", "O3")]
    try:
        run_job(job, sent.append)
    except ChildDied as died:
        saved = save_failure_input(llvm_ir, f"llvmlite-{sent[-1][1]}", suffix=".ll")
        raise CompileError(
            f"llvmlite failed at stage '{sent[-1][1]}': LLVM ended the process running it ({died.how})\n"
            f"  input saved to: {saved}\n  error: {died.stderr.strip()}"
        ) from None
    return sent[-1]


def check_runs_here(target: Target) -> None:
    """CompileError unless this machine's CPU has every feature `target`'s code may use."""
    missing = target.missing_on(Target.host())
    if missing:
        raise CompileError(f"code for target cpu {target.cpu!r} cannot run on this machine ({Target.host().cpu!r} lacks "
                           f"{', '.join(missing)}); inspect it with f.lower(*args) instead of calling it")


def load_object(object_code: bytes, target: Target, llvm_ir: str = "", optimized_ir: str = "",
                machine: llvm.TargetMachine | None = None, *, streamed: streams.Streamed) -> LoadedModule:
    """JIT-load a relocatable object file (from `emit_object`) for `target` into a fresh MCJIT engine
    (`streamed`: its non-temporal stores, as `_optimized_object` counted them).

    Libraries the object calls into (libmvec, the OpenMP runtime) must already be loaded.
    """
    check_runs_here(target)
    missing = [name for name in undefined_symbols(object_code) if not resolves(name)]
    if missing:  # (MCJIT would leave them at address 0: the first call would crash the process)
        saved = save_failure_input(optimized_ir or llvm_ir, "llvmlite-link", suffix=".ll")
        raise CompileError(f"llvmlite failed at stage 'link': the generated code calls {', '.join(sorted(missing))}, which no "
                           f"loaded library defines (a runtime function LLVM's code generator called for an operation "
                           f"{target.cpu!r} has no instruction for)\n  input saved to: {saved}")
    machine = machine or _target_machine(target)
    empty = llvm.parse_assembly("")
    empty.triple = machine.triple
    empty.data_layout = str(machine.target_data)
    engine = llvm.create_mcjit_compiler(empty, machine)
    engine.add_object_file(llvm.ObjectFileRef.from_data(object_code))
    engine.finalize_object()
    return LoadedModule(llvm_ir=llvm_ir, optimized_ir=optimized_ir, target=target, streamed=streamed, _engine=engine,
                        object_code=bytes(object_code))
