"""`python -m egglog_tensor inspect FILE.py:FUNC --arg NAME=SPEC ...`: any stage of a kernel's compilation,
outside a notebook.

An argument SPEC is an array `1024x1024:float32` (shape `x`-separated; the dtype NumPy's float64 when
left out, as in `64x64` or `64:`; `:F` after the dtype for Fortran order), a 0-d array `:float32`, a
NumPy scalar `float32`, or a Python value `5`, `0.5`, `True`, `(2, 3)`. Array contents are drawn at
random: they matter only to `--measure`.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .kernel import Kernel, kernel

_ARRAY = re.compile(r"^(?P<shape>\d+(x\d+)*)?:(?P<dtype>\w+)?(:(?P<order>[CF]))?$|^(?P<bare>\d+(x\d+)+)$")  # (a bare 64 is the int)


class CliError(Exception):
    """A bad command line: printed as one line, exit status 2."""


def load_function(target: str) -> Callable[..., Any]:
    """FILE.py:FUNC or package.module:FUNC -> the function (or Kernel) named."""
    where, sep, name = target.rpartition(":")
    if not sep or not name:
        raise CliError(f"{target!r}: expected FILE.py:FUNC or module:FUNC")
    if where.endswith(".py") or os.sep in where:
        path = Path(where)
        if not path.is_file():
            raise CliError(f"{where}: no such file")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.path.insert(0, str(path.parent.resolve()))  # (its own imports of neighbouring files)
        spec.loader.exec_module(module)
    else:
        try:
            module = importlib.import_module(where)
        except ImportError as e:
            raise CliError(f"{where}: {e}") from None
    fn = getattr(module, name, None)
    if fn is None or not callable(fn):
        raise CliError(f"{where} has no function {name!r}")
    return fn


def parse_value(spec: str, rng: np.random.Generator) -> Any:
    """One argument from its SPEC (see the module docstring)."""
    m = _ARRAY.match(spec)
    if m:
        shape = tuple(int(d) for d in (m["shape"] or m["bare"] or "").split("x") if d)
        dtype = _dtype(m["dtype"] or "float64")
        return _draw(shape, dtype, rng, m["order"] or "C")
    if re.fullmatch(r"[a-z]+\d*", spec) and spec not in ("True", "False"):
        return _dtype(spec).type(1)
    try:
        return ast.literal_eval(spec)
    except (ValueError, SyntaxError):
        raise CliError(f"{spec!r}: not an argument spec (1024x1024:float32, :float32, float32, or a Python value)") from None


def _dtype(name: str) -> np.dtype:
    try:
        return np.dtype(name)
    except TypeError:
        raise CliError(f"{name!r}: not a NumPy dtype") from None


def _draw(shape: tuple[int, ...], dtype: np.dtype, rng: np.random.Generator, order: str) -> np.ndarray:
    if dtype.kind == "f":
        data = rng.standard_normal(shape)
    elif dtype.kind == "b":
        data = rng.random(shape) < 0.5
    else:
        data = rng.integers(0, 10, shape)
    return np.asarray(data, dtype=dtype, order=order)


def parse_args(pairs: list[str], rng: np.random.Generator) -> dict[str, Any]:
    """NAME=SPEC pairs -> keyword arguments."""
    out = {}
    for pair in pairs:
        name, sep, spec = pair.partition("=")
        if not sep or not name.isidentifier():
            raise CliError(f"--arg {pair!r}: expected NAME=SPEC, e.g. A=1024x1024:float32")
        out[name] = parse_value(spec, rng)
    return out


def add_parser(sub: Any) -> None:
    """The `inspect` subcommand's arguments."""
    p = sub.add_parser("inspect", help="compile a function and print a stage (or all of them)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("function", help="FILE.py:FUNC or package.module:FUNC (a plain function or an @et.kernel)")
    p.add_argument("--arg", action="append", default=[], metavar="NAME=SPEC", help="one per parameter, e.g. A=1024x1024:float32")
    shown = p.add_mutually_exclusive_group()
    shown.add_argument("--stage", help="print this stage's text (default: the summary)")
    shown.add_argument("--list-stages", action="store_true", help="print the stage names in order")
    shown.add_argument("--all", metavar="OUT_DIR", help="write every stage to OUT_DIR/NN-stage.txt")
    shown.add_argument("--explain", action="store_true", help="what the optimizer and the lowering decided, in sentences")
    p.add_argument("--target", default=None, help="cpu or cpu-openmp (default: the kernel's own, else cpu)")
    p.add_argument("--fastmath", nargs="?", const=True, default=False, metavar="FLAGS",
                   help="also run the rewrites that are not exact under IEEE-754: all, or LLVM's flags named (reassoc,nsz,...)")
    p.add_argument("--measure", action="store_true", help="also time calls beside the cost model's estimate")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto", help="syntax colour (auto: when stdout is a terminal)")


def run(args: argparse.Namespace) -> int:
    """Compile the function for the arguments and print what was asked."""
    fn = load_function(args.function)
    base = fn.fn if isinstance(fn, Kernel) else fn
    options = {"target": args.target} if args.target else {}
    if isinstance(fn, Kernel) and not args.target:
        options["target"] = fn.options.target
    k = kernel(base, fastmath=args.fastmath or (isinstance(fn, Kernel) and fn.options.fastmath), **options)
    kwargs = parse_args(args.arg, np.random.default_rng(0))
    comp = k.inspect(**kwargs)
    if args.measure:
        k.measure(**kwargs)
    if args.list_stages:
        print("\n".join(comp.stages))
    elif args.explain:
        print(comp.explain())
    elif args.all:
        out = Path(args.all)
        out.mkdir(parents=True, exist_ok=True)
        for i, name in enumerate(comp.stages):
            (out / f"{i:02d}-{name}.txt").write_text(comp.stage(name))
        (out / "summary.txt").write_text(comp.summary())
        print(f"{len(comp.stages)} stages and summary.txt written to {out}")
    else:
        text = comp.stage(args.stage) if args.stage else comp.summary()
        color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty() and not os.environ.get("NO_COLOR"))
        if color and args.stage:
            from .highlight import terminal

            text = terminal(text, args.stage)
        print(text)
    return 0
