"""`@kernel`: compile a NumPy function per argument signature and call the native code.

The first call with a new signature (shapes, dtypes, layouts, options) compiles; later calls
reuse it. Every argument is checked before the native call.
"""

from __future__ import annotations

import functools
import inspect
import threading
import warnings
from collections.abc import Callable, Iterable
from typing import Any, overload

import numpy as np
from egglog import Ruleset, Schedule

from . import guards, pytree
from .compiler import Compilation, Options, compile_kernel
from .errors import (
    ConcreteValueError,
    KernelArgumentError,
    OutOfBoundsError,
    SpecializationWarning,
)
from .autotune import Tuned, autotune
from .measure import Timing, median_ns
from .optimize import Limits
from .outputs import POOL, allocator, check_out, direct
from .gpu.launch import device_array
from .graph import numpy_dtype
from .runtime import NDARRAY
from .spec import PYTHON_SCALARS, ArgSpec, signature, specs_of
from .stages import Lowered, Traced, trace
from .target import Machine, Target
from .tracing import function_name
from .tracing.core import EVALUATOR, ancestors

_UNSET: Any = object()
SPECIALIZATION_LIMIT = 8  # distinct values of an automatically static argument before a SpecializationWarning


class Kernel:
    """A compiled-on-demand NumPy function. Call it like the function; `inspect` shows every stage,
    `trace(*args)` starts the staged API (`.optimize().lower().compile()`, egglog_tensor/stages.py)."""

    def __init__(self, fn: Callable[..., Any], options: Options, static: frozenset[str] = frozenset()) -> None:
        if not callable(fn):
            raise TypeError(f"kernel expects a function, got {type(fn).__name__}")
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.name = function_name(fn)
        self.options = options
        self._signature = inspect.signature(fn)
        if isinstance(fn, np.ufunc):  # et.kernel(np.exp): its operands are the parameters (not out=, where=, casting=...)
            P = inspect.Parameter
            self._signature = inspect.Signature([P(f"x{i}" if fn.nin > 1 else "x", P.POSITIONAL_ONLY) for i in range(1, fn.nin + 1)])
        if isinstance(fn, functools.partial):  # its bound keyword arguments are constants of the program, not parameters
            self._signature = self._signature.replace(parameters=[p for p in self._signature.parameters.values() if p.name not in fn.keywords])
        self._cache: dict[tuple, list[Compilation]] = {}  # per signature, its specializations (more than one: by guards)
        self._lock = threading.Lock()
        params = self._signature.parameters.values()
        self._arity = -1 if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.KEYWORD_ONLY) for p in params) \
            else len(self._signature.parameters)
        self._fast: dict[tuple, Callable[[tuple, Any], Any]] = {}  # fast-path key -> the specialization's call
        # `out=` names the result buffer(s), unless the function has a parameter of that name.
        self._takes_out = "out" not in self._signature.parameters
        self._static = static
        self._auto: frozenset[str] = frozenset()  # Python-value arguments tracing needed the value of: static when given one
        self._seen: dict[str, set[Any]] = {}  # the values each of those was specialized on
        self._dispatches: dict[int, tuple[Compilation, _Dispatch]] = {}  # guard programs' and guarded specializations' call paths

    def _specialize(self, names: tuple[str, ...], values: list[Any], layout: Layout) -> tuple[Callable[..., Any], tuple[str, ...], list[Any]]:
        """The function to trace, taking the flat arguments (`layout` rebuilds the call; static arguments bound,
        as compile-time constants), and the runtime arguments' names and values."""
        fn = _Call(self.fn, layout)
        pairs = list(zip(names, values, strict=True))
        chosen = {n for n, v in pairs if n in self._static or _constant(v) or (n in self._auto and _literal(v))}
        if not chosen:
            return fn, names, values
        static = tuple((n, v if n in self._static else _hashable(v)) for n, v in pairs if n in chosen)
        self._count(dict(static), (chosen & self._auto) - self._static)
        for n, v in static:
            try:
                hash(v)
            except TypeError:
                raise KernelArgumentError(f"{self.name}(): static argument {n!r} must be hashable (an int, tuple, bool, str...), "
                                          f"got {type(v).__name__}") from None
        runtime = [(n, v) for n, v in pairs if n not in chosen]
        given = {n: v for n, v in pairs if n in chosen}
        return _Static(fn, names, static, given), tuple(n for n, _ in runtime), [v for _, v in runtime]

    def _count(self, static: dict[str, Any], auto: set[str]) -> None:
        """Note the values automatically static arguments take; SpecializationWarning when one passes the limit."""
        for n in auto:
            seen = self._seen.setdefault(n, set())
            seen.add(static[n])
            if len(seen) == SPECIALIZATION_LIMIT + 1:
                warnings.warn(f"{self.name}(): argument {n!r} has been specialized on {len(seen)} distinct values, one "
                              "compilation each, because tracing needs its value (a shape, slice bound, loop count or branch); "
                              f"pass static_argnames=({n!r},) to say that is intended (docs/calling.md#automatic-specialization)",
                              SpecializationWarning, stacklevel=5)

    def _traced(self, args: tuple, kwargs: dict, step: Callable[..., Any]) -> Any:
        """step(fn, names, values, specs) for a call's arguments, tracing again with the Python-value arguments
        (numbers, lists, tuples) static when tracing needed their values (ConcreteValueError)."""
        names, values, layout = self._bind(args, kwargs)
        while True:
            fn, runtime_names, runtime_values = self._specialize(names, values, layout)
            specs = specs_of(runtime_names, runtime_values)
            literal = frozenset(n for n, v in zip(runtime_names, runtime_values, strict=True) if _literal(v))
            concrete = guards.Concrete(fn, runtime_names, runtime_values, specs, self.options, literal, _run_once)
            token = EVALUATOR.set(concrete)  # data values tracing takes as Python values: computed for these arguments
            try:
                return step(fn, runtime_names, runtime_values, specs)
            except ConcreteValueError as e:
                python = {n for n, v in zip(names, values, strict=True) if _literal(v)}
                if not e.needs or not e.needs <= python - self._auto - self._static:
                    raise
                self._auto = self._auto | e.needs
            finally:
                EVALUATOR.reset(token)

    def _bind(self, args: tuple, kwargs: dict) -> tuple[tuple[str, ...], list[Any], Layout]:
        """The call's flat argument names and values in the signature's order (defaults applied, *args numbered,
        dicts/lists/tuples of arrays flattened into their leaves: pytree.py), and the layout that rebuilds the call."""
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as e:
            raise KernelArgumentError(f"{self.name}(): {e}") from None
        bound.apply_defaults()
        passed: list[tuple[str | None, str, Any]] = []  # (keyword or None: positional, name, value) of each argument fn gets
        for name, value in bound.arguments.items():
            kind = self._signature.parameters[name].kind
            if kind == inspect.Parameter.VAR_POSITIONAL:
                passed += [(None, f"{name}{i}", v) for i, v in enumerate(value)]
            elif kind == inspect.Parameter.VAR_KEYWORD:
                passed += [(k, k, v) for k, v in value.items()]
            else:
                passed.append((name if kind == inspect.Parameter.KEYWORD_ONLY else None, name, value))
        names: list[str] = []
        values: list[Any] = []
        layout = []
        for keyword, name, value in passed:
            tree, leaf_names, leaves = pytree.flatten(value, name)
            names += leaf_names
            values += leaves
            layout.append((keyword, tree))
        return tuple(names), values, tuple(layout)

    @staticmethod
    def _key(fn: Callable[..., Any], names: tuple[str, ...], specs: tuple[ArgSpec, ...]) -> tuple:
        """A specialization's key in `_cache` (options are fixed per Kernel)."""
        return names, specs, getattr(fn, "static", ()), _call_of(fn).layout

    def _compilation(self, fn: Callable[..., Any], names: tuple[str, ...], specs: tuple[ArgSpec, ...], values: list[Any]) -> Compilation:
        """The specialization for these arguments: the first of their signature's whose guards they hold, else a new one
        (traced again: a branch on a data value goes the other way), kept beside the others."""
        key = self._key(fn, names, specs)
        checked = self._cache.get(key, [])
        for comp in checked:
            if not guards.failed(comp, self.fn, values, self._run_program):
                return comp
        with self._lock:
            known = self._cache.get(key, [])
            for comp in known[len(checked) :]:  # made while this call waited
                if not guards.failed(comp, self.fn, values, self._run_program):
                    return comp
            comp = compile_kernel(fn, names, specs, self.options)
            comp.tree = _call_of(fn).tree
            if comp.guards:  # (now: a single guard's program was compiled while tracing)
                guards.checker(comp, self.fn)
            self._cache[key] = [*known, comp]
            if len(known) == SPECIALIZATION_LIMIT:
                warnings.warn(f"{self.name}(): {len(known) + 1} specializations of one signature, one compilation each, because "
                              "data values taken as Python values (branches, int()) differ between calls; each call checks "
                              f"them in turn (docs/calling.md#guards){_static_hint(comp)}", SpecializationWarning, stacklevel=4)
        return comp

    def inspect(self, *args: Any, **kwargs: Any) -> Compilation:
        """The compilation (all stages) for these arguments' signature, compiling if needed."""
        return self._traced(args, kwargs, lambda fn, names, values, specs: self._compilation(fn, names, specs, values))

    def measure(self, *args: Any, min_time: float = 0.2, **kwargs: Any) -> Timing:
        """Time calls on these arguments beside the cost model's estimate; the compilation keeps the
        result, so `inspect(...)` shows it. Each timed call is a real call: arguments the kernel
        writes into are written each time."""
        comp = self.inspect(*args, **kwargs)
        measured, batches = median_ns(lambda: self(*args, **kwargs), min_time)
        comp.timing = Timing(comp.report.cost_after, measured, batches)
        return comp.timing

    def autotune(self, *args: Any, k: int = 8, again: bool = False, **kwargs: Any) -> Tuned:
        """Compile up to k candidates for these arguments (the model's choice, neighbouring matmul tiles,
        no fusion choices), time them on the arguments and call the fastest from now on; the choice is
        recorded beside the cache and reused unless `again` (egglog_tensor/autotune.py)."""
        return autotune(self, args, kwargs, k, again)

    def use(self, comp: Compilation, args: tuple, kwargs: dict) -> None:
        """Call `comp` for the signature of these arguments (it must have been compiled for it)."""
        key = self._traced(args, kwargs, lambda fn, names, values, specs: self._key(fn, names, specs))
        if (comp.arg_names[:len(key[0])], comp.specs[:len(key[1])]) != key[:2]:
            raise KernelArgumentError(f"{self.name}(): a compilation for other arguments")
        with self._lock:
            self._cache[key] = [comp]
            self._fast.clear()

    def trace(self, *args: Any, **kwargs: Any) -> Traced:
        """Trace for these arguments' signature: the first stage of `f.trace(*args).optimize().lower().compile()`
        (egglog_tensor/stages.py; it does not use the on-disk cache, nor this kernel's specializations)."""
        return self._traced(args, kwargs, lambda fn, names, values, specs: trace(fn, names, specs, self.options, kernel=self))

    def lower(self, *args: Any, **kwargs: Any) -> Lowered:
        """Trace, optimize and lower for these arguments' signature without loading the code, so any
        target's stages can be read on any machine (`f.trace(*args).optimize().lower()`)."""
        return self.trace(*args, **kwargs).optimize().lower()

    def call_compilation(self, comp: Compilation, args: tuple, kwargs: dict) -> Any:
        """Run one compilation (a Compiled stage's) on arguments bound and checked as a call of the kernel:
        KernelArgumentError unless they have the signature it was compiled for."""
        kwargs = dict(kwargs)
        out = kwargs.pop("out", None) if kwargs and self._takes_out else None
        fn, names, values = self._specialize(*self._bind(args, kwargs))
        specs = specs_of(names, values)
        static, own = getattr(fn, "static", ()), len(comp.arg_names) - len(comp.captured)  # (hidden arguments last)
        if names != comp.arg_names[:own] or specs != comp.specs[:own] or static != comp.static:
            raise KernelArgumentError(f"{self.name}(): compiled for ({signature(comp.arg_names[:own], comp.specs[:own], comp.static)}), called with "
                                      f"({signature(names, specs, static)}); call the kernel to compile for any signature, or trace again")
        if wrong := guards.failed(comp, self.fn, values, self._run_program):
            raise KernelArgumentError(f"{self.name}(): compiled for arguments whose data values traced as Python values differ "
                                      f"from these: {'; '.join(wrong)}; call the kernel to compile for them, or trace again")
        return _run_checked(_Dispatch(comp, specs, self.name), values, specs, out)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run the kernel; `out=` (an array, or a tuple of one per result) receives the result instead
        of a new array, like NumPy's ufuncs: exact shape and dtype, any strides, may overlap inputs."""
        out = kwargs.pop("out", None) if kwargs and self._takes_out else None
        fast = not kwargs and len(args) == self._arity and not self._static and not self._auto  # (static values are not in the fast key)
        if fast:
            key = tuple(map(_fast_key, args))
            hit = self._fast.get(key)
            if hit is not None:
                result = hit(args, out)
                if result is not REFUSED:
                    return result
        comp, values, specs = self._traced(args, kwargs, lambda fn, names, values, specs: (self._compilation(fn, names, specs, values), values, specs))
        if self.options.autotune and comp.tuned is None:  # (a signature's first call: the fastest candidate from now on)
            self.autotune(*args, **kwargs)
            comp = self.inspect(*args, **kwargs)
        dispatch = self._dispatch(comp, specs) if comp.guards else _Dispatch(comp, specs, self.name)
        if fast and hit is None and not self._auto and len(values) == len(args) and all(k[-1] for k in key if isinstance(k, tuple)):
            self._fast[key] = self._guarded(comp, dispatch) if comp.guards else dispatch.call  # (a refused fast call keeps its entry)
        return _run_checked(dispatch, values, specs, out)

    def _dispatch(self, comp: Compilation, specs: tuple[ArgSpec, ...]) -> _Dispatch:
        """comp's call path, made once (a guard program's, a guarded specialization's: their calls also check guards)."""
        made = self._dispatches.get(id(comp))
        if made is None or made[0] is not comp:
            made = self._dispatches[id(comp)] = (comp, _Dispatch(comp, specs, self.name))
        return made[1]

    def _run_program(self, comp: Compilation, values: Any) -> Any:
        """Run a compilation on a call's values (a guard program: guards.Run)."""
        specs = _own(comp)
        return _run_checked(self._dispatch(comp, specs), values, specs, None)

    def _guarded(self, comp: Compilation, dispatch: _Dispatch) -> Callable[[tuple, Any], Any]:
        """The fast path of a specialization with guards: REFUSED (the checked path picks or traces another) when one fails."""
        fn, run, call = self.fn, self._run_program, dispatch.call
        return lambda args, out: REFUSED if guards.failed(comp, fn, args, run) else call(args, out)

    @property
    def compilations(self) -> list[Compilation]:
        """Every specialization compiled so far."""
        return [comp for family in self._cache.values() for comp in family]

    def __repr__(self) -> str:
        return f"<egglog_tensor kernel {self.name}, {len(self.compilations)} specialization(s), {self.options}>"


