"""Named MLIR pass pipelines (linalg on tensors -> LLVM dialect), run stage by stage so every stage's IR is kept."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from mlir import ir, passmanager

from ..errors import CompileError
from ..forked import ChildDied, run_forked
from ..target import Machine, Target, default_threads
from ..toolchain import run_tool, save_failure_input
from . import accumulate, copies, flatten, interleave, lanes, mathapprox, nontemporal, parallel, polymath, rows, scripts, tiling, workspace
from .plan import Plan, contraction_plan


@dataclass(frozen=True)
class Stage:
    """One named step of a pipeline: pass-pipeline elements run inside `builtin.module(...)`.

    A stage with a `script` builds a transform-dialect module from the IR it receives (None: the
    stage has nothing to do and is skipped), kept as the stage text "<name>-script": typed IR (an
    ir.Module built with lowering/scripts.py), applied to the payload in place before the passes.
    A `planned` stage's script also receives the run's contraction plan (lowering/plan.py).
    """

    name: str
    passes: tuple[str, ...]
    script: Callable[..., ir.Module | None] | None = None
    rewrite: Callable[[ir.Module], None] | None = None  # applied in place after the passes
    planned: bool = False  # its script is script(module, plan)

    def build_script(self, module: ir.Module, plan: Plan | None) -> ir.Module | None:
        """The stage's transform module for `module` (None: nothing to do)."""
        return self.script(module, plan) if self.planned else self.script(module)

    @property
    def pipeline_text(self) -> str:
        """The textual pass pipeline handed to PassManager.parse."""
        return f"builtin.module({','.join(self.passes)})"


@dataclass(frozen=True)
class Pipeline:
    """An ordered tuple of stages with a name users pick it by."""

    name: str
    stages: tuple[Stage, ...]
    needs_openmp: bool = False
    target: Target | None = None  # what its planned stages plan for (`pipeline_for`)

    def plan(self, stage: Stage, module: ir.Module, plan: Plan | None) -> Plan | None:
        """The contraction plan of a run at `stage`: `plan` once made, else made from `module` (what
        the first planned stage receives) when `stage` is planned; the run hands it to each later one."""
        return plan or (contraction_plan(module, self.target) if stage.planned else None)


def _after_bufferize(module: ir.Module) -> None:
    """Strided copies as loops (lowering/copies.py), then large temporaries as lent arguments (lowering/workspace.py)."""
    copies.explicit(module)
    workspace.hoist(module)


# Input: linalg on tensors, memref function arguments read with `bufferization.to_tensor ... restrict`
# and written with `bufferization.materialize_in_destination ... restrict writable`. Copies of strided
# buffers then become linalg.copy loops (no runtime-library call), and large top-level temporaries
# trailing arguments the caller lends.
BUFFERIZE = Stage(
    "bufferize",
    (
        "eliminate-empty-tensors",
        "empty-tensor-to-alloc-tensor",
        "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}",
        "canonicalize",
        "buffer-deallocation-pipeline",
        "canonicalize",
    ),
    rewrite=_after_bufferize,
)

# Math ops with an LLVM intrinsic become intrinsics (LLVM may vectorize them); the rest (atan2, ...) call libm.
TO_LLVM = Stage(
    "llvm",
    (
        "lower-affine",
        "convert-scf-to-cf",
        "convert-math-to-llvm",
        "convert-math-to-libm",
        "convert-vector-to-llvm{reassociate-fp-reductions}",
        "expand-strided-metadata",
        "lower-affine",
        "finalize-memref-to-llvm",
        "convert-arith-to-llvm",
        "convert-index-to-llvm",
        "convert-ub-to-llvm",
        "convert-func-to-llvm",
        "convert-cf-to-llvm",
        "reconcile-unrealized-casts",
    ),
)

# Each stage that depends on the machine gets the Target as its builder's or rewrite's `target`.

# Kernels tagged et.rows (fuse_rows in the term) become one loop over row blocks (lowering/rows.py).
ROWS = Stage("rows", ("canonicalize",), script=rows.transform_script)

