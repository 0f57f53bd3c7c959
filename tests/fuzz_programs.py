"""Random well-typed NumPy programs for the differential fuzzer (tests/test_fuzz.py).

A `Program` is a small DAG: arguments (shape, dtype), then steps, each one NumPy op applied to
earlier values, then the values it returns. Calling it runs the steps with NumPy (or on tracers,
which is how `@kernel` compiles it); `source()` prints it as the plain function it stands for,
which is what a failure report and a regression test show. `programs()` draws programs and
`arguments()` draws data for one, reusing tests/strategies.py's make_array and with_layout.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
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
            lines.append(f"    {self.name(len(self.inputs) + k)} = {text}")
        lines.append(f"    return {', '.join(self.name(i) for i in self.outputs)}")
        return "\n".join(lines)


# --- drawing programs -------------------------------------------------------------------------

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


def _draw_step(draw: st.DrawFn, values: list[np.ndarray]) -> Step:
    """One random step over the typed values so far (typing is checked by running it on dummies)."""
    n = len(values)
    i = draw(st.integers(0, n - 1))
    x = values[i]
    kind = draw(st.sampled_from(["unary", "binary", "binary", "scalar", "where", "reduce", "reduce",
                                 "matmul", "products", "products", "products", "transpose", "reshape", "getitem", "broadcast_to",
                                 "astype", "concatenate"]))
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
    """NumPy accepts a @ b and it is in the supported surface (no 3-D @ 1-D or 1-D @ 3-D)."""
    if {a.ndim, b.ndim} == {1, 3}:
        return False
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
    if out.size > MAX_ELEMENTS or out.ndim > 4 or out.dtype.name not in FLOATS:
        return None
    return out


@st.composite
def programs(draw: st.DrawFn, max_steps: int = 7) -> Program:
    """A random program: 1-3 float32/float64 arguments of mutually broadcastable shapes (size-0 and
    size-1 dims included; in half the programs two or three matrices or stacks of one shape), up to
    max_steps steps, and 1-3 returned values (the last, the largest, maybe one more)."""
    n_inputs = draw(st.integers(1, 3))
    if draw(st.booleans()):  # two or three of one shape: `products` of them are contractions with equal tiles
        n_inputs = max(2, n_inputs)
        shapes = (draw(hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=5)),) * n_inputs
    else:
        shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=n_inputs, min_dims=0, max_dims=3, min_side=0, max_side=5)).input_shapes
    inputs = tuple((tuple(s), draw(st.sampled_from(FLOATS))) for s in shapes)
    values = [np.ones(shape, dtype) for shape, dtype in inputs]
    steps: list[Step] = []
    for _ in range(draw(st.integers(1, max_steps))):
        step = _draw_step(draw, values)
        out = _typed(step, values)
        if out is not None:
            steps.append(step)
            values.append(out)
    if not steps:
        steps.append(Step("negative", (0,)))
        values.append(-values[0])
    last = len(values) - 1
    largest = max(range(n_inputs, last + 1), key=lambda i: values[i].size)
    extra = draw(st.lists(st.integers(n_inputs, last), max_size=1))
    return Program(inputs, tuple(steps), tuple(dict.fromkeys([last, largest] + extra)))


# --- drawing data -------------------------------------------------------------------------------


def extremes(dtype: str, finite: bool) -> list[float]:
    """Values that break careless code: signed zeros, denormals, the smallest normal, huge magnitudes."""
    info = np.finfo(dtype)
    tiny, sub, big = float(info.tiny), float(info.smallest_subnormal), float(info.max)
    values = [0.0, -0.0, sub, -sub, 3 * sub, tiny, -tiny, tiny / 2, big, -big, big / 4, 1e15, -1e15]
    return values if finite else values + [np.inf, -np.inf, np.nan]


def sprinkle(a: np.ndarray, seed: int, finite: bool) -> np.ndarray:
    """a with about one element in eight replaced by an extreme value."""
    if a.dtype.kind != "f" or not a.size:
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

