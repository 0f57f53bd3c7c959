"""Random well-typed NumPy programs for the differential fuzzer (tests/test_fuzz.py).

A `Program` is a small DAG: arguments (shape, dtype), then steps, each one NumPy op applied to
earlier values, then the values it returns. Calling it runs the steps with NumPy (or on tracers,
which is how `@kernel` compiles it); `source()` prints it as the plain function it stands for,
which is what a failure report and a regression test show. `programs()` draws programs and
`arguments()` draws data for one, reusing tests/strategies.py's make_array and with_layout.
"""

from __future__ import annotations

import operator
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import ml_dtypes  # (its finfo; importing it registers bfloat16 with NumPy)
import numpy as np
import scipy.special as sp
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from strategies import FLOATS, layouts, make_array, seeds, with_layout

MAX_ELEMENTS = 512  # a step whose result is larger is dropped (keeps compiles and oracles cheap)


@dataclass(frozen=True)
class OpSpec:
    """How one kind of step runs (on NumPy arrays or tracers) and how it reads as Python."""

    run: Callable[..., Any]  # run(values, params) -> value
    text: Callable[..., str]  # text(names, params) -> Python expression


def _call(fn: Callable[..., Any], spelling: str) -> OpSpec:
    return OpSpec(lambda v, p: fn(*v), lambda n, p: spelling.format(*n))


UNARY = {
    "negative": _call(np.negative, "-{}"),
    "absolute": _call(np.abs, "np.abs({})"),
    "exp": _call(np.exp, "np.exp({})"),
    "log": _call(np.log, "np.log({})"),
    "sqrt": _call(np.sqrt, "np.sqrt({})"),
    "tanh": _call(np.tanh, "np.tanh({})"),
    "sin": _call(np.sin, "np.sin({})"),
    "cos": _call(np.cos, "np.cos({})"),
    "square": _call(np.square, "np.square({})"),
    "reciprocal": _call(np.reciprocal, "np.reciprocal({})"),
    "sign": _call(np.sign, "np.sign({})"),
    **{name: _call(getattr(np, name), f"np.{name}({{}})") for name in (
        "log1p", "expm1", "log2", "log10", "exp2", "sinh", "cosh", "arcsinh", "arctan", "cbrt",
        "floor", "ceil", "trunc", "rint", "fabs", "deg2rad", "rad2deg")},
}
_BINARY_FNS = {
    "add": (np.add, "{} + {}"), "subtract": (np.subtract, "{} - {}"), "multiply": (np.multiply, "{} * {}"),
    "divide": (np.divide, "{} / {}"), "floor_divide": (np.floor_divide, "{} // {}"),
    "remainder": (np.remainder, "{} % {}"), "power": (np.power, "{} ** {}"),
    "maximum": (np.maximum, "np.maximum({}, {})"), "minimum": (np.minimum, "np.minimum({}, {})"),
    "arctan2": (np.arctan2, "np.arctan2({}, {})"),
    **{name: (getattr(np, name), f"np.{name}({{}}, {{}})") for name in ("hypot", "copysign", "fmod", "heaviside")},
}  # fmt: skip
BINARY = {name: _call(fn, spelling) for name, (fn, spelling) in _BINARY_FNS.items()}
# The same ops with a Python float on one side (params: the constant, and whether it comes first).
SCALAR = {
    f"{name}_scalar": OpSpec(
        lambda v, p, fn=fn: fn(p[0], v[0]) if p[1] else fn(v[0], p[0]),
        lambda n, p, s=spelling: s.format(repr(p[0]), n[0]) if p[1] else s.format(n[0], repr(p[0])),
    )
    for name, (fn, spelling) in _BINARY_FNS.items()
}
COMPARISONS = {"less": "<", "less_equal": "<=", "greater": ">", "greater_equal": ">=", "equal": "==", "not_equal": "!="}
COMPARE_FNS = {"less": np.less, "less_equal": np.less_equal, "greater": np.greater,
                "greater_equal": np.greater_equal, "equal": np.equal, "not_equal": np.not_equal}  # fmt: skip
REDUCTIONS = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod, "mean": np.mean}


def _where_text(n: list[str], p: tuple) -> str:
    return f"np.where({n[0]} {COMPARISONS[p[0]]} {n[1]}, {n[2]}, {n[3]})"


def _reduce_text(n: list[str], p: tuple) -> str:
    return f"np.{p[0]}({n[0]}, axis={p[1]!r}, keepdims={p[2]})"


def key_text(key: tuple) -> str:
    """A basic-indexing key as Python source: (slice(1, None, -2), 0, None) -> '1::-2, 0, None'."""

    def one(k: Any) -> str:
        if isinstance(k, slice):
            parts = ["" if v is None else str(v) for v in (k.start, k.stop)]
            return ":".join(parts) + ("" if k.step is None else f":{k.step}")
        return repr(k)

    return ", ".join(map(one, key)) + ("," if len(key) == 1 else "")


def gram(x: Any) -> Any:
    """x @ x.T over the last two axes (x @ x for a vector): a matmul every shape admits."""
    return x @ (np.swapaxes(x, -1, -2) if x.ndim >= 2 else x)


PAIRINGS = ("add", "subtract", "multiply", "maximum")  # how `products` combines its two products


def _products_text(n: list[str], p: tuple) -> str:
    one = (lambda x: f"({x} @ {x})") if p[1] else (lambda x: f"({x} @ np.swapaxes({x}, -1, -2))")
    return _BINARY_FNS[p[0]][1].format(one(n[0]), one(n[1]))


