"""Dicts, lists and tuples of arrays (pytrees, as JAX calls them) as kernel arguments and results.

An argument that is a dict, or a list or tuple holding an array or a dict at any depth, is flattened
into its leaves (arrays and scalars), each a kernel argument of its own named by its path
(`params['w']`, `layers[0]`); the kernel's function receives the same structure rebuilt from the
traced leaves. A list or tuple of numbers only stays one argument (an array, as np.asarray makes it).
A result that is a dict, a list or a tuple holding one comes back in its structure. A structure is a
hashable value (`Tree`): part of the compilation's key, so another structure compiles again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

Tree = Any  # None: a leaf; ("dict", keys, children), ("list", children) or ("tuple", children)


def is_tree(value: Any) -> bool:
    """Whether `value` is flattened: a dict, or a list/tuple holding an array, dict or such list at any depth."""
    if isinstance(value, dict):
        return True
    return isinstance(value, (list, tuple)) and any(isinstance(v, np.ndarray) or is_tree(v) for v in value)


def flatten(value: Any, path: str, node: Callable[[Any], bool] = is_tree) -> tuple[Tree, list[str], list[Any]]:
    """The structure of `value` (dicts, lists and tuples for which `node` holds are inner nodes), and the path
    and value of each of its leaves, in order."""
    if not (isinstance(value, (dict, list, tuple)) and node(value)):
        return None, [path], [value]
    items = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
    parts = [flatten(v, f"{path}[{k!r}]", node) for k, v in items]
    children = tuple(p[0] for p in parts)
    tree = ("dict", tuple(value), children) if isinstance(value, dict) else (type(value).__name__, children)
    return tree, [n for p in parts for n in p[1]], [v for p in parts for v in p[2]]


def unflatten(tree: Tree, leaves: Iterator[Any]) -> Any:
    """The value of structure `tree` whose leaves are the next ones of `leaves`."""
    if tree is None:
        return next(leaves)
    if tree[0] == "dict":
        return {k: unflatten(t, leaves) for k, t in zip(tree[1], tree[2], strict=True)}
    children = [unflatten(t, leaves) for t in tree[1]]
    return children if tree[0] == "list" else tuple(children)


def result_tree(result: Any) -> tuple[Tree, Any]:
    """(structure, flat tuple of leaves) of a kernel function's result that is a dict, a list or a tuple holding
    one of these; (None, result) for one array or a flat tuple of arrays (returned as they are)."""
    containers = (dict, list, tuple)
    if isinstance(result, (dict, list)) or (isinstance(result, tuple) and any(isinstance(r, containers) for r in result)):
        tree, _, leaves = flatten(result, "", lambda v: True)
        return tree, tuple(leaves)
    return None, result
