"""The text of a program's term (the `traced` and `extracted` stages, and the on-disk cache's key) at any depth.

egglog's pretty printer recurses about six Python frames per level of a term, so a deep program
(an unrolled loop) would reach Python's recursion limit. Up to PRETTY_DEPTH levels its text is
egglog's; deeper, it is a listing in the same syntax, one line per node, printed without recursion.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from .graph import Node, depth, topological
from .ir import CONSTANT_TEXT, Program
from .ops import OPS

PRETTY_DEPTH = 24  # levels egglog's printer is given: ~150 frames, well inside any recursion limit in use

_OPERATORS = {"__add__": "+", "__sub__": "-", "__mul__": "*", "__truediv__": "/", "__floordiv__": "//",
              "__mod__": "%", "__pow__": "**", "__matmul__": "@"}
_CLASS_METHODS = ("arg", "const", "iota")


def program_text(outputs: list[Node], term: Callable[[], Program], pretty: Callable[[Program], str]) -> str:
    """The program's text: `pretty(term())` (egglog's) when shallow enough, else `listing(outputs)`."""
    return pretty(term()) if depth(outputs) <= PRETTY_DEPTH else listing(outputs)


def extracted_text(outputs: list[Node], term: Callable[[], Program], pretty: Callable[[Program], str]) -> str:
    """program_text of an extracted program, its int Vecs written `Vec(...)` as egglog writes the terms it extracts."""
    return program_text(outputs, term, pretty).replace("Vec[i64](", "Vec(")


def listing(outputs: list[Node]) -> str:
    """One line `_Tensor_<i> = <term over earlier names>` per node, inputs first, then the Program."""
    names: dict[int, str] = {}
    lines = []
    for node in topological(outputs):
        name = f"_Tensor_{len(names) + 1}"
        lines.append(f"{name} = {_call(node, names)}")
        names[id(node)] = name
    lines.append(f"Program(Vec[Tensor]({', '.join(names[id(o)] for o in outputs)}))")
    return "\n".join(lines)


def _call(node: Node, names: dict[int, str]) -> str:
    """One node's term over its inputs' names, in the syntax of egglog_tensor.ir's constructors."""
    args = [names[id(i)] for i in node.inputs]
    attrs = [_attr(a) for a in node.attrs]
    term = OPS[node.op].term
    if len(node.attrs) > len(OPS[node.op].attrs):  # a reduction with its lanes chosen
        term = f"Tensor.{node.op}_lanes"
    if node.op == "concat":
        return f"concat(Vec[Tensor]({', '.join(args)}), {', '.join(attrs)})"
    method = term.removeprefix("Tensor.")
    if method == term:
        return f"{term}({', '.join(args + attrs)})"
    if method in _OPERATORS:
        return f"{args[0]} {_OPERATORS[method]} {args[1]}"
    if method == "__neg__":
        return f"-{args[0]}"
    if method in _CLASS_METHODS:
        return f"{term}({', '.join(attrs)})"
    return f"{args[0]}.{method}({', '.join(args[1:] + attrs)})"


def _attr(value: object) -> str:
    """An attribute as egglog_tensor.ir writes it: Vec[i64](...), DType.x, Layout.x, a float, a string."""
    if isinstance(value, tuple):
        return f"Vec[i64]({', '.join(map(str, value))})" if value else "Vec[i64].empty()"
    if isinstance(value, str):
        return CONSTANT_TEXT.get(value) or json.dumps(value)
    return repr(value)