# --- the newer surface (issues 24, 25): one record per op here, its drawer in DRAWERS below, and
# its bound in fuzz_oracle.py (views and data movement need none: `_view` moves errors along) ---

# Reductions beyond REDUCTIONS (params: name, axis, keepdims). Index and truth results are cast back
# to the argument's dtype, so later steps keep drawing on floats. Scans (no keepdims) are SCANS.
STATISTICS = {"argmax": np.argmax, "argmin": np.argmin, "any": np.any, "all": np.all, "var": np.var,
              "std": np.std, "ptp": np.ptp, "nansum": np.nansum, "nanmax": np.nanmax}  # fmt: skip
SCANS = {"cumsum": np.cumsum, "cumprod": np.cumprod}  # params: name, axis (None: flattened)
SCAN_SCALES = {"cumsum": "", "cumprod": " * 0.125"}  # cumprod of x/8 (exact): factors of |x| <= 10 stay <= 1.25, rarely overflowing
PREDICATES = {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite}  # cast back to the argument's dtype
MAKERS = ("arange", "eye", "zeros_like", "ones_like", "full_like")  # arrays made in the kernel (params: name, k or fill)
# Arrays made in the kernel from array indices alone (params: maker, shape, the axis its line runs along or eye's k,
# dtype): a line of np.arange or np.linspace along one axis, or np.eye, broadcast to the shape. The kernel computes them
# from its loops' indices, which the blocked and interleaved paths renumber (lowering/generics.py split_inputs)
INDEXED = ("arange", "linspace", "eye")
INDEXED_ROWS = (8, 12)  # rows that the interleaved row scan takes 4 at a time (more than 4, a multiple of 4)


def _statistic(x: Any, p: tuple) -> Any:
    """params: name, axis, keepdims, and for var/std maybe ddof."""
    out = STATISTICS[p[0]](x, axis=p[1], keepdims=p[2], **({"ddof": p[3]} if len(p) > 3 else {}))
    return out if out.dtype == x.dtype else out.astype(x.dtype)


def _statistic_text(n: list[str], p: tuple) -> str:
    cast = "" if p[0] in ("var", "std", "ptp", "nansum", "nanmax") else ".astype({}.dtype)".format(n[0])
    ddof = f", ddof={p[3]}" if len(p) > 3 else ""
    return f"np.{p[0]}({n[0]}, axis={p[1]!r}, keepdims={p[2]}{ddof}){cast}"


def made(x: Any, p: tuple) -> Any:
    """The array a `made` step builds in the kernel from x's shape: arange, eye, zeros_like ..."""
    if p[0] == "arange":
        return np.arange(x.shape[-1])
    if p[0] == "eye":
        return np.eye(x.shape[-2], x.shape[-1], p[1])
    if p[0] == "full_like":
        return np.full_like(x, p[1])
    return getattr(np, p[0])(x)


def _along(shape: tuple[int, ...], axis: int) -> tuple[int, ...]:
    """The shape of a line along `axis` that broadcasts to `shape`."""
    return tuple(n if a == axis % len(shape) else 1 for a, n in enumerate(shape))


def indexed(p: tuple) -> np.ndarray:
    """The array an `indexed` step makes from array indices: np.arange or np.linspace(-1, 1) along an axis, or np.eye
    with diagonal k, broadcast to the shape."""
    maker, shape, at, dtype = p
    if maker == "eye":
        return np.broadcast_to(np.eye(shape[-2], shape[-1], at, dtype=dtype), shape)
    line = np.arange(shape[at], dtype=dtype) if maker == "arange" else np.linspace(-1.0, 1.0, shape[at], dtype=dtype)
    return np.broadcast_to(line.reshape(_along(shape, at)), shape)


def _indexed_text(n: list[str], p: tuple) -> str:
    maker, shape, at, dtype = p
    if maker == "eye":
        return f"np.broadcast_to(np.eye({shape[-2]}, {shape[-1]}, {at}, dtype=np.{dtype}), {shape!r})"
    line = f"np.arange({shape[at]}, dtype=np.{dtype})" if maker == "arange" else f"np.linspace(-1.0, 1.0, {shape[at]}, dtype=np.{dtype})"
    return f"np.broadcast_to({line}.reshape({_along(shape, at)!r}), {shape!r})"


def _made_text(x: str, p: tuple) -> str:
    if p[0] == "arange":
        return f"np.arange({x}.shape[-1])"
    if p[0] == "eye":
        return f"np.eye({x}.shape[-2], {x}.shape[-1], {p[1]})"
    return f"np.{p[0]}({x}{'' if p[0] != 'full_like' else f', {p[1]!r}'})"


AUGMENTED = {"+": ("add", operator.iadd), "-": ("subtract", operator.isub), "*": ("multiply", operator.imul)}


def _updated(v: list[Any], p: tuple) -> Any:
    """B = x.copy(); B[key] = y, or B[key] op= y for params (key, op): Python's get, in-place op, set."""
    out = v[0].copy()
    out[p[0]] = AUGMENTED[p[1]][1](out[p[0]], v[1]) if len(p) > 1 else v[1]
    return out


def syr2k(a: Any, b: Any, c: Any, alpha: float, beta: float) -> Any:
    """NPBench's syr2k epilogue: two contractions, scaled, added and masked to the lower triangle."""
    ab = a @ np.swapaxes(b, -1, -2) + b @ np.swapaxes(a, -1, -2)
    return np.where(np.tri(a.shape[-2], dtype=bool), beta * c + alpha * ab, c)