class _Static:
    """A kernel's function with its static arguments bound: traced with the runtime ones, in order."""

    def __init__(self, fn: Callable[..., Any], names: tuple[str, ...], static: tuple[tuple[str, Any], ...], given: dict[str, Any]) -> None:
        self.fn, self.names, self.static, self.given = fn, names, static, given  # static: the key (lists as tuples); given: as passed
        self.__name__ = function_name(fn)
        self.__wrapped__ = fn  # (provenance.defined: the user's def line)

    def __call__(self, *runtime: Any) -> Any:
        given, rest = self.given, iter(runtime)
        return self.fn(*(given[n] if n in given else next(rest) for n in self.names))


Layout = tuple[tuple[str | None, pytree.Tree], ...]  # per argument of the call: its keyword (None: positional), its structure


class _Call:
    """A kernel's function as traced: it takes the flat arguments and rebuilds the call (`layout`: keywords,
    dicts/lists/tuples), and returns a structured result flat, keeping its structure in `tree`."""

    def __init__(self, fn: Callable[..., Any], layout: Layout) -> None:
        self.fn, self.layout, self.tree = fn, layout, None
        self.__name__ = function_name(fn)
        self.__wrapped__ = fn  # (provenance.defined: the user's def line)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Call) and (self.fn, self.layout) == (other.fn, other.layout)

    def __hash__(self) -> int:
        return hash((self.fn, self.layout))

    def __call__(self, *flat: Any) -> Any:
        leaves = iter(flat)
        args = [(keyword, pytree.unflatten(tree, leaves)) for keyword, tree in self.layout]
        result = self.fn(*(v for k, v in args if k is None), **{k: v for k, v in args if k is not None})
        self.tree, result = pytree.result_tree(result)
        return result


