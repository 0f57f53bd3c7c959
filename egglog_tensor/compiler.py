"""The compiler driver: trace -> optimize -> emit -> lower -> translate -> load, keeping every stage.

A `Compilation` is the staged object users inspect: `comp.stages` names the stages in order and
`comp.stage(name)` returns each one's text, from the traced term to the assembly. `compile_kernel`
composes the stages of egglog_tensor/stages.py (the staged API, `f.trace(x).optimize().lower().compile()`)
with the on-disk cache.
"""

from __future__ import annotations

import difflib
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from egglog import Ruleset, Schedule

from . import cache
from .errors import EgglogTensorError
from .graph import Node
from .lowering.llvm import LoadedModule
from .lowering.policy import lowering_target
from .measure import Timing
from .optimize import Limits, OptimizeReport
from .runtime import ArgType, NativeFunction
from .spec import ArgSpec, signature
from .target import Target
from .texts import StageTexts
from .tracing import Guard, function_name

if TYPE_CHECKING:
    from .gpu.launch import GpuFunction


@dataclass(frozen=True)
class Options:
    """Compilation options; part of the specialization key."""

    rules: Ruleset | Schedule | None
    fastmath: frozenset[str]  # the LLVM fast-math flags allowed (fastmath.py); True/False/flags given are normalized
    target: Target  # the machine, its pipeline and threads (compiled in), the cost model's numbers
    limits: Limits
    cache: bool = True  # use the on-disk compilation cache (egglog_tensor/cache.py); not part of its key
    streaming: bool = True  # non-temporal stores for outputs larger than L3 (lowering/nontemporal.py)
    autotune: bool = False  # time candidates at a signature's first call and keep the fastest (autotune.py)

    def __post_init__(self) -> None:
        from .fastmath import fastmath_flags

        object.__setattr__(self, "fastmath", fastmath_flags(self.fastmath))

    def baseline(self) -> tuple[Ruleset | Schedule | None, ...]:
        """What the optimizer runs and extracts first, on the same e-graph, when fast math adds rules:
        the exact schedule, whose program the fast-math extraction must beat (optimize.optimize)."""
        from . import rulesets

        return (self.rules,) if rulesets.fastmath_rules(self.fastmath) is not None else ()

    def schedule(self) -> Ruleset | Schedule | None:
        """The schedule to run: the exact rules plus the fast-math groups the flags allow."""
        from . import rulesets

        rules = self.rules
        fast = rulesets.fastmath_rules(self.fastmath)
        if fast is None:
            return rules
        if rules is None:
            return fast
        if isinstance(rules, Ruleset):
            return rules | fast
        return rules + fast