def _syr2k_text(n: list[str], p: tuple) -> str:
    ab = f"{n[0]} @ np.swapaxes({n[1]}, -1, -2) + {n[1]} @ np.swapaxes({n[0]}, -1, -2)"
    return f"np.where(np.tri({n[0]}.shape[-2], dtype=bool), {p[1]!r} * {n[2]} + {p[0]!r} * ({ab}), {n[2]})"

# scipy.special's functions (tracing/special.py): ops of their own (erf erfc gammaln psi i0e i1e exp1 expi gammainc),
# the others composed; applied as they are (NaN outside their domain, inf at their poles), the binary one (SPECIAL2)
# to |a| and |x|, its domain. (Not gammaincc: SciPy's is up to 265 ULP off near a = 1/2, x = 1, where the kernel's is within 8.)
SPECIAL = {name: _call(getattr(sp, name), f"sp.{name}({{}})") for name in (
    "erf", "erfc", "expit", "log_expit", "ndtr", "gammaln", "psi", "erfinv", "ndtri", "i0e", "i1e", "exp1", "expi")}
SPECIAL2 = {name: _call(lambda a, x, fn=getattr(sp, name): fn(np.abs(a), np.abs(x)), f"sp.{name}(np.abs({{}}), np.abs({{}}))")
            for name in ("gammainc",)}

NEWER: dict[str, OpSpec] = {
    **SPECIAL,
    **SPECIAL2,
    "einsum": OpSpec(lambda v, p: np.einsum(p[0], *v), lambda n, p: f"np.einsum({p[0]!r}, {', '.join(n)})"),
    "matmul_t": _call(lambda a, b: a @ np.swapaxes(b, -1, -2), "{} @ np.swapaxes({}, -1, -2)"),
    "statistic": OpSpec(lambda v, p: _statistic(v[0], p), _statistic_text),
    **{name: OpSpec(lambda v, p, fn=fn: fn(v[0]).astype(v[0].dtype), lambda n, p, s=name: f"np.{s}({n[0]}).astype({n[0]}.dtype)")
       for name, fn in PREDICATES.items()},
    "scan": OpSpec(lambda v, p: SCANS[p[0]](v[0] * 0.125 if SCAN_SCALES[p[0]] else v[0], axis=p[1]),
                   lambda n, p: f"np.{p[0]}({n[0]}{SCAN_SCALES[p[0]]}, axis={p[1]!r})"),
    "nan_to_num": _call(np.nan_to_num, "np.nan_to_num({})"),
    "round": OpSpec(lambda v, p: np.round(v[0], p[0]), lambda n, p: f"np.round({n[0]}, {p[0]})"),
    "flip": OpSpec(lambda v, p: np.flip(v[0], p[0]), lambda n, p: f"np.flip({n[0]}, {p[0]!r})"),
    "roll": OpSpec(lambda v, p: np.roll(v[0], p[0], p[1]), lambda n, p: f"np.roll({n[0]}, {p[0]}, {p[1]!r})"),
    "pad": OpSpec(lambda v, p: np.pad(v[0], p[0], mode=p[1]), lambda n, p: f"np.pad({n[0]}, {p[0]!r}, mode={p[1]!r})"),
    "tile": OpSpec(lambda v, p: np.tile(v[0], p[0]), lambda n, p: f"np.tile({n[0]}, {p[0]!r})"),
    "repeat": OpSpec(lambda v, p: np.repeat(v[0], p[0], p[1]), lambda n, p: f"np.repeat({n[0]}, {p[0]}, {p[1]!r})"),
    "moveaxis": OpSpec(lambda v, p: np.moveaxis(v[0], p[0], p[1]), lambda n, p: f"np.moveaxis({n[0]}, {p[0]}, {p[1]})"),
    "stack": OpSpec(lambda v, p: np.stack(v, p[0]), lambda n, p: f"np.stack([{', '.join(n)}], {p[0]})"),
    "take": OpSpec(lambda v, p: np.take(v[0], np.array(p[0], np.intp), p[1]),
                   lambda n, p: f"np.take({n[0]}, np.array({list(p[0])!r}), {p[1]!r})"),
    "fancy": OpSpec(lambda v, p: v[0][np.array(p[0], np.intp)], lambda n, p: f"{n[0]}[np.array({list(p[0])!r})]"),
    # params: the maker's params, then the binary op combining x with the made array
    "made": OpSpec(lambda v, p: _BINARY_FNS[p[-1]][0](v[0], made(v[0], p[:-1])),
                   lambda n, p: _BINARY_FNS[p[-1]][1].format(n[0], _made_text(n[0], p[:-1]))),
    "indexed": OpSpec(lambda v, p: indexed(p), _indexed_text),
    "sort": OpSpec(lambda v, p: np.sort(v[0], axis=p[0]), lambda n, p: f"np.sort({n[0]}, axis={p[0]!r})"),
    # B = x.copy(); B[key] = y (the source line binds the step's own name, `$out`)
    "setitem": OpSpec(_updated, lambda n, p: f"{n[0]}.copy(); $out[{key_text(p[0])}] {p[1] if len(p) > 1 else ''}= {n[1]}"),
    "syr2k": OpSpec(lambda v, p: syr2k(*v, *p), _syr2k_text),
}