def _static_hint(comp: Compilation) -> str:
    """When every guard reads only number arguments (`x.reshape(n, -1)` with `n` a NumPy int): the static_argnames
    that would make them constants, stated once instead of a guard per value."""
    reads = [[n for n in ancestors(g.node) if n.op == "arg"] for g in comp.guards]
    if not reads or any(not args or any(a.shape for a in args) for args in reads):
        return ""
    names = tuple(sorted({a.attr("name") for args in reads for a in args}))
    return f"; they read only number arguments: to make them constants, et.kernel(f, static_argnames={names!r})"


def _call_of(fn: Callable[..., Any]) -> _Call:
    """The _Call a traced function is (or its static arguments bind)."""
    return fn.fn if isinstance(fn, _Static) else fn


def static_names(fn: Callable[..., Any], argnums: Any, argnames: Any) -> frozenset[str]:
    """The parameter names `static_argnums` (positions) and `static_argnames` name; TypeError for one fn lacks."""
    params = list(inspect.signature(fn).parameters.values())
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums or ())
    names = (argnames,) if isinstance(argnames, str) else tuple(argnames or ())
    named = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    keyword_only = [p.name for p in params if p.kind == p.KEYWORD_ONLY]
    for i in nums:
        if not -len(named) <= i < len(named):
            raise TypeError(f"static_argnums {i} is out of range: {function_name(fn)} has {len(named)} positional parameters")
    for n in names:
        if n not in named + keyword_only:
            raise TypeError(f"static_argnames {n!r} is not a parameter of {function_name(fn)} (it has {', '.join(named + keyword_only)})")
    return frozenset(names) | {named[i] for i in nums}