# Ops of cpu-openmp split into one chunk per thread along one loop (lowering/parallel.py), but those
# the tile stage computes: both read one contraction plan (lowering/plan.py), made before the first.
PARALLEL = Stage("parallel", ("canonicalize",), script=parallel.transform_script, planned=True)

# Contractions tagged with et.tiles / et.vec (lowering/tiling.py): tiled, vectorized on tensors, as
# the run's contraction plan says (lowering/plan.py).
# No cse here: merging the contractions' identical tensor.empty/fill inits makes eliminate-empty-tensors
# write several outputs through one output buffer (wrong results); cse runs after bufferization.
# Then each register tile's k loop accumulates from zero, its sum added to C after it (accumulate.py).
TILE = Stage("tile", ("canonicalize",), script=tiling.transform_script, rewrite=accumulate.restart, planned=True)

# Vector ops left by the tile stage: n-D transfers -> loops of 1-D ones, masks -> selects.
VECTOR = Stage("vector", ("convert-vector-to-scf{full-unroll=true}", "func.func(lower-vector-mask)", "canonicalize", "cse"))

# Elementwise ops over contiguous buffers become one flat loop: no remainder per row (flatten.py).
FLATTEN = Stage("flatten", ("canonicalize",), script=flatten.transform_script)

# Row reductions with lanes chosen in the term (et.lanes, set by the rows stage): their reduction loop
# carries the vector width and interleave count for LLVM's vectorizer (lowering/lanes.py).
LANES = Stage("lanes", ("canonicalize",), script=lanes.transform_script)
LOOP_METADATA = Stage("loop-metadata", (), rewrite=lanes.loop_metadata)

# exp (float32, float64) and float32 tanh, scalar or vector, become inline arith/math ops before the loops are made (polymath.py).
MATH = Stage("math", (), rewrite=polymath.inline_math)

# Linalg ops become loops (scf.for; cpu-openmp: the chunks' forall becomes scf.parallel); loop nests
# writing large outputs are versioned on their alignment for streamed stores (nontemporal.py).
LOOPS = Stage("loops", ("func.func(convert-linalg-to-loops)", "scf-forall-to-for", "canonicalize", "cse"), rewrite=nontemporal.guard)
PARALLEL_LOOPS = Stage("parallel-loops", ("func.func(convert-linalg-to-loops)", "scf-forall-to-parallel", "canonicalize", "cse"),
                       rewrite=nontemporal.guard)

# Long elementwise loops (inline math) ask LLVM to interleave 4 or 8 vectors (interleave.py).
INTERLEAVE = Stage("interleave", (), rewrite=interleave.annotate)

# Stores of large outputs marked nontemporal by the loops stage's guard carry an access group that
# LLVM's vectorizer keeps; after O3, the vector ones proved aligned become non-temporal (nontemporal.py).
STREAMS = Stage("streams", (), rewrite=nontemporal.access_groups)

# Scalar exp/log/tanh/sin/cos become libm calls that LLVM vectorizes with glibc's libmvec (mathapprox.py).
VECMATH = Stage("vecmath", (), rewrite=mathapprox.vectorize_math)

# Hooks that read the Target (the others take only the module).
_TARGETED = {rows.transform_script, lanes.transform_script, polymath.inline_math, nontemporal.guard, interleave.annotate,
             mathapprox.vectorize_math}

CPU = (ROWS, TILE, BUFFERIZE, FLATTEN, LANES, MATH, LOOPS, INTERLEAVE, VECTOR, TO_LLVM, STREAMS, LOOP_METADATA, VECMATH)


def _openmp(threads: int) -> tuple[Stage, ...]:
    """The cpu-openmp stages (compiled in: the chunks of each op, omp num_threads).

    The "parallel" stage (lowering/parallel.py) splits each linalg op into one chunk per thread
    along one loop (scf.forall); the chunks' loops stay sequential scf.for (convert-linalg-to-loops)
    so LLVM vectorizes them; forall -> scf.parallel -> omp.parallel/omp.wsloop.
    """
    return (ROWS, PARALLEL, TILE, BUFFERIZE, FLATTEN, LANES, MATH, PARALLEL_LOOPS, INTERLEAVE, VECTOR,
            Stage("openmp", (f"convert-scf-to-openmp{{num-threads={threads}}}",)),
            Stage("llvm", ("convert-openmp-to-llvm", *TO_LLVM.passes)), STREAMS, LOOP_METADATA, VECMATH)