OPS: dict[str, OpSpec] = {
    **UNARY,
    **BINARY,
    **SCALAR,
    "where": OpSpec(lambda v, p: np.where(COMPARE_FNS[p[0]](v[0], v[1]), v[2], v[3]), _where_text),
    "reduce": OpSpec(lambda v, p: REDUCTIONS[p[0]](v[0], axis=p[1], keepdims=p[2]), _reduce_text),
    "matmul": _call(np.matmul, "{} @ {}"),
    "gram": OpSpec(lambda v, p: gram(v[0]), lambda n, p: f"{n[0]} @ np.swapaxes({n[0]}, -1, -2)"),
    "gram1": OpSpec(lambda v, p: gram(v[0]), lambda n, p: f"{n[0]} @ {n[0]}"),
    # two contractions of equal shapes (equal tiles) in one value (params: the pairing, whether 1-D)
    "products": OpSpec(lambda v, p: _BINARY_FNS[p[0]][0](gram(v[0]), gram(v[1])), _products_text),
    "transpose": OpSpec(lambda v, p: np.transpose(v[0], p[0]), lambda n, p: f"np.transpose({n[0]}, {p[0]!r})"),
    "reshape": OpSpec(lambda v, p: v[0].reshape(p[0]), lambda n, p: f"{n[0]}.reshape({p[0]!r})"),
    "getitem": OpSpec(lambda v, p: v[0][p[0]], lambda n, p: f"{n[0]}[{key_text(p[0])}]"),
    "broadcast_to": OpSpec(lambda v, p: np.broadcast_to(v[0], p[0]), lambda n, p: f"np.broadcast_to({n[0]}, {p[0]!r})"),
    "astype": OpSpec(lambda v, p: v[0].astype(p[0]), lambda n, p: f"{n[0]}.astype(np.{p[0]})"),
    "concatenate": OpSpec(lambda v, p: np.concatenate([v[0], v[1]], axis=p[0]),
                          lambda n, p: f"np.concatenate([{n[0]}, {n[1]}], axis={p[0]})"),
    **NEWER,
}


@dataclass(frozen=True)
class Step:
    """One value of the program: op applied to earlier values (indices: arguments first)."""

    op: str
    args: tuple[int, ...]
    params: tuple = ()


@dataclass(frozen=True)
class Program:
    """A random NumPy program: arguments (shape, dtype), steps, and the values it returns."""

    inputs: tuple[tuple[tuple[int, ...], str], ...]
    steps: tuple[Step, ...]
    outputs: tuple[int, ...]

    def __call__(self, *args: Any) -> Any:
        values = list(args)
        for s in self.steps:
            values.append(OPS[s.op].run([values[i] for i in s.args], s.params))
        out = tuple(values[i] for i in self.outputs)
        return out if len(out) > 1 else out[0]

    def function(self) -> Callable[..., Any]:
        """A fresh function object running this program (one `@kernel` per function object)."""
        return lambda *xs: self(*xs)

    def name(self, i: int) -> str:
        return f"x{i}" if i < len(self.inputs) else f"v{i}"

    def source(self) -> str:
        """The program as the plain NumPy function it stands for, with its argument signature."""
        sig = ", ".join(f"x{i}: {dtype}{list(shape)}" for i, (shape, dtype) in enumerate(self.inputs))
        lines = [f"def f({', '.join(self.name(i) for i in range(len(self.inputs)))}):  # {sig}"]
        for k, s in enumerate(self.steps):
            text = OPS[s.op].text([self.name(i) for i in s.args], s.params)
            name = self.name(len(self.inputs) + k)
            lines.append(f"    {name} = {text.replace('$out', name)}")
        lines.append(f"    return {', '.join(self.name(i) for i in self.outputs)}")
        return "\n".join(lines)


# --- drawing programs -------------------------------------------------------------------------

LONG_RUN = int(os.environ.get("EGGLOG_TENSOR_FUZZ_EXAMPLES", "0"))


def fuzz_settings(ci_examples: int) -> settings:
    """ci_examples fixed programs in CI; EGGLOG_TENSOR_FUZZ_EXAMPLES fresh random ones in a long run
    (pytest's --hypothesis-seed=N makes a long run's draw repeatable)."""
    if LONG_RUN:
        return settings(max_examples=LONG_RUN, derandomize=False, deadline=None)
    return settings(max_examples=ci_examples, derandomize=True, deadline=None, database=None)


CONSTANTS = (0.0, -0.0, 1.0, -1.0, 2.0, 0.5, 3.0, -2.5, 0.1, 1e30, 1e-30, float("inf"), float("nan"))


def _pick(draw: st.DrawFn, choices: list[int]) -> int:
    return draw(st.sampled_from(choices))


def _broadcasts(a: np.ndarray, b: np.ndarray) -> bool:
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        return False
    return True