def _fast_key(a: Any) -> Any:
    """A cheap signature key: (shape, dtype, contiguity) for arrays (contiguity 0: neither, slow path; so for lists and dicts)."""
    if type(a) is NDARRAY:
        flags = a.flags
        return (a.shape, a.dtype, 1 if flags.c_contiguous else (2 if flags.f_contiguous else 0))
    return (type(a), 0) if isinstance(a, (list, tuple, dict)) else type(a)


def _constant(value: Any) -> bool:
    """Whether an argument is always a constant of the program: None (passed, or a `=None` default, as in JAX),
    a string, a dtype or type, Ellipsis, NumPy's _NoValue default; never data, one specialization per value."""
    return value is None or value is Ellipsis or value is np._NoValue or isinstance(value, (str, bytes, np.dtype, type))


def _literal(value: Any) -> bool:
    """Whether an argument is a Python value a kernel specializes on when tracing needs it: a number, list or tuple."""
    return type(value) in PYTHON_SCALARS or isinstance(value, (list, tuple))


def _hashable(value: Any) -> Any:
    """An automatically static value as a key: lists (nested) as tuples."""
    return tuple(map(_hashable, value)) if isinstance(value, (list, tuple)) else value


def _run_once(comp: Compilation, values: Any) -> Any:
    """Run a compilation once on a call's values (a guard's sub-program while tracing: guards.Run)."""
    specs = _own(comp)
    return _run_checked(_Dispatch(comp, specs, comp.name), values, specs, None)