@dataclass
class Compilation:
    """Every stage of compiling one kernel for one argument signature, plus the loaded function."""

    name: str
    arg_names: tuple[str, ...]
    specs: tuple[ArgSpec, ...]
    options: Options
    returns_tuple: bool
    outputs: list[Node]
    report: OptimizeReport
    texts: StageTexts = field(default_factory=lambda: StageTexts(()))  # by stage name; made when first read (texts.py)
    facts: dict[str, Any] = field(default_factory=dict)  # what each stage decided, by stage name (lowering/stages/)
    timings: dict[str, float] = field(default_factory=dict)
    native: NativeFunction | GpuFunction | None = field(default=None, repr=False)  # (a GPU's: made on its first call)
    module: LoadedModule | None = field(default=None, repr=False)
    cache: str = "disabled"  # on-disk cache: "hit", "miss-stored", "disabled" or "unwritable"
    cache_note: str = ""  # the entry's path, or why it was not used / not stored
    narrowed_ints: tuple[tuple[int, str], ...] = ()  # (index, int dtype) of Python-int arguments cast narrower: a call checks their range
    checks: tuple[tuple[type[EgglogTensorError], str], ...] = ()  # (error, message) of the run-time checks: the last len(checks) outputs, 0-d bools (true: raise)
    written: tuple[str, ...] = ()  # arguments written into: their final values, the outputs before the checks, copied back by a call
    static: tuple[tuple[str, Any], ...] = ()  # (name, value) of each static argument, compiled in (kernel.py)
    captured: tuple[np.ndarray, ...] = field(default=(), repr=False, compare=False)  # hidden arguments: large captured arrays
    timing: Timing | None = None  # estimated beside measured time per call, once `Kernel.measure` ran
    tuned: Any = None  # the candidates `Kernel.autotune` timed (autotune.Tuned), on the compilation it chose
    guards: tuple[Guard, ...] = ()  # data values tracing took as Python values: each call checks them first (guards.py)
    guard_program: Compilation | None = field(default=None, repr=False, compare=False)  # computes the guards (host CPU), made once
    tree: Any = None  # a result that is a dict, list or nested tuple: its structure (pytree.py; set by Kernel), the outputs its leaves

    @property
    def traced_term(self) -> str:
        """The traced program's text (the "traced" stage; egglog's printer formats it: made when first read)."""
        return self.texts["traced"]

    @property
    def extracted_term(self) -> str:
        """The extracted program's text (the "extracted" stage; made when first read)."""
        return self.texts["extracted"]

    @property
    def workspace(self) -> tuple[tuple[tuple[int, ...], np.dtype], ...]:
        """The temporaries each call lends the kernel (the bufferize stage's Workspace)."""
        return workspace(self.facts)

    @property
    def stages(self) -> list[str]:
        """Stage names in compilation order."""
        return list(self.texts)

    def stage(self, name: str) -> str:
        """The text of one stage (term, report, MLIR, LLVM IR or assembly)."""
        if name not in self.texts:
            raise KeyError(f"no stage {name!r}; stages are: {', '.join(self.texts)}")
        return self.texts[name]

    def summary(self) -> str:
        sig = signature(self.arg_names, self.specs, self.static)
        outs = ", ".join(f"{o.dtype}[{','.join(map(str, o.shape))}]" for o in self.outputs)
        work = ", ".join(f"{dtype}[{','.join(map(str, shape))}]" for shape, dtype in self.workspace)
        lines = [
            f"kernel {self.name}({sig}) -> {outs}",
            f"target {self.options.target.label}, fastmath={self.options.fastmath}",
            str(self.report),
            *([str(self.timing)] if self.timing else []),
            *([str(self.tuned)] if self.tuned else []),
            f"cache: {self.cache}" + (f" ({self.cache_note})" if self.cache_note else ""),
            *([f"workspace (lent by each call): {work}"] if work else []),
            *([f"guards (checked before each call runs; another value traces again): {len(self.guards)}",
               *(f"  {g}" for g in self.guards)] if self.guards else []),
            *([f"writes into argument(s) {', '.join(self.written)}: the outputs after the result, copied back by each call"]
              if self.written else []),
            *([f"streaming stores: {streamed.stores} non-temporal vector stores (outputs larger than L3, when 64-byte aligned)"]
              if (streamed := self.facts.get("streams")) and streamed.stores else []),
            *([f"flattened: {flat.ops} elementwise op(s) over contiguous buffers, each one loop"]
              if (flat := self.facts.get("flatten")) and flat.ops else []),
            *([f"transposed copies: {blocked.ops} elementwise op(s) reading or writing across rows, in square blocks "
               f"({blocked.vectorized} of them transposing vector tiles in registers)"]
              if (blocked := self.facts.get("transposes")) and blocked.ops else []),
            *([f"interleave counts asked of LLVM's vectorizer: {', '.join(map(str, interleaved.counts))}"]
              if (interleaved := self.facts.get("interleave")) and interleaved.counts else []),
            *([f"GPU kernels ({self.options.target.label}): {'; '.join(map(str, device.kernels))}"]
              if (device := self.facts.get("device")) else []),
            ("stages (loaded from cache): " if self.cache == cache.HIT else "stages: ") + ", ".join(self.stages),
            "compile time: " + ", ".join(f"{k} {v * 1e3:.0f} ms" for k, v in self.timings.items()),
            "extracted term:",
            _indent(self.extracted_term),
        ]
        return "\n".join(lines)

    def diff(self, stage: str, to: str | None = None, other: Compilation | None = None) -> str:
        """A unified diff of `stage` against stage `to` of this compilation, or against the same stage (or `to`)
        of `other` (another schedule, target or option): what a pass or a choice changed."""
        theirs = other or self
        b = to or stage
        return "".join(difflib.unified_diff(self.stage(stage).splitlines(keepends=True), theirs.stage(b).splitlines(keepends=True),
                                            f"{self.name}: {stage}", f"{theirs.name}: {b}" + (" (other)" if other else "")))

    def draw(self) -> Any:
        """The extracted program as a DAG picture (SVG; shown in notebooks), each kernel with its estimated time (draw.py)."""
        from .draw import program

        return program(self)

    def explain(self) -> str:
        """What the optimizer and the lowering decided and why, in plain sentences (explain.py)."""
        from .explain import explain

        return explain(self)

    def __repr__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        """The notebook display: costs, rules fired, the program drawn, then each stage (display.py)."""
        from .display import html

        return html(self)


def workspace(facts: dict[str, Any]) -> tuple[tuple[tuple[int, ...], np.dtype], ...]:
    """(shape, dtype) of each temporary a call lends the kernel, from the bufferize stage's facts."""
    lent = facts.get("bufferize")
    return lent.arrays() if lent is not None else ()


def debug_level() -> int:
    """EGGLOG_TENSOR_DEBUG: 1 prints each compilation's summary, 2 adds the linalg MLIR, 3 every stage."""
    try:
        return int(os.environ.get("EGGLOG_TENSOR_DEBUG", "0"))
    except ValueError:
        return 0