def _bind(stage: Stage, target: Target) -> Stage:
    """`stage` with `target` given to its hooks that read it."""
    def bound(hook: Callable | None) -> Callable | None:
        return functools.partial(hook, target=target) if hook in _TARGETED else hook

    return Stage(stage.name, stage.passes, bound(stage.script), bound(stage.rewrite), stage.planned)


NAMES = ("cpu", "cpu-openmp")  # the pipelines a Target may name


@functools.cache
def pipeline_for(target: Target) -> Pipeline:
    """The pipeline of `target.name` with its stages bound to `target` (cpu-openmp for its threads)."""
    if target.name not in NAMES:
        raise ValueError(f"unknown target {target.name!r}; targets: {', '.join(NAMES)}")
    if target.threads < 1:
        raise ValueError(f"threads must be >= 1, got {target.threads}")
    openmp = target.name == "cpu-openmp"
    stages = _openmp(target.threads) if openmp else CPU
    return Pipeline(target.name, tuple(_bind(s, target) for s in stages), needs_openmp=openmp, target=target)


def resolve_target(target: str | Target | None, threads: int | None = None, machine: Machine | None = None) -> Target:
    """The Target a kernel compiles for: a pipeline name on this machine (`Target.host()`), or a Target;
    `threads` (cpu-openmp only; default the Target's, else `default_threads()`) and `machine` replace its own.
    None: "cpu-openmp" when this process may use more than one core, else "cpu"."""
    if threads is not None and (not isinstance(threads, int) or isinstance(threads, bool) or threads < 1):
        raise ValueError(f"threads must be a positive int, got {threads!r}")
    if machine is not None and not isinstance(machine, Machine):
        raise ValueError(f"machine must be an egglog_tensor.Machine, got {type(machine).__name__}")
    if isinstance(target, Target):
        base, threads = target, threads or (target.threads if target.name == "cpu-openmp" else None)
    elif target is None or isinstance(target, str):
        base = Target.host()
    else:
        raise ValueError(f"target must be a pipeline name or an egglog_tensor.Target, got {type(target).__name__}")
    threads = threads or default_threads()
    name = base.name if isinstance(target, Target) else target or ("cpu-openmp" if threads > 1 else "cpu")
    if name not in NAMES:
        raise ValueError(f"unknown target {name!r}; targets: {', '.join(NAMES)}")
    return replace(base, name=name, threads=threads if name == "cpu-openmp" else 1, machine=machine or base.machine)

# MLIR 22's memref-to-LLVM lowering asserts (aborting the process: the build has assertions on) on
# sub-byte element types, so i1 memrefs are refused before that pass runs; store booleans as i8.
_I1_MEMREF = re.compile(r"memref<(?:[0-9?]+x)*i1[,>]")


def _fail(pipeline: Pipeline, stage: Stage, ir_text: str, diagnostics: str) -> CompileError:
    """Build the CompileError for a failed stage, saving the stage's input IR to a file."""
    saved = save_failure_input(ir_text, f"{pipeline.name}-{stage.name}")
    return CompileError(
        f"MLIR pipeline {pipeline.name!r} failed at stage {stage.name!r}\n"
        f"  passes: {stage.pipeline_text}\n"
        f"  input IR saved to: {saved}\n"
        f"  diagnostics:\n{diagnostics}"
    )


_OP_NAME = re.compile(r"^\s*(?:%[^=]+=\s*)?\"?([a-z_][a-z0-9_]*)\.([a-z_][a-z0-9_.]*)", re.MULTILINE)


def _unlowered_ops(ir_text: str) -> list[str]:
    """Ops mlir-translate cannot take (not llvm, builtin or omp) left in a lowered module (sorted, unique)."""
    return sorted({f"{d}.{o}" for d, o in _OP_NAME.findall(ir_text) if d not in ("llvm", "builtin", "omp")})