def _own(comp: Compilation) -> tuple[ArgSpec, ...]:
    """The specs of comp's own arguments: the call's, without the hidden ones (captured arrays) the dispatch adds."""
    return comp.specs[: len(comp.specs) - len(comp.captured)]


def _run_checked(dispatch: _Dispatch, values: list[Any], specs: tuple[ArgSpec, ...], out: Any) -> Any:
    """The checked call path: Python ints in range, scalars and odd strides as arrays, then the native call."""
    dispatch.check_ints(values)
    dispatch.check_written(values)
    arrays = [_as_array(v, s) for v, s in zip(values, specs, strict=True)]
    return dispatch.run(arrays, out, values)


REFUSED = object()  # a fast-path call the native reader refused (nothing ran): take the checked path


class _Dispatch:
    """The call path of one specialization: scalar conversion, output allocation, native call."""

    __slots__ = ("arg_names", "call", "captured", "checks", "empty", "name", "narrowed", "native", "out_dtypes", "outputs",
                 "returns_tuple", "scalars", "tree", "visible", "workspace", "written")

    def __init__(self, comp: Compilation, specs: tuple[ArgSpec, ...], name: str) -> None:
        if comp.native is None:  # compiled for a GPU: loaded once by its driver (gpu/launch.py), DeviceError without one
            from .gpu.launch import launcher

            comp.native = launcher(comp)
        self.name = name
        self.native = comp.native
        self.outputs = tuple((o.shape, numpy_dtype(o.dtype)) for o in comp.outputs)  # (bfloat16: ml_dtypes imported here)
        self.out_dtypes = tuple(dtype for _, dtype in self.outputs)
        self.checks = comp.checks  # the last len(checks) outputs are 0-d bool flags (tracing/indexing.py)
        self.written = tuple(comp.arg_names.index(n) for n in comp.written)  # arguments receiving the outputs before the flags
        self.visible = self.outputs[: len(self.outputs) - len(self.checks) - len(self.written)]
        self.empty = allocator(self.outputs)
        self.returns_tuple = comp.returns_tuple
        self.tree = comp.tree  # a dict/list/nested result's structure: the flat results are rebuilt into it
        self.workspace = comp.workspace  # lent for the call, back to the pool when it returns
        self.captured = comp.captured  # large captured arrays: hidden arguments after the call's own
        # Python and NumPy scalars (and 0-d arrays, unchanged) become 0-d arrays of the compiled dtype.
        self.scalars = tuple((i, np.dtype(s.dtype)) for i, s in enumerate(specs) if s.weak is not None or not s.shape)
        # every Python int argument is checked against the integer dtype it becomes (int64 unless narrowed)
        narrowed = dict(comp.narrowed_ints)
        self.narrowed = tuple((i, np.iinfo(narrowed.get(i, "int64"))) for i, s in enumerate(specs) if s.weak is int)
        self.arg_names = comp.arg_names
        # The fast path, for arguments with the (shape, dtype, layout) key this dispatch was made for.
        self.call: Callable[[tuple, Any], Any] = self._typed_call
        if not self.native.reads_natively:
            self.call = self._checked_call
        elif len(self.outputs) == 1 and self.outputs[0][0] and not (self.returns_tuple or self.scalars or self.workspace or self.captured
                                                                     or self.written):
            self.call = self._one_array_call()

    def _one_array_call(self) -> Callable[[tuple, Any], Any]:
        """_typed_call for a kernel of array arguments returning one array, without workspace: the
        tiny-call path (allocate unless `out=` is an array, let the native reader check and run)."""
        ((shape, dtype),) = self.outputs
        empty, run, general = self.empty, self.native.try_typed, self._typed_call

        def call(args: tuple, out: Any) -> Any:
            if out is None:
                result = empty(shape, dtype)
                return REFUSED if run(*args, result) else result
            if type(out) is NDARRAY and out.dtype == dtype:
                return REFUSED if run(*args, out) else out
            return general(args, out)

        return call

    def _typed_call(self, args: tuple, out: Any) -> Any:
        """The native reader checks every array (shape, layout, writability, no output meeting an
        input) and runs the kernel on them, writing into `out` when given; REFUSED if it refuses one."""
        self.check_written(args)
        given, args = args, self._with_scalars_as_arrays(args)
        if out is None:
            outs = [self.empty(shape, dtype) for shape, dtype in self.outputs]
        else:
            outs = list(out) if type(out) is tuple else [out]
            if tuple([t.dtype if type(t) is NDARRAY else None for t in outs]) != self.out_dtypes:
                return REFUSED
        if self.native.try_typed(*args, *self.captured, *outs, *self._lend()):
            return REFUSED
        return self._results(outs, out, given)

    def _checked_call(self, args: tuple, out: Any) -> Any:
        """The fast path where NumPy's array layout is not the native reader's: checked in Python."""
        self.check_written(args)
        return self.run(self._with_scalars_as_arrays(args), out, args)

    def _with_scalars_as_arrays(self, args: tuple) -> Any:
        """args with each scalar argument a 0-d array of its compiled dtype."""
        if not self.scalars:
            return args
        self.check_ints(args)
        args = list(args)
        for i, dtype in self.scalars:
            args[i] = np.asarray(args[i], dtype)
        return args

    def check_ints(self, args: Any) -> None:
        """OutOfBoundsError (an OverflowError, as NumPy raises) for a Python int argument outside the integer
        dtype the kernel converts it to: the program's narrower dtype, else int64, the type of every int argument."""
        for i, info in self.narrowed:
            if not info.min <= args[i] <= info.max:
                why = ("(NumPy raises OverflowError too)" if info.dtype != np.int64 else
                       "(a Python int argument is passed as int64; pass a float for a value beyond it)")
                raise OutOfBoundsError(f"{self.name}(): argument {self.arg_names[i]!r}: Python integer {args[i]} out of bounds for {info.dtype} {why}")

    def run(self, arrays: Any, out: Any = None, given: Any = None) -> Any:
        """Call the native code on arrays (`given`: the caller's, which written arguments update), checked:
        a clear error for any that does not fit."""
        given = arrays if given is None else given
        if out is not None:
            return self._into_checked(arrays, out, given)
        outs = [self.empty(shape, dtype) for shape, dtype in self.outputs]
        self.native(*arrays, *self.captured, *outs, *self._lend())
        return self._results(outs, None, given)

    def _results(self, outs: list[np.ndarray], out: Any, given: Any) -> Any:
        """What the call returns: the user's `out` (as given), or the new array(s), 0-d ones as scalars
        (None for a kernel returning nothing); written arguments updated first."""
        outs = self._checked_flags(outs, given)
        if out is not None:
            return self._structured(out) if self.returns_tuple else outs[0]
        if self.returns_tuple:
            return self._structured(tuple(o[()] if o.ndim == 0 else o for o in outs))
        if not outs:
            return None
        result = outs[0]
        return result[()] if result.ndim == 0 else result

    def _checked_flags(self, outs: list[np.ndarray], given: Any) -> list[np.ndarray]:
        """The user's outputs, after raising the error of the first run-time check that failed (IndexOutOfBoundsError, LinAlgError),
        and copying each written argument's final value into the caller's array."""
        visible, written = len(self.visible), len(self.written)
        for flag, (error, message) in zip(outs[visible + written :], self.checks, strict=True):
            if flag[()]:
                raise error(f"{self.name}(): {message}")
        for i, value in zip(self.written, outs[visible : visible + written], strict=True):
            np.copyto(given[i], value)
        return outs[:visible]

    def check_written(self, args: Any) -> None:
        """KernelArgumentError, before anything runs, for an argument the kernel writes into that cannot
        take the write as NumPy's would: not a writeable array of its own memory, or sharing memory with
        another argument (NumPy's result would depend on the aliasing)."""
        for i in self.written:
            a, name = args[i], self.arg_names[i]
            if not isinstance(a, np.ndarray):
                raise KernelArgumentError(f"{self.name}(): argument {name!r} is written into by the kernel, so it must be a NumPy "
                                          f"array (the caller's array is updated), not {type(a).__name__}; pass np.asarray(...) and keep it")
            if not a.flags.writeable or any(st == 0 and n > 1 for st, n in zip(a.strides, a.shape)):
                raise KernelArgumentError(f"{self.name}(): argument {name!r} is written into by the kernel, but the array is read-only "
                                          "or a broadcast view (zero strides), as NumPy would refuse; pass a writeable copy (.copy())")
            for j, b in enumerate(args[: len(self.arg_names) - len(self.captured)]):
                if j != i and isinstance(b, np.ndarray) and np.shares_memory(a, b):
                    raise KernelArgumentError(f"{self.name}(): argument {name!r} is written into by the kernel and shares memory with "
                                              f"argument {self.arg_names[j]!r}: the result would depend on the aliasing; "
                                              f"pass a copy ({self.arg_names[j]}.copy()) for one of them")

    def _lend(self) -> list[np.ndarray]:
        """The workspace buffers for one call, from the pool (given back when the call drops them)."""
        return [POOL.empty(shape, dtype, 0) for shape, dtype in self.workspace]

    def _into_checked(self, arrays: Any, out: Any, given: Any) -> Any:
        """Write the results into the user's arrays (checked: a clear error for a wrong one): directly
        when the kernel can, else through a temporary (a strided target, or one overlapping an input)."""
        targets = check_out(out, self.visible, self.name)
        outs = [t if direct(t, arrays) else POOL.empty(t.shape, t.dtype) for t in targets]
        hidden = [self.empty(shape, dtype) for shape, dtype in self.outputs[len(self.visible) :]]  # written arguments', flags
        self.native(*arrays, *self.captured, *outs, *hidden, *self._lend())
        self._checked_flags(outs + hidden, given)
        for target, result in zip(targets, outs, strict=True):
            if result is not target:
                np.copyto(target, result)
        return self._structured(targets) if self.returns_tuple else targets[0]

    def _structured(self, results: Any) -> Any:
        """The results (a tuple) in the structure the function returned them in (a dict, list or nested tuple)."""
        return results if self.tree is None else pytree.unflatten(self.tree, iter(results))


