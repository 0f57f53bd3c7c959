"""The staged API: `f.trace(x).optimize().lower().compile()`, one object per stage.

In the spirit of JAX's `jax.jit(f).trace(x).lower().compile()`:

    traced = f.trace(x)            # Traced: the Node DAG (`outputs`) and its egglog term (`term`)
    optimized = traced.optimize()  # Optimized: the extracted Nodes (`outputs`) and the `report`
    lowered = optimized.lower()    # Lowered: linalg MLIR (`module_text`), each MLIR stage, LLVM IR, `facts`
    compiled = lowered.compile()   # Compiled: the loaded module and native function; call it

Each stage object is a frozen dataclass: advancing it again (`traced.optimize()` twice) redoes that
stage and gives an equal object, and never changes it. `as_text()` is its main text, `as_text(name)`
the text of any stage reached so far, `stages` their names in order (the names of
`Compilation.stages`, docs/architecture.md).

These functions are the only implementation of each stage: `compile_kernel` (compiler.py), which
`f(x)` and `f.inspect(x)` use, is `trace` -> on-disk cache lookup -> `optimize` -> `lower` ->
`compile` -> cache store. The staged API itself does not use the on-disk cache (egglog_tensor/cache.py):
`.compile()` always optimizes and lowers, and stores nothing; its Compilation says `cache: disabled`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .compiler import Compilation, Options, _native, _timed, workspace
from .cost import TensorCostModel
from .errors import EgglogTensorError
from .graph import Node
from .ir import Program, to_term
from .lowering.emit import emit
from .lowering.gpu.codegen import build as device_code
from .lowering.llvm import LoadedModule, load_llvm_ir
from .lowering.pipelines import lower_to_llvm_ir, pipeline_for, run_pipeline
from .lowering.policy import lowering_target
from .optimize import OptimizeReport, egglog_text, optimize as _run_optimizer
from .provenance import builders, defined, located
from .sourcelines import listing
from .termtext import extracted_text, program_text
from .runtime import NativeFunction
from .spec import ArgSpec, signature, spec_of
from .target import Target
from .texts import StageTexts
from .tracing import Guard, function_name, narrowed_int_args, trace_function

Timings = tuple[tuple[str, float], ...]

STAGED_CACHE_NOTE = "not used by the staged API"


class _Stage:
    """What every stage object shows: its stages' texts, by name."""

    def _texts(self) -> Mapping[str, str]:
        raise NotImplementedError

    def _main_text(self) -> str:
        raise NotImplementedError

    def _traced(self) -> Traced:
        raise NotImplementedError

    def _once(self, key: str, make: Callable[[], Any]) -> Any:
        """make() when `key` is first asked for, the same value after (kept in the stage's `_memo`)."""
        memo: dict[str, Any] = self._memo  # type: ignore[attr-defined]
        if key not in memo:
            memo[key] = make()
        return memo[key]

    @property
    def stages(self) -> list[str]:
        """The names of the stages reached so far, in order."""
        return list(self._texts())

    def as_text(self, stage: str | None = None) -> str:
        """This stage's main text, or the text of the stage named `stage` (any reached so far)."""
        if stage is None:
            return self._main_text()
        texts = self._texts()
        if stage not in texts:
            raise KeyError(f"no stage {stage!r}; stages are: {', '.join(texts)}")
        return texts[stage]

    def __repr__(self) -> str:
        t = self._traced()
        guarded = f"; guards: {'; '.join(map(str, t.guards))}" if t.guards else ""
        return (f"<{type(self).__name__} {function_name(t.fn)}({signature(t.names, t.specs)}), target {t.options.target.label}; "
                f"stages: {', '.join(self.stages)}{guarded}>")

    @property
    def guards(self) -> tuple[Guard, ...]:
        """The data values tracing took as Python values for the traced call's arguments (guards.py)."""
        return self._traced().guards


