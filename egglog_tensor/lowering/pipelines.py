"""Named MLIR pipelines (linalg on tensors -> LLVM dialect): the stages of lowering/stages/ made for a Target, run
stage by stage in a forked child, keeping what each decided (its facts) and, when printed, each stage's IR."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from mlir import ir, passmanager

from ..errors import CompileError
from ..forked import ChildDied, run_job
from ..gpu.targets import gpu_target, is_gpu_name
from ..sourcelines import Line, lines_in, name_lines
from ..target import Machine, Target, default_threads
from ..toolchain import run_tool, save_failure_input
from . import scripts
from .plan import Plan, contraction_plan
from .stages import Passes, Stage, cpu, cpu_openmp
from .translate import translate


@dataclass(frozen=True)
class Pipeline:
    """An ordered tuple of stages with a name users pick it by."""

    name: str
    stages: tuple[Stage, ...]
    host: bool = True  # its last stage is all LLVM dialect (a GPU pipeline's keeps host code beside the device's)

    def plan(self, stage: Stage, module: ir.Module, plan: Plan | None) -> Plan | None:
        """The contraction plan of a run at `stage`: `plan` once made, else made from `module` (what
        the first planned stage receives) when `stage` is planned; the run hands it to each later one."""
        return plan or (contraction_plan(module, stage.target) if stage.planned else None)


@dataclass(frozen=True)
class Ran:
    """What running a pipeline gave: [(stage name, IR after it)] (and each script as "<stage>-script";
    the text None where the run did not print it: `run_pipeline(printed=False)` prints only the last
    stage's), and each stage's facts (the typed record its rewrite or script returned) by stage name."""

    texts: list[tuple[str, str | None]]
    facts: dict[str, Any]
    llvm_ir: str | None = None  # the last stage's module translated to LLVM IR, when asked and it translated

    @property
    def final(self) -> str:
        """The IR after the last stage (LLVM dialect): what mlir-translate takes."""
        text = self.texts[-1][1]
        assert text is not None
        return text


NAMES = ("cpu", "cpu-openmp")  # the pipelines a Target may name


@functools.cache
def pipeline_for(target: Target) -> Pipeline:
    """The pipeline of `target.name`, its stages made for `target` (lowering/stages/; a GPU target's: lowering/gpu/)."""
    if target.device is not None:
        from .gpu import gpu_stages

        return Pipeline(f"{target.name}:{target.cpu}", gpu_stages(target), host=False)
    if target.name not in NAMES:
        raise ValueError(f"unknown target {target.name!r}; targets: {', '.join(NAMES)}")
    if target.threads < 1:
        raise ValueError(f"threads must be >= 1, got {target.threads}")
    return Pipeline(target.name, cpu_openmp(target) if target.name == "cpu-openmp" else cpu(target))


def resolve_target(target: str | Target | None, threads: int | None = None, machine: Machine | None = None) -> Target:
    """The Target a kernel compiles for: a pipeline name on this machine (`Target.host()`), a GPU target
    ("rocdl:<gfx chip>", "nvvm:<sm name>": gpu/targets.py), or a Target;
    `threads` (cpu-openmp only; default the Target's, else `default_threads()`) and `machine` replace its own;
    the default Machine is scaled to the target's threads (`Machine.for_threads`), a Machine set is kept.
    None: "cpu-openmp" when this process may use more than one core, else "cpu"."""
    if threads is not None and (not isinstance(threads, int) or isinstance(threads, bool) or threads < 1):
        raise ValueError(f"threads must be a positive int, got {threads!r}")
    if machine is not None and not isinstance(machine, Machine):
        raise ValueError(f"machine must be an egglog_tensor.Machine, got {type(machine).__name__}")
    if isinstance(target, str) and is_gpu_name(target) or isinstance(target, Target) and target.device is not None:
        return _gpu(target, threads, machine)
    if isinstance(target, Target):
        base, threads = target, threads or (target.threads if target.name == "cpu-openmp" else None)
    elif target is None or isinstance(target, str):
        base = Target.host()
    else:
        raise ValueError(f"target must be a pipeline name or an egglog_tensor.Target, got {type(target).__name__}")
    threads = threads or default_threads()
    name = base.name if isinstance(target, Target) else target or ("cpu-openmp" if threads > 1 else "cpu")
    if name not in NAMES:
        raise ValueError(f"unknown target {name!r}; targets: {', '.join(NAMES)}, rocdl:<gfx chip>, nvvm:<sm name>")
    threads = threads if name == "cpu-openmp" else 1
    default = base.machine == Machine()  # (the package's numbers, made for REFERENCE_THREADS: scaled to this target's)
    return replace(base, name=name, threads=threads, machine=machine or (base.machine.for_threads(threads) if default else base.machine))

def _gpu(target: str | Target, threads: int | None, machine: Machine | None) -> Target:
    """A GPU target ("rocdl:gfx942", "nvvm:sm_90", or its Target), `machine` replacing its own; it takes no `threads`."""
    if threads is not None:
        raise ValueError("threads is for the cpu-openmp target; a GPU target's threads are its launches' blocks and threads")
    base = gpu_target(target) if isinstance(target, str) else target
    return replace(base, machine=machine or base.machine)


# MLIR 22's memref-to-LLVM lowering asserts (aborting the process: the build has assertions on) on
# sub-byte element types, so i1 memrefs are refused before that pass runs; store booleans as i8.
_I1_MEMREF = re.compile(r"memref<(?:[0-9?]+x)*i1[,>]")


def _fail(pipeline: Pipeline, stage: Stage, ir_text: str, diagnostics: str, lines: Iterable[Line] = ()) -> CompileError:
    """Build the CompileError for a failed stage, saving the stage's input IR to a file; it names the
    user's source lines of the ops it failed on: `lines`, and those MLIR's diagnostics locate."""
    saved = save_failure_input(ir_text, f"{pipeline.name}-{stage.name}")
    return name_lines(CompileError(
        f"MLIR pipeline {pipeline.name!r} failed at stage {stage.name!r}\n"
        f"  passes: {stage.pipeline_text}\n"
        f"  input IR saved to: {saved}\n"
        f"  diagnostics:\n{diagnostics}"
    ), [*lines, *lines_in(diagnostics)])


def _lines_of(module: ir.Module, names: Iterable[str]) -> set[Line]:
    """The user's source lines of the ops of `module` named `names` (their MLIR locations)."""
    wanted, found = set(names), set()

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in wanted:
            found.update(lines_in(op.location))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


_OP_NAME = re.compile(r"^\s*(?:%[^=]+=\s*)?\"?([a-z_][a-z0-9_]*)\.([a-z_][a-z0-9_.]*)", re.MULTILINE)


def _unlowered_ops(ir_text: str) -> list[str]:
    """Ops mlir-translate cannot take (not llvm, builtin or omp) left in a lowered module (sorted, unique)."""
    return sorted({f"{d}.{o}" for d, o in _OP_NAME.findall(ir_text) if d not in ("llvm", "builtin", "omp")})


def run_pipeline(module_text: str, pipeline: Pipeline, printed: bool = True, translated: bool = False) -> Ran:
    """Run each stage of pipeline on module_text: the IR after each stage, and the stages' facts;
    with `translated` (a host pipeline's), also the last module's LLVM IR, translated in the child
    (translate.py; `Ran.llvm_ir` None when it did not translate: `lower_to_llvm_ir` says why).

    The stages run in the forked worker (egglog_tensor.forked.run_job): an MLIR assertion aborts that
    process only, and becomes a CompileError naming the stage it was in, with the stage's input IR saved.
    The facts cross the process boundary pickled, with the texts. With `printed=False` the module
    passes from stage to stage as an object and only the last stage's IR is printed (a compile does
    not pay for texts only `inspect` reads); a failure then runs the stages again printed, for the
    error's saved input IR."""
    texts: list[tuple[str, str | None]] = []
    facts: dict[str, Any] = {}
    started, llvm_ir = ["parse"], [None]  # the stage the child was in last; the LLVM IR it sent

    def sink(item: tuple[str, str, Any]) -> None:
        kind, name, value = item
        if kind == "start":
            started[0] = name
        elif kind == "text":
            texts.append((name, value))
        elif kind == "llvm-ir":
            llvm_ir[0] = value
        else:
            facts[name] = value

    try:
        run_job(functools.partial(_run_stages, module_text, pipeline, printed=printed, translated=translated and pipeline.host), sink)
    except (ChildDied, CompileError) as failed:
        if not printed:  # the stages are deterministic: a printed run fails the same way, with the IR to save
            run_pipeline(module_text, pipeline, printed=True, translated=translated)
            raise
        if isinstance(failed, CompileError):
            raise
        results = [(name, text) for name, text in texts if text is not None]
        stage = next((s for s in pipeline.stages if s.name == started[0]), Passes(started[0]))
        inputs = [text for name, text in results if not name.endswith("-script")] or [module_text]
        script = results[-1][1] if results and results[-1][0] == f"{stage.name}-script" else ""
        raise _fail(pipeline, stage, inputs[-1], f"the stage ended the process running it ({failed.how}):\n{failed.stderr}"
                    + (f"\n  transform script:\n{script}" if script else "")) from None
    return Ran(texts, facts, llvm_ir[0])


def _run_stages(module_text: str, pipeline: Pipeline, send: Callable[[tuple[str, str, Any]], None], printed: bool,
                translated: bool = False) -> None:
    """Run the stages in this process: send ("start", stage name, None) as each starts, ("text", stage
    name, IR after it) as it ends, ("text", "<stage>-script", script) for a transform script and
    ("facts", stage name, record) for what a stage decided; with `translated`, ("llvm-ir", "", the
    LLVM IR) last, unless the module did not translate. Unless `printed`, each text but the last
    stage's is None."""
    with ir.Context():
        send(("start", "parse", None))
        try:
            module = ir.Module.parse(module_text)
        except ir.MLIRError as exc:
            raise _fail(pipeline, Passes("parse"), module_text, str(exc)) from None
        current: str | None = module_text
        plan = None
        for stage in pipeline.stages:
            send(("start", stage.name, None))
            plan = pipeline.plan(stage, module, plan)
            after = run_stage(module, stage, pipeline, current,
                              on_script=lambda script, name=stage.name: send(("text", f"{name}-script", str(script) if printed else None)),
                              on_facts=lambda facts, name=stage.name: send(("facts", name, facts)), plan=plan)
            if after is not None:
                module, current = after, None
            if current is None and (printed or stage is pipeline.stages[-1]):
                current = module.operation.get_asm(enable_debug_info=stage.with_locations)
            send(("text", stage.name, current))
        assert current is not None
        left = _unlowered_ops(current) if pipeline.host else []
        if left:  # conversions are partial: a missing pass leaves ops that mlir-translate cannot take
            last = pipeline.stages[-1]
            raise _fail(pipeline, last, current, f"ops left after the last stage, not in the LLVM dialect: {', '.join(left)}",
                        _lines_of(module, left))
        if translated:
            send(("start", "mlir-to-llvmir", None))
            if (llvm_ir := translate(module)) is not None:
                send(("llvm-ir", "", llvm_ir))


def run_stage(module: ir.Module, stage: Stage, pipeline: Pipeline, current: str | None = None,
              on_script: Callable[[Any], None] | None = None, on_facts: Callable[[Any], None] | None = None,
              plan: Plan | None = None) -> ir.Module | None:
    """Apply one stage to `module` (in the active MLIR context), in place: build its transform script
    (a planned stage's from the run's `plan`, made here when not given) and apply it, run its passes, apply its rewrite. Return the module after it, or None when its
    script builder has nothing to do (the IR is unchanged).
    `on_script` receives the script before it runs, `on_facts` the stage's facts (its rewrite's
    record, else its script's) when it has any; `current` is the module's text when printed, saved
    with the CompileError naming the stage when it fails (None: printed then)."""
    lowers_memrefs = any(p.startswith("finalize-memref-to-llvm") for p in stage.passes)
    if lowers_memrefs and current is None:
        current = str(module)
    if lowers_memrefs and _I1_MEMREF.search(current):
        raise _fail(pipeline, stage, current, "memrefs of i1 cannot be lowered to LLVM; use i8 (0/1) in memory")
    script, facts = None, None
    if stage.scripted:
        script = stage.script_for(module, pipeline.plan(stage, module, plan))
        if script is None:  # nothing to transform: the stage keeps its place, IR unchanged
            return None
        if on_script is not None:
            on_script(script)
        facts = stage.decided(script)
    try:
        if script is not None:
            scripts.apply(module, script)
        manager = passmanager.PassManager.parse(stage.pipeline_text)
        manager.run(module.operation)
        rewritten = stage.rewrite(module)
    except (ir.MLIRError, ValueError) as exc:  # ValueError: the pass pipeline text does not parse
        raise _fail(pipeline, stage, current if current is not None else "(not printed)", str(exc) + (f"\n  transform script:\n{script}" if script is not None else "")) from None
    facts = facts if rewritten is None else rewritten
    if facts is not None and on_facts is not None:
        on_facts(facts)
    return module


def lower_to_llvm_ir(llvm_dialect_text: str) -> str:
    """Translate LLVM-dialect MLIR to LLVM IR text with mlir-translate: a compile translates in its
    pipeline's child (`run_pipeline(translated=True)`); this tool says why a module does not translate."""
    return run_tool("mlir-translate", ["--mlir-to-llvmir"], llvm_dialect_text, stage="mlir-to-llvmir")