def _as_array(value: Any, spec: ArgSpec) -> np.ndarray:
    """The array handed to native code: scalars become 0-d arrays; odd strides are copied."""
    if spec.weak is not None or type(value) in PYTHON_SCALARS:
        return np.asarray(value, dtype=spec.dtype)
    if not isinstance(value, np.ndarray) and device_array(value) is not None:  # a GPU target's launcher reads it in place
        return value
    array = np.asarray(value)
    itemsize = array.itemsize
    if not array.flags.aligned or any(st % itemsize and n > 1 for st, n in zip(array.strides, array.shape)):
        return np.array(array, order="C")  # a memref cannot describe it; the C layout was compiled for
    return array


@overload
def kernel(fn: Callable[..., Any], /, *, rules: Ruleset | Schedule | None = ..., fastmath: bool | str | Iterable[str] = ..., target: str | Target | None = ..., limits: Limits | None = ..., cache: bool = ..., threads: int | None = ..., machine: Machine | None = ..., streaming: bool = ..., autotune: bool = ..., static_argnums: int | tuple[int, ...] = ..., static_argnames: str | tuple[str, ...] = ...) -> Kernel: ...
@overload
def kernel(fn: None = None, /, *, rules: Ruleset | Schedule | None = ..., fastmath: bool | str | Iterable[str] = ..., target: str | Target | None = ..., limits: Limits | None = ..., cache: bool = ..., threads: int | None = ..., machine: Machine | None = ..., streaming: bool = ..., autotune: bool = ..., static_argnums: int | tuple[int, ...] = ..., static_argnames: str | tuple[str, ...] = ...) -> Callable[[Callable[..., Any]], Kernel]: ...