@dataclass(frozen=True, repr=False)
class Traced(_Stage):
    """The traced program for one signature: `outputs` (Node DAG) and `term` (its egglog Program)."""

    fn: Callable[..., Any]
    names: tuple[str, ...]
    specs: tuple[ArgSpec, ...]
    options: Options
    returns_tuple: bool
    narrowed_ints: tuple[tuple[int, str], ...]
    # Tracing is deterministic: the same function, signature and options give the same program.
    outputs: tuple[Node, ...] = field(compare=False)
    timings: Timings = field(default=(), compare=False)
    kernel: Any = field(default=None, compare=False)  # the Kernel that traced it: binds a call's arguments
    checks: tuple[tuple[type[EgglogTensorError], str], ...] = ()  # (error, message) of the run-time checks: the last len(checks) outputs (tracing/indexing.py)
    captured: tuple[np.ndarray, ...] = field(default=(), compare=False)  # the hidden arguments' arrays, after `names`' own
    written: tuple[str, ...] = ()  # arguments written into: their final values are the outputs before the checks
    guards: tuple[Guard, ...] = field(default=(), compare=False)  # data values tracing took as Python values (guards.py)
    locations: Mapping[Node, tuple[str, int]] = field(default_factory=dict, compare=False)  # the user's line that made each node
    _memo: dict[str, Any] = field(default_factory=dict, compare=False)  # term and its text, made once (shared by replace())

    @property
    def term(self) -> Program:
        """The egglog term of the traced program (a DAG: a value used twice is one e-class)."""
        return self._once("term", lambda: to_term(list(self.outputs), {}))

    @property
    def traced_term(self) -> str:
        """The term's text: the `traced` stage (and the on-disk cache's key)."""
        return self._once("text", lambda: program_text(list(self.outputs), lambda: self.term, egglog_text))

    def _texts(self) -> StageTexts:
        # the term's text when first read: egglog's printer formats it (black: tens of milliseconds)
        return StageTexts([("traced", None)], {"traced": lambda: {"traced": self.traced_term}})

    def _main_text(self) -> str:
        return self.traced_term

    def _traced(self) -> Traced:
        return self

    def draw_egraph(self, limit: int = 60) -> Any:
        """The e-graph after rewriting this program, one box per e-class listing its e-nodes (SVG, draw.py)."""
        from .draw import rewritten_egraph

        return rewritten_egraph(self, limit)

    def optimize(self, alternatives: int = 0) -> Optimized:
        """Run the optimizer (the options' schedule and limits) and extract the cheapest program; with
        `alternatives`, up to that many next-cheapest distinct programs too (`Optimized.alternatives`)."""
        return optimize(self, alternatives)


@dataclass(frozen=True, repr=False, eq=False)
class Optimized(_Stage):
    """The optimizer's result: `report` (an OptimizeReport) and the extracted program, `outputs` (Nodes);
    equal to another of the same traced program that extracted the same term."""

    traced: Traced
    outputs: tuple[Node, ...]
    report: OptimizeReport  # (its times differ from run to run)
    timings: Timings = ()
    _memo: dict[str, Any] = field(default_factory=dict)  # the term and its text, made when first read

    @property
    def term(self) -> Program:
        """The egglog term of the extracted program."""
        return self._once("term", lambda: to_term(list(self.outputs)))

    @property
    def extracted_term(self) -> str:
        """The extracted term's text: the `extracted` stage (egglog's printer: made when first read)."""
        return self._once("text", lambda: extracted_text(list(self.outputs), lambda: self.term, egglog_text))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Optimized) and self.traced == other.traced and self.extracted_term == other.extracted_term

    def __hash__(self) -> int:
        return hash(self.traced)

    def _texts(self) -> StageTexts:
        # the report's text when first read: it formats each matched rule (black: milliseconds each)
        return self.traced._texts().plus([("optimizer", None), ("extracted", None)],
                                         {**report_remake(self.report), "extracted": lambda: {"extracted": self.extracted_term}})

    def _main_text(self) -> str:
        return f"{self.report}\nextracted term:\n{self.extracted_term}"

    def _traced(self) -> Traced:
        return self.traced

    def lower(self) -> Lowered:
        """Emit linalg MLIR, run the target's MLIR pipeline stage by stage, translate to LLVM IR."""
        return lower(self)

    @property
    def alternatives(self) -> tuple[Optimized, ...]:
        """The next-cheapest distinct programs the optimizer was asked for (`Traced.optimize(alternatives=k)`),
        cheapest first, each as this stage with its program and estimate: lower and compile them like this one."""
        return tuple(replace(self, outputs=nodes, report=replace(self.report, cost_after=cost, alternatives=()), _memo={})
                     for cost, nodes in self.report.alternatives)