def _debug_print(comp: Compilation, level: int) -> None:
    shown = {1: [], 2: ["linalg"]}.get(level, comp.stages)
    print(comp.summary(), file=sys.stderr)
    for name in shown:
        print(f"--- {name} ---\n{comp.stage(name)}", file=sys.stderr)


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


def _timed(timings: dict[str, float], name: str, fn: Callable[[], Any]) -> Any:
    start = time.perf_counter()
    result = fn()
    timings[name] = time.perf_counter() - start
    return result


def compile_kernel(fn: Callable[..., Any], names: Sequence[str], specs: Sequence[ArgSpec], options: Options) -> Compilation:
    """Compile `fn` for one signature through every stage and load it.

    The stages of the staged API (egglog_tensor/stages.py), composed with the on-disk cache:
    trace -> cache lookup -> optimize -> lower -> compile -> cache store. A hit skips the rest."""
    from . import stages

    return compile_traced(stages.trace(fn, names, specs, options))


def compile_traced(traced: Any) -> Compilation:
    """Compile a traced program (stages.Traced: a kernel's, or a guard's sub-program) through the on-disk cache and load it."""
    names, specs, options = traced.names, traced.specs, traced.options
    timings = dict(traced.timings)
    # The on-disk cache is keyed on the traced term (+ schedule text, options, versions, CPU): a hit skips the rest.
    lookup = _timed(timings, "cache-lookup", lambda: cache.lookup(lambda: traced.traced_term, names, specs, options, traced.written,
                                                                         traced.returns_tuple))
    traced = replace(traced, timings=tuple(timings.items()))
    if lookup.entry is not None:
        return _from_cache(traced, lookup, timings)
    optimized = traced.optimize()
    comp = optimized.lower().compile().compilation
    object_code = b"" if comp.module is None else comp.module.object_code  # (a GPU target's device code is in its facts)
    if lookup.storing and not optimized.report.fallback and optimized.report.stop_reason != "interrupted":
        comp.cache, comp.cache_note = _timed(comp.timings, "cache-store", lambda: lookup.store(comp, object_code))
    elif optimized.report.fallback:  # a later run must optimize (and warn) again, not load the unoptimized code silently
        comp.cache, comp.cache_note = "disabled", "not stored: the optimizer's extraction failed"
    elif optimized.report.stop_reason == "interrupted":  # (a later run optimizes in full)
        comp.cache, comp.cache_note = "disabled", "not stored: the optimizer was interrupted"
    else:
        comp.cache, comp.cache_note = lookup.status, lookup.note
    if level := debug_level():
        _debug_print(comp, level)
    return comp


def _native(module: LoadedModule, specs: Sequence[ArgSpec], outputs: Sequence[Node],
            work: Sequence[tuple[tuple[int, ...], np.dtype]]) -> NativeFunction:
    """The callable kernel: inputs as compiled (C layout: contiguous), then the outputs and the
    workspace buffers, C-contiguous."""
    # bool buffers are 0/1 bytes, declared i8 in MLIR: the same memory as NumPy's bool arrays.
    arg_types = [ArgType(s.dtype, s.shape, contiguous=s.layout == "C") for s in specs]
    arg_types += [ArgType(o.dtype, o.shape, contiguous=True, writable=True) for o in outputs]
    arg_types += [ArgType(dtype, shape, contiguous=True, writable=True) for shape, dtype in work]
    return NativeFunction(module.address(cache.SYMBOL), arg_types, owner=module)


def _from_cache(traced: Any, lookup: cache.Lookup, timings: dict[str, float]) -> Compilation:
    """The Compilation of a cache hit (`traced`: the Traced of stages.py): the stored stage texts and
    report, the loaded object (none for a GPU target: its launcher is made on the first call)."""
    from . import stages

    fn, names, specs, options, narrowed = traced.fn, traced.names, traced.specs, traced.options, traced.narrowed_ints
    entry = lookup.entry
    assert entry is not None
    comp = Compilation(
        name=function_name(fn),
        arg_names=tuple(names),
        specs=tuple(specs),
        options=options,
        returns_tuple=entry.returns_tuple,
        outputs=entry.outputs,
        report=entry.report,
        texts=StageTexts(entry.texts.items(), {**stages.mlir_remakes(list(entry.texts.items()),
                                                                     lowering_target(options.target, entry.report.cost_after)),
                                               **stages.report_remake(entry.report),
                                               **({} if entry.module is None else {"asm": lambda: {"asm": entry.module.asm}})}),
        facts=dict(entry.facts),
        timings=timings,
        module=entry.module,
        cache=cache.HIT,
        cache_note=lookup.note,
        narrowed_ints=narrowed,
        checks=traced.checks,
        written=traced.written,
        guards=traced.guards,
        static=getattr(fn, "static", ()),
        captured=traced.captured,
    )
    if entry.module is not None:
        comp.native = _timed(timings, "native", lambda: _native(entry.module, specs, entry.outputs, comp.workspace))
    if level := debug_level():
        _debug_print(comp, level)
    return comp