def kernel(fn=None, /, *, rules=_UNSET, fastmath=False, target=None, limits=None, cache=True, threads=None, machine=None,
           streaming=True, autotune=False, static_argnums=(), static_argnames=()):
    """Compile a NumPy function: `@kernel`, `@kernel(target=...)` or `kernel(fn, rules=...)`.

    rules: an egglog ruleset or schedule (default: egglog_tensor.rulesets.DEFAULT; None runs none).
    fastmath: also run rewrites that are not exact under IEEE-754 and let the float arithmetic use
        them too: True for all of LLVM's fast-math flags, or some of them ("reassoc", "nnan", "ninf",
        "nsz", "arcp", "contract", "afn": a set, or a string "reassoc,nsz"); each rule group of
        rulesets.FASTMATH runs when its flags are allowed (docs/rules-and-fastmath.md).
    target: a lowering pipeline name ("cpu", "cpu-openmp") for this machine (Target.host()), or a
        Target (another CPU's caches and features, its pipeline name and threads); default
        "cpu-openmp" when this process may use more than one core (os.sched_getaffinity or
        OMP_NUM_THREADS), else "cpu". Code for a CPU this machine lacks features of compiles and
        can be inspected, but calling it is an error.
    threads: threads of "cpu-openmp" (default the Target's, else OMP_NUM_THREADS, else every usable
        core); compiled in.
    cache: reuse machine code from the on-disk compilation cache and store new code there
        (egglog_tensor/cache.py; EGGLOG_TENSOR_CACHE=0 turns it off for the process).
    machine: the numbers the cost model prices kernels with (an et.Machine: defaults, your own, or
        et.Machine.measure() on this machine); replaces the Target's.
    streaming: write outputs larger than the last-level cache with non-temporal stores where that
        pays (arithmetic-only loops; lowering/nontemporal.py); False keeps plain stores.
    autotune: at each signature's first call, compile candidates (the model's program, the next-cheapest
        extracted ones, neighbouring matmul tiles), time them on that call's arguments and keep the
        fastest (`Kernel.autotune`; the choice is recorded beside the on-disk cache).
    static_argnums, static_argnames: arguments (by position or name, as JAX's) that are compile-time
        constants: any hashable value (an int used in a shape, a slice or range(), a tuple, a str...),
        one specialization per distinct value (docs/calling.md).
    """
    from .lowering.pipelines import resolve_target
    from .rulesets import DEFAULT, fastmath_flags

    options = Options(DEFAULT if rules is _UNSET else rules, fastmath_flags(fastmath), resolve_target(target, threads, machine),
                      limits or Limits(), cache=bool(cache), streaming=bool(streaming), autotune=bool(autotune))
    def make(f: Callable[..., Any]) -> Kernel:
        return Kernel(f, options, static_names(f, static_argnums, static_argnames))

    return make if fn is None else make(fn)