def run_pipeline(module_text: str, pipeline: Pipeline) -> list[tuple[str, str]]:
    """Run each stage of pipeline on module_text and return [(stage name, IR after that stage)].

    The stages run in a forked child (egglog_tensor.forked): an MLIR assertion aborts that child
    only, and becomes a CompileError naming the stage it was in, with the stage's input IR saved."""
    results: list[tuple[str, str]] = []
    started = ["parse"]  # the stage the child was in last

    def sink(item: tuple[str, str | None]) -> None:
        name, text = item
        if text is None:
            started[0] = name
        else:
            results.append((name, text))

    try:
        run_forked(lambda send: _run_stages(module_text, pipeline, send), sink)
    except ChildDied as died:
        stage = next((s for s in pipeline.stages if s.name == started[0]), Stage(started[0], ()))
        inputs = [text for name, text in results if not name.endswith("-script")] or [module_text]
        script = results[-1][1] if results and results[-1][0] == f"{stage.name}-script" else ""
        raise _fail(pipeline, stage, inputs[-1], f"the stage ended the process running it ({died.how}):\n{died.stderr}"
                    + (f"\n  transform script:\n{script}" if script else "")) from None
    return results


def _run_stages(module_text: str, pipeline: Pipeline, send: Callable[[tuple[str, str | None]], None]) -> None:
    """Run the stages in this process: send (stage name, None) as each starts and (stage name, IR after
    it) as it ends, a transform script as ("<stage>-script", script)."""
    with ir.Context():
        send(("parse", None))
        try:
            module = ir.Module.parse(module_text)
        except ir.MLIRError as exc:
            raise _fail(pipeline, Stage("parse", ()), module_text, str(exc)) from None
        current = module_text
        plan = None
        for stage in pipeline.stages:
            send((stage.name, None))
            plan = pipeline.plan(stage, module, plan)
            after = run_stage(module, stage, pipeline, current,
                              on_script=lambda script, name=stage.name: send((f"{name}-script", script)), plan=plan)
            if after is not None:
                module, current = after, str(after)
            send((stage.name, current))
        left = _unlowered_ops(current)
        if left:  # conversions are partial: a missing pass leaves ops that mlir-translate cannot take
            last = pipeline.stages[-1]
            raise _fail(pipeline, last, current, f"ops left after the last stage, not in the LLVM dialect: {', '.join(left)}")


def run_stage(module: ir.Module, stage: Stage, pipeline: Pipeline, current: str | None = None,
              on_script: Callable[[str], None] | None = None, plan: Plan | None = None) -> ir.Module | None:
    """Apply one stage to `module` (in the active MLIR context), in place: build its transform script
    (a planned stage's from the run's `plan`, made here when not given) and apply it, run its
    passes, apply its rewrite. Return the module after it, or None when its script builder has
    nothing to do (the IR is unchanged).
    `on_script` receives the script's text before it runs; `current` is the module's text (printed
    here if not given), saved with the CompileError naming the stage when it fails."""
    current = str(module) if current is None else current
    if _I1_MEMREF.search(current) and any(p.startswith("finalize-memref-to-llvm") for p in stage.passes):
        raise _fail(pipeline, stage, current, "memrefs of i1 cannot be lowered to LLVM; use i8 (0/1) in memory")
    script = None
    if stage.script is not None:
        script = stage.build_script(module, pipeline.plan(stage, module, plan))
        if script is None:  # nothing to transform: the stage keeps its place, IR unchanged
            return None
        if on_script is not None:
            on_script(str(script))
    try:
        if script is not None:
            scripts.apply(module, script)
        manager = passmanager.PassManager.parse(stage.pipeline_text)
        manager.run(module.operation)
        if stage.rewrite is not None:
            stage.rewrite(module)
    except (ir.MLIRError, ValueError) as exc:  # ValueError: the pass pipeline text does not parse
        raise _fail(pipeline, stage, current, str(exc) + (f"\n  transform script:\n{script}" if script is not None else "")) from None
    return module


def lower_to_llvm_ir(llvm_dialect_text: str) -> str:
    """Translate LLVM-dialect MLIR to LLVM IR text with mlir-translate (the bindings lack this)."""
    return run_tool("mlir-translate", ["--mlir-to-llvmir"], llvm_dialect_text, stage="mlir-to-llvmir")