def _draw_key(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple:
    """A basic-indexing key: per axis a slice (any start/stop/step, negative too) or an int, maybe a None."""
    key: list[Any] = []
    for d in shape:
        if d and draw(st.integers(0, 4)) == 0:
            key.append(draw(st.integers(-d, d - 1)))
            continue
        bound = st.none() | st.integers(-d - 1, d + 1)
        key.append(slice(draw(bound), draw(bound), draw(st.sampled_from([None, 1, 2, -1, -2, 3]))))
    if draw(st.booleans()):
        key.insert(draw(st.integers(0, len(key))), None)
    return tuple(key)


def _draw_reshape(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A new shape of the same size: flat, split in two factors, or with unit dims moved."""
    size = int(np.prod(shape))
    core = [d for d in shape if d != 1]
    options = [(-1,), (size,), (1, size), tuple(core) + (1,), (1,) + tuple(core)]
    options += [(f, size // f) for f in range(1, size + 1) if size % f == 0][:6]
    if size == 0:
        options += [(0, 3), (2, 0, 1)]
    return draw(st.sampled_from(options))


LETTERS = "abcdefghijklmnop"


def einsum_terms(spec: str, shapes: list[tuple[int, ...]]) -> int:
    """How many products an einsum sums per output element: the sizes of the letters not in its output."""
    ins, arrow, out = spec.partition("->")
    letters = ins.replace(",", "").replace(".", "")
    if not arrow:
        out = "".join(c for c in sorted(set(letters)) if letters.count(c) == 1)
    sizes = {}
    for sub, shape in zip(ins.split(","), shapes, strict=True):
        sub = sub.replace("...", "")
        sizes.update(zip(sub, shape[len(shape) - len(sub):], strict=True))
    return int(np.prod([d for c, d in sizes.items() if c not in out]))


def _draw_einsum(draw: st.DrawFn, values: list[np.ndarray], i: int) -> Step:
    """einsum over 1-3 operands: per axis a fresh letter or one of equal size already used (diagonals,
    traces, contractions), maybe '...' over leading axes, and an explicit output or NumPy's implicit one."""
    ops = (i,) + tuple(draw(st.lists(st.integers(0, len(values) - 1), max_size=2)))
    ellipsis, sizes, subs = draw(st.booleans()), {}, []
    for j in ops:
        shape = values[j].shape
        lead = draw(st.integers(0, len(shape))) if ellipsis else 0
        letters = ""
        for d in shape[lead:]:
            same = [c for c, size in sizes.items() if size == d]
            c = draw(st.sampled_from(same)) if same and draw(st.booleans()) else LETTERS[len(sizes)]
            sizes.setdefault(c, d)
            letters += c
        subs.append("..." * ellipsis + letters)
    if np.prod(list(sizes.values())) * max(values[j].size for j in ops) > 16 * MAX_ELEMENTS:
        return Step("einsum", (i,), ("..." if ellipsis else LETTERS[: values[i].ndim],))  # too many terms: a view
    spec = ",".join(subs)
    if draw(st.booleans()):
        used = draw(st.permutations(sorted(set(spec) - {"."})))
        spec += "->" + "..." * ellipsis + "".join(used[: draw(st.integers(0, len(used)))])
    return Step("einsum", ops, (spec,))


def _draw_matmul_t(draw: st.DrawFn, values: list[np.ndarray], i: int) -> Step:
    """x @ swapaxes(y) for y broadcasting with x: N-D operands with broadcast batch dims."""
    return Step("matmul_t", (i, _pick(draw, [j for j in range(len(values)) if _broadcasts(values[j], values[i])])))


def _draw_axis(draw: st.DrawFn, ndim: int) -> int | None:
    return draw(st.none() | st.integers(-ndim, ndim - 1)) if ndim else None


def _draw_statistic(draw: st.DrawFn, values: list[np.ndarray], i: int) -> Step:
    return Step("statistic", (i,), (draw(st.sampled_from(sorted(STATISTICS))), _draw_axis(draw, values[i].ndim), draw(st.booleans())))


def _draw_spread(draw: st.DrawFn, values: list[np.ndarray], i: int) -> Step:
    """var or std with ddof 0-2 (n - ddof <= 0 included: NumPy's inf or NaN)."""
    return Step("statistic", (i,), (draw(st.sampled_from(["var", "std"])), _draw_axis(draw, values[i].ndim),
                                    draw(st.booleans()), draw(st.integers(0, 2))))


def _draw_scan(draw: st.DrawFn, values: list[np.ndarray], i: int) -> Step:
    return Step("scan", (i,), (draw(st.sampled_from(sorted(SCANS))), _draw_axis(draw, values[i].ndim)))


def _draw_special(draw: st.DrawFn, values: list[np.ndarray], i: int, op: str | None = None) -> Step:
    """scipy.special's function `op` (None: any) of values[i] (and of a value broadcasting with it: SPECIAL2)."""
    op = op or draw(st.sampled_from(sorted(SPECIAL) + sorted(SPECIAL2)))
    if op in SPECIAL2:
        return Step(op, (i, _pick(draw, [j for j in range(len(values)) if _broadcasts(values[j], values[i])])))
    return Step(op, (i,))


def _draw_elementwise(draw: st.DrawFn, values: list[np.ndarray], i: int) -> Step:
    op = draw(st.sampled_from(sorted(PREDICATES) + ["nan_to_num", "round"]))
    return Step(op, (i,), (draw(st.integers(-1, 3)),) if op == "round" else ())


def _draw_shape(draw: st.DrawFn, values: list[np.ndarray], i: int) -> Step:
    """flip roll pad tile repeat moveaxis stack (rejected shapes are redrawn by the caller's typing)."""
    x = values[i]
    op = draw(st.sampled_from(["flip", "roll", "pad", "tile", "repeat", "moveaxis", "stack"]))
    axis = _draw_axis(draw, x.ndim)
    small = st.integers(0, 2)
    if op == "flip":
        return Step(op, (i,), (axis,))
    if op == "roll":
        return Step(op, (i,), (draw(st.integers(-7, 7)), axis))
    if op == "pad":
        width = tuple((draw(small), draw(small)) for _ in range(x.ndim))
        return Step(op, (i,), (width, draw(st.sampled_from(["constant", "edge", "reflect", "symmetric", "wrap"]))))
    if op == "tile":
        return Step(op, (i,), (tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))),))
    if op == "repeat":
        return Step(op, (i,), (draw(st.integers(0, 3)), axis))
    if op == "moveaxis" and x.ndim:
        return Step(op, (i,), (draw(st.integers(-x.ndim, x.ndim - 1)), draw(st.integers(-x.ndim, x.ndim - 1))))
    twins = [j for j in range(len(values)) if values[j].shape == x.shape]
    return Step("stack", (i, _pick(draw, twins)), (draw(st.integers(-x.ndim - 1, x.ndim)),))