@dataclass(frozen=True, repr=False)
class Lowered(_Stage):
    """The lowered program: linalg MLIR (`module_text`), the MLIR after each pipeline stage (made when
    first read: a compile does not print them), LLVM IR, and what each stage decided (`facts`)."""

    optimized: Optimized
    texts: tuple[tuple[str, str | None], ...]  # ("linalg", ...), (each MLIR stage, None: not printed), ("llvm-ir", ...)
    facts: tuple[tuple[str, Any], ...]  # (stage name, what it decided: lowering/stages/)
    timings: Timings = field(default=(), compare=False)
    _memo: dict[str, Any] = field(default_factory=dict, compare=False)  # the texts, once made

    @property
    def workspace(self) -> tuple[tuple[tuple[int, ...], np.dtype], ...]:
        """The temporaries each call lends the kernel (the bufferize stage's Workspace)."""
        return workspace(dict(self.facts))

    @property
    def module_text(self) -> str:
        """The emitted linalg MLIR module."""
        return self._texts()["linalg"]

    @property
    def llvm_ir(self) -> str:
        """The LLVM IR from mlir-translate."""
        return self._texts()["llvm-ir"]

    def _texts(self) -> StageTexts:
        target = lowering_target(self.optimized.traced.options.target, self.optimized.report.cost_after)
        return self._once("texts", lambda: self.optimized._texts().plus(self.texts, mlir_remakes(self.texts, target)))

    def _main_text(self) -> str:
        return self.module_text

    def _traced(self) -> Traced:
        return self.optimized.traced

    def compile(self) -> Compiled:
        """Optimize the LLVM IR for the host CPU, generate code and load it: a callable Compiled."""
        return compile(self)