def _draw_gather(draw: st.DrawFn, values: list[np.ndarray], i: int) -> Step:
    """np.take along an axis (or flat) or x[idx], with a constant index array in range (negative too)."""
    x = values[i]
    axis = _draw_axis(draw, x.ndim) if draw(st.booleans()) else None
    n = x.size if axis is None else x.shape[axis]
    idx = tuple(draw(st.lists(st.integers(-n, n - 1), max_size=4))) if n else ()
    if x.ndim and draw(st.booleans()):
        idx = tuple(draw(st.lists(st.integers(-x.shape[0], x.shape[0] - 1), max_size=4))) if x.shape[0] else ()
        return Step("fancy", (i,), (idx,))
    return Step("take", (i,), (idx, axis))


def _draw_made(draw: st.DrawFn, values: list[np.ndarray], i: int) -> Step:
    """x combined with an array made in the kernel from x's shape."""
    x = values[i]
    maker = draw(st.sampled_from([m for m in MAKERS if (m != "eye" or x.ndim >= 2) and (m != "arange" or x.ndim)]))
    param = (draw(st.integers(-2, 2)),) if maker == "eye" else (draw(st.sampled_from(CONSTANTS)),) if maker == "full_like" else ()
    return Step("made", (i,), (maker,) + param + (draw(st.sampled_from(["add", "subtract", "multiply", "maximum"])),))


def _draw_indexed(draw: st.DrawFn, values: list[np.ndarray], i: int) -> Step:
    """An array made from array indices, of x's shape (a 0-d or 1-d x: a matrix with its last extent), in two of three
    with INDEXED_ROWS rows; the steps after it read it (`programs`, _draw_readers)."""
    x = values[i]
    shape = x.shape if x.ndim >= 2 else (draw(st.integers(1, 5)), x.shape[-1] if x.ndim else draw(st.integers(1, 5)))
    rows = draw(st.sampled_from((None,) + INDEXED_ROWS))
    shape = shape if rows is None else shape[:-2] + (rows, shape[-1])
    maker = draw(st.sampled_from(INDEXED))
    at = draw(st.integers(-2, 2)) if maker == "eye" else draw(st.integers(-len(shape), len(shape) - 1))
    return Step("indexed", (), (maker, shape, at, x.dtype.name if x.dtype.name in FLOATS else "float32"))


def _draw_readers(draw: st.DrawFn, values: list[np.ndarray], i: int) -> list[Step]:
    """Steps reading values[i] (an `indexed` array) along each of its axes and flattened: a scan, a reduction, an
    arg-reduction or other statistic, or a sort."""
    kind = draw(st.sampled_from(READERS))
    head, tail = (), ()  # the params before and after the axis: a scan's name; a reduction's name and keepdims
    if kind == "scan":
        head = (draw(st.sampled_from(sorted(SCANS))),)
    elif kind != "sort":
        head, tail = (draw(st.sampled_from(sorted(REDUCTIONS if kind == "reduce" else STATISTICS))),), (draw(st.booleans()),)
    return [Step(kind, (i,), head + (axis,) + tail) for axis in (*range(values[i].ndim), None)]


def _draw_sort(draw: st.DrawFn, values: list[np.ndarray], i: int) -> Step:
    return Step("sort", (i,), (_draw_axis(draw, values[i].ndim),))


def _draw_setitem(draw: st.DrawFn, values: list[np.ndarray], i: int, augmented: bool = False) -> Step:
    """B = x.copy(); B[key] = y (augmented: B[key] += y, -=, *=) for a basic key and a value y broadcasting to B[key]."""
    x = values[i]
    if not x.ndim:  # x.copy() of a NumPy scalar is no array
        return Step("negative", (i,))
    key = _draw_key(draw, x.shape)
    target = x[key].shape
    fits = [j for j in range(len(values)) if _broadcasts(values[j], x[key]) and np.broadcast_shapes(values[j].shape, target) == target]
    if not fits:
        return Step("negative", (i,))
    return Step("setitem", (i, _pick(draw, fits)), (key,) + ((draw(st.sampled_from(sorted(AUGMENTED))),) if augmented else ()))


def _draw_syr2k(draw: st.DrawFn, values: list[np.ndarray], i: int) -> Step:
    """syr2k's two contractions and masked epilogue over two values of one shape and a third value."""
    twins = [(a, b) for a in range(len(values)) for b in range(len(values)) if values[a].shape == values[b].shape and values[a].ndim >= 2]
    if not twins:
        return Step("negative", (i,))
    a, b = draw(st.sampled_from(twins))
    alpha, beta = draw(st.sampled_from(CONSTANTS[:10])), draw(st.sampled_from(CONSTANTS[:10]))
    return Step("syr2k", (a, b, i), (alpha, beta))


# kind -> drawer(draw, values, i of the value to draw on): the newer surface's step kinds
DRAWERS = {"einsum": _draw_einsum, "matmul_t": _draw_matmul_t, "statistic": _draw_statistic, "statistic2": _draw_statistic,
           "elementwise": _draw_elementwise, "shape": _draw_shape, "gather": _draw_gather, "made": _draw_made,
           "setitem": _draw_setitem, "syr2k": _draw_syr2k}  # fmt: skip
NEWER_DRAWERS = {**DRAWERS, "scan": _draw_scan, "spread": _draw_spread, "special": _draw_special,
                 "update": lambda draw, values, i: _draw_setitem(draw, values, i, augmented=True),
                 "indexed": _draw_indexed, "sort": _draw_sort}  # the newest only in NEWER_KINDS: the mixed pools' CI set stays


KINDS = ("unary", "binary", "binary", "scalar", "where", "reduce", "reduce", "matmul", "products", "products", "products",
         "transpose", "reshape", "getitem", "broadcast_to", "astype", "concatenate", *DRAWERS)  # fmt: skip
NEWER_KINDS = (*NEWER_DRAWERS, "unary", "binary", "reduce", "transpose", "getitem")  # the newer surface, with a little glue
READERS = ("scan", "reduce", "statistic", "sort")  # what reads an `indexed` array (the steps after it: _draw_readers)
# test_fuzz_indexed's pool: arrays made from array indices (each read by one of READERS), among elementwise glue
INDEXED_KINDS = ("indexed", "indexed", "indexed", "unary", "binary", "scalar", "where")


# test_fuzz_special's cases: three of scipy.special's functions each (those test_fuzz_newer's pool drew first, erf erfc
# expit log_expit ndtr, stay there), among elementwise ops, constants, where and reductions
SPECIAL_GROUPS = (("gammaln", "psi", "gammainc"), ("erfinv", "ndtri", "expi"), ("i0e", "i1e", "exp1"))