@dataclass(frozen=True, repr=False)
class Compiled(_Stage):
    """The loaded kernel: call it like the kernel (same argument checks; only the traced signature).

    `compilation` is the Compilation of every stage (`stage(name)`, `stages`, `print()`, notebook HTML)."""

    lowered: Lowered
    compilation: Compilation = field(compare=False)

    @property
    def module(self) -> LoadedModule:
        """The JIT-loaded LLVM module (optimized IR, assembly, object code)."""
        assert self.compilation.module is not None
        return self.compilation.module

    @property
    def native(self) -> NativeFunction:
        """The native function: inputs, then outputs and workspace buffers."""
        assert self.compilation.native is not None
        return self.compilation.native

    @property
    def report(self) -> OptimizeReport:
        return self.compilation.report

    def stage(self, name: str) -> str:
        """The text of one stage, as Compilation.stage."""
        return self.compilation.stage(name)

    def summary(self) -> str:
        return self.compilation.summary()

    def _texts(self) -> Mapping[str, str]:
        return self.compilation.texts

    def _main_text(self) -> str:
        return self.compilation.texts["asm"]

    def _traced(self) -> Traced:
        return self.lowered.optimized.traced

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run the kernel; KernelArgumentError unless the arguments have the traced signature."""
        from .kernel import Kernel

        traced = self._traced()
        kernel = traced.kernel or Kernel(traced.fn, traced.options)
        return kernel.call_compilation(self.compilation, args, kwargs)

    def __repr__(self) -> str:
        return self.compilation.summary()

    def _repr_html_(self) -> str:
        return self.compilation._repr_html_()


def trace(fn: Callable[..., Any], names: Sequence[str], specs: Sequence[ArgSpec], options: Options, kernel: Any = None) -> Traced:
    """Trace `fn` on tracers for `specs`: the first stage."""
    pipeline_for(options.target)  # (ValueError for a target with no pipeline, before tracing)
    timings: dict[str, float] = {}
    captured: list[tuple[str, np.ndarray]] = []
    checks: list[tuple[type[EgglogTensorError], str]] = []
    written: list[str] = []
    locations: dict[Node, tuple[str, int]] = {}
    guards: list[Guard] = []
    outputs, returns_tuple = _timed(timings, "trace", lambda: trace_function(fn, names, specs, captured, checks, written, locations, guards))
    narrowed = narrowed_int_args(outputs, specs, names)
    names = (*names, *(n for n, _ in captured))  # large captured arrays: hidden arguments, passed by each call
    specs = (*specs, *(spec_of(a, n) for n, a in captured))
    return Traced(fn, tuple(names), tuple(specs), options, returns_tuple, narrowed, tuple(outputs), tuple(timings.items()), kernel,
                  captured=tuple(a for _, a in captured), checks=tuple(checks), written=tuple(written), guards=tuple(guards), locations=locations)


def optimize(traced: Traced, alternatives: int = 0) -> Optimized:
    """Rewrite the traced term with the options' schedule under their limits; extract the cheapest
    (and `alternatives` next-cheapest distinct programs, in the report)."""
    options = traced.options
    timings = dict(traced.timings)
    cost_model = TensorCostModel(options.target)
    nodes, report = _timed(
        timings, "optimize", lambda: _run_optimizer(list(traced.outputs), options.schedule(), options.limits, cost_model,
                                                    options.baseline(), alternatives)
    )
    return Optimized(traced, tuple(nodes), report, tuple(timings.items()))


def lower(optimized: Optimized) -> Lowered:
    """Emit linalg MLIR, run the target's pipeline (the module passed from stage to stage unprinted)
    and translate its result to LLVM IR in the same child process; for `lowering_target` (one thread for
    a small cpu-openmp program)."""
    traced, nodes = optimized.traced, list(optimized.outputs)
    options = replace(traced.options, target=lowering_target(traced.options.target, optimized.report.cost_after))
    timings = dict(optimized.timings)
    where = located(traced.outputs, traced.locations, nodes, builders(optimized.report))
    with_lines: list[tuple[str, list[tuple[str, str]]]] = []
    linalg = _timed(timings, "emit", lambda: emit(nodes, traced.names, traced.specs, options.target, streaming=options.streaming,
                                                 fastmath=options.fastmath, locations=where, located=with_lines,
                                                 source=defined(traced.fn)))
    gpu = options.target.device is not None
    located_text, ops = with_lines[0]
    ran = _timed(timings, "mlir-opt", lambda: run_pipeline(located_text, pipeline_for(options.target), printed=False, translated=not gpu))
    provenance = ("provenance", listing(ops))
    if gpu:  # a GPU target: device module, LLVM IR, code, its checks (lowering/gpu/codegen.py)
        built, code = _timed(timings, "device", lambda: device_code(ran.final, options.target, ran.facts[options.target.name].bare))
        return Lowered(optimized, (("linalg", linalg), provenance, *ran.texts, *built), (*ran.facts.items(), ("device", code)), tuple(timings.items()))
    llvm_ir = ran.llvm_ir or lower_to_llvm_ir(ran.final)  # (translated in the pipeline's child: the tool says why not)
    texts = (("linalg", linalg), provenance, *ran.texts, ("llvm-ir", llvm_ir))
    return Lowered(optimized, texts, tuple(ran.facts.items()), tuple(timings.items()))


def report_remake(report: OptimizeReport) -> dict[str, Callable[[], Mapping[str, str]]]:
    """How to make the "optimizer" stage's text (the report's) when first read."""
    return {"optimizer": lambda: {"optimizer": str(report)}}


def mlir_remakes(texts: Sequence[tuple[str, str | None]], target: Target) -> dict[str, Callable[[], Mapping[str, str]]]:
    """How to make the MLIR stage texts a compile did not print: one printed run of `target`'s pipeline
    on the linalg text (the stages are deterministic), shared by every unprinted stage."""
    linalg = dict(texts)["linalg"]
    made: dict[str, str] = {}

    def remake() -> Mapping[str, str]:
        if not made:
            made.update((name, text) for name, text in run_pipeline(linalg, pipeline_for(target)).texts if text is not None)
        return made

    return {name: remake for name, text in texts if text is None}


def compile(lowered: Lowered) -> Compiled:  # noqa: A001 (the stage's name)
    """Optimize and JIT-load the LLVM IR; the Compilation of every stage, with its native function."""
    optimized = lowered.optimized
    traced = optimized.traced
    timings = dict(lowered.timings)
    gpu = traced.options.target.device is not None  # nothing to load: its code is for a device (calling it raises DeviceError)
    module = None if gpu else _timed(timings, "llvm", lambda: load_llvm_ir(lowered.llvm_ir, traced.options.target))
    comp = Compilation(
        name=function_name(traced.fn),
        arg_names=traced.names,
        specs=traced.specs,
        options=traced.options,
        returns_tuple=traced.returns_tuple,
        outputs=list(optimized.outputs),
        report=optimized.report,
        texts=lowered._texts() if module is None else
        lowered._texts().plus((("llvm-ir-optimized", module.optimized_ir), ("asm", None)), {"asm": lambda: {"asm": module.asm}}),
        facts=dict(lowered.facts) if module is None else {**dict(lowered.facts), "streams": module.streamed},
        timings=timings,
        module=module,
        cache="disabled",
        cache_note=STAGED_CACHE_NOTE,
        narrowed_ints=traced.narrowed_ints,
        checks=traced.checks,
        written=traced.written,
        guards=traced.guards,
        static=getattr(traced.fn, "static", ()),
        captured=traced.captured,
    )
    if module is not None:
        comp.native = _native(module, traced.specs, optimized.outputs, lowered.workspace)
    return Compiled(lowered, comp)