def special_kinds(ops: tuple[str, ...]) -> tuple[str, ...]:
    """Step kinds for a program of scipy.special's `ops` (about half its steps) and glue."""
    glue = ("unary", "binary", "scalar", "where", "reduce", "elementwise")
    return tuple(f"special:{op}" for op in ops) * (len(glue) // len(ops) + 1) + glue


def _draw_step(draw: st.DrawFn, values: list[np.ndarray], kinds: tuple[str, ...] = KINDS) -> Step:
    """One random step over the typed values so far (typing is checked by running it on dummies)."""
    n = len(values)
    i = draw(st.integers(0, n - 1))
    x = values[i]
    kind = draw(st.sampled_from(kinds))
    if kind in NEWER_DRAWERS:
        return NEWER_DRAWERS[kind](draw, values, i)
    if kind.startswith("special:"):
        return _draw_special(draw, values, i, kind.removeprefix("special:"))
    partners = [j for j in range(n) if _broadcasts(values[j], x)]
    if kind == "unary":
        return Step(draw(st.sampled_from(sorted(UNARY))), (i,))
    if kind == "binary":
        return Step(draw(st.sampled_from(sorted(BINARY))), (i, _pick(draw, partners)))
    if kind == "scalar":
        return Step(draw(st.sampled_from(sorted(BINARY))) + "_scalar", (i,),
                    (draw(st.sampled_from(CONSTANTS)), draw(st.booleans())))
    if kind == "where":
        others = tuple(_pick(draw, partners) for _ in range(3))
        return Step("where", (i,) + others, (draw(st.sampled_from(sorted(COMPARISONS))),))
    if kind == "reduce":
        axes = draw(st.none() | st.just("int") | st.just("tuple")) if x.ndim else None
        if axes == "int":
            axes = draw(st.integers(-x.ndim, x.ndim - 1))
        elif axes == "tuple":
            axes = tuple(sorted(draw(st.sets(st.integers(0, x.ndim - 1), min_size=1))))
        return Step("reduce", (i,), (draw(st.sampled_from(sorted(REDUCTIONS))), axes, draw(st.booleans())))
    if kind == "matmul":
        mates = [j for j in range(n) if x.ndim and values[j].ndim and _matmul_ok(x, values[j])]
        if mates and draw(st.booleans()):
            return Step("matmul", (i, _pick(draw, mates)))
        return Step("gram" if x.ndim >= 2 else "gram1", (i,))
    if kind == "products":  # of two distinct values of one shape when there are such (one value: one product)
        twins = [(a, b) for a in range(n) for b in range(a + 1, n) if values[a].shape == values[b].shape and values[a].ndim]
        a, b = draw(st.sampled_from(twins)) if twins else (i, i)
        return Step("products", (a, b), (draw(st.sampled_from(PAIRINGS)), values[a].ndim == 1))
    if kind == "transpose":
        return Step("transpose", (i,), (tuple(draw(st.permutations(range(x.ndim)))),))
    if kind == "reshape":
        return Step("reshape", (i,), (_draw_reshape(draw, x.shape),))
    if kind == "getitem":
        return Step("getitem", (i,), (_draw_key(draw, x.shape),))
    if kind == "broadcast_to":
        lead = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
        return Step("broadcast_to", (i,), (lead + tuple(draw(st.integers(1, 3)) if d == 1 else d for d in x.shape),))
    if kind == "astype":
        return Step("astype", (i,), ("float32" if x.dtype == np.float64 else "float64",))
    same_rank = [j for j in range(n) if values[j].ndim == x.ndim and x.ndim]
    if not same_rank:
        return Step("negative", (i,))
    return Step("concatenate", (i, _pick(draw, same_rank)), (draw(st.integers(0, x.ndim - 1)),))


def _matmul_ok(a: np.ndarray, b: np.ndarray) -> bool:
    """NumPy accepts a @ b (any ranks: 1-D operands and broadcast batch dims included)."""
    try:
        np.matmul(a, b)
    except ValueError:
        return False
    return True


def _typed(step: Step, values: list[np.ndarray]) -> np.ndarray | None:
    """The step's result on dummy data (its shape and dtype), or None if NumPy rejects it or it is too big."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # mean of an empty slice
            out = np.asarray(OPS[step.op].run([values[i] for i in step.args], step.params))
    except (ValueError, IndexError, TypeError):
        return None
    if out.size > MAX_ELEMENTS or out.ndim > 4 or out.dtype.name not in FLOATS + NARROW:
        return None
    return out


def _appended(step: Step, steps: list[Step], values: list[np.ndarray]) -> bool:
    """Whether NumPy accepts `step` (`_typed`): then it is appended with its value."""
    out = _typed(step, values)
    if out is not None:
        steps.append(step)
        values.append(out)
    return out is not None


NARROW = ("float16", "bfloat16")  # drawn with `dtypes=WITH_NARROW`: stored narrow, each op computed in float32 (docs/accuracy.md)
WITH_NARROW = FLOATS + NARROW


@st.composite
def programs(draw: st.DrawFn, max_steps: int = 7, kinds: tuple[str, ...] = KINDS, dtypes: tuple[str, ...] = FLOATS) -> Program:
    """A random program: 1-3 arguments of `dtypes` of mutually broadcastable shapes (size-0 and
    size-1 dims included; in half the programs two or three matrices or stacks of one shape), up to
    max_steps steps of the given kinds, and 1-3 returned values (the last, the largest, maybe one more). An `indexed`
    array is read at once along each axis by one of READERS (extra steps), whose values are returned too."""
    n_inputs = draw(st.integers(1, 3))
    if draw(st.booleans()):  # two or three of one shape: `products` of them are contractions with equal tiles
        n_inputs = max(2, n_inputs)
        shapes = (draw(hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=5)),) * n_inputs
    else:
        shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=n_inputs, min_dims=0, max_dims=3, min_side=0, max_side=5)).input_shapes
    inputs = tuple((tuple(s), draw(st.sampled_from(dtypes))) for s in shapes)
    values = [np.ones(shape, dtype) for shape, dtype in inputs]
    steps: list[Step] = []
    read: list[int] = []  # the values reading an `indexed` array
    for _ in range(draw(st.integers(1, max_steps))):
        step = _draw_step(draw, values, kinds)
        if _appended(step, steps, values) and step.op == "indexed":  # read at once by READERS' steps, their values returned
            for reader in _draw_readers(draw, values, len(values) - 1):
                if _appended(reader, steps, values):
                    read.append(len(values) - 1)
    if not steps:
        steps.append(Step("negative", (0,)))
        values.append(-values[0])
    last = len(values) - 1
    largest = max(range(n_inputs, last + 1), key=lambda i: values[i].size)
    extra = draw(st.lists(st.integers(n_inputs, last), max_size=1))
    return Program(inputs, tuple(steps), tuple(dict.fromkeys([last, largest] + extra + read)))


# --- drawing data -------------------------------------------------------------------------------


def finfo(dtype: Any) -> Any:
    """np.finfo of a float dtype, bfloat16 (which NumPy's does not know) included."""
    return ml_dtypes.finfo(np.dtype(dtype))


def extremes(dtype: str, finite: bool) -> list[float]:
    """Values that break careless code: signed zeros, denormals, the smallest normal, huge magnitudes."""
    info = finfo(dtype)
    tiny, sub, big = float(info.tiny), float(info.smallest_subnormal), float(info.max)
    values = [0.0, -0.0, sub, -sub, 3 * sub, tiny, -tiny, tiny / 2, big, -big, big / 4, min(1e15, big / 2), -min(1e15, big / 2)]
    return values if finite else values + [np.inf, -np.inf, np.nan]


def sprinkle(a: np.ndarray, seed: int, finite: bool) -> np.ndarray:
    """a with about one element in eight replaced by an extreme value."""
    if a.dtype.name not in FLOATS + NARROW or not a.size:
        return a
    rng = np.random.default_rng(seed)
    pool = np.array(extremes(a.dtype.name, finite), dtype=a.dtype)
    out = a.copy()
    mask = rng.random(a.shape) < 0.125
    out[mask] = rng.choice(pool, size=int(mask.sum()))
    return out


@st.composite
def arguments(draw: st.DrawFn, program: Program, finite: bool = False) -> list[np.ndarray]:
    """Data for the program's arguments in random layouts: [-10, 10] with ties and signed zeros,
    extremes, and (unless finite) NaN and +-inf."""
    args = []
    for shape, dtype in program.inputs:
        seed = draw(seeds)
        a = make_array(seed, dtype, shape, special=not finite)
        if draw(st.booleans()):
            a = sprinkle(a, seed + 1, finite)
        args.append(with_layout(a, draw(layouts)))
    return args

