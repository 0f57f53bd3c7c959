"""np.einsum, lowered at trace time: repeated indices as diagonal views, indices used by one operand
summed first, then pairwise contractions (broadcast multiplies, or matmuls of the operands
transposed and reshaped to (batch, free, summed) matrices, so `einsum("ij,jk->ik", a, b)` is the very
term of `a @ b`), and a final transpose to the output order.

With three or more operands NumPy leaves the pairwise order unspecified (`optimize=` is accepted and
ignored). A (batched) matrix chain is traced left to right as `einsum_matmul` products, which the
e-graph reassociates without fast math (rulesets/algebra.py's `einsum-order`) and the cost model
orders. Any other form gets its order here, by a dynamic program over the static shapes that
minimizes the products' total loop size.
"""

from __future__ import annotations

import itertools
import math
import string
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import TracingError, UnsupportedError
from ..graph import DTYPES, NARROW_FLOATS
from .core import Tracer, as_tracer, fail, implements, lift, result, trace_of
from .linalg import matmul, multiply, strong
from .reductions import sum_
from .shapes import broadcast_to, diagonal, reshape, transpose

LETTERS = string.ascii_letters
EXHAUSTIVE = 10  # operands up to which the order is the optimum over all pairwise trees (3^n steps); greedy beyond


@dataclass(frozen=True)
class Term:
    """An operand or intermediate of the contraction: its value and one index label per axis."""

    value: Tracer
    labels: tuple[str, ...]


@implements("einsum")
def einsum(*operands: Any, out: Any = None, optimize: Any = False, **unsupported: Any) -> Tracer:
    """np.einsum(subscripts, *operands) or the interleaved form (op, sublist, ..., [output sublist])."""
    if unsupported:  # (out=: tracing/outs.py)
        raise fail(UnsupportedError, f"np.einsum: {', '.join(sorted(unsupported))}= is not supported (out= and optimize= are)")
    subscripts, arrays = split_arguments(operands)
    trace = trace_of(arrays)
    values = [as_tracer(trace, strong(v)) for v in arrays]
    dtype = np.result_type(*(v.dtype for v in values)).name
    if dtype not in DTYPES:
        raise fail(UnsupportedError, f"np.einsum on dtype {dtype} is not supported")
    inputs, output = parse(subscripts, [v.ndim for v in values])
    work = "float32" if dtype in NARROW_FLOATS else dtype  # NumPy's half einsum multiplies and sums in float32
    terms = [collapse_repeats(Term(result(trace, lift(trace, v, work)), labels), n)
             for n, (v, labels) in enumerate(zip(values, inputs, strict=True))]
    sizes = label_sizes(terms)
    terms = [Term(broadcast_to(t.value, tuple(sizes[l] for l in t.labels)), t.labels) for t in terms]
    if any(sizes[l] == 0 for l in sizes if l not in output):  # a sum over no terms: zeros, whatever NaN or inf the rest holds
        return broadcast_to(result(trace, lift(trace, np.zeros((), dtype)[()], dtype)), tuple(sizes[l] for l in output))
    if len(terms) > 2 and dtype != "bool" and is_chain([t.labels for t in terms], output):
        return chain(terms)
    for left, right in contraction_order([set(t.labels) for t in terms], set(output), sizes):
        a, b = terms[left], terms[right]
        rest = [t for i, t in enumerate(terms) if i not in (left, right)]
        keep = set(output).union(*(t.labels for t in rest))
        terms = [*rest, contract_pair(a, b, keep)]
    (final,) = terms
    final = sum_out(final, set(output))
    return transpose(final.value, [final.labels.index(l) for l in output]).astype(dtype, copy=False)


@implements("einsum_path")
def einsum_path(*operands: Any, optimize: Any = "greedy", einsum_call: bool = False) -> tuple[list, str]:
    """np.einsum_path: NumPy's own, on stand-ins of the traced operands' shapes and dtypes (a path depends on nothing else)."""
    stand_ins = [np.broadcast_to(np.zeros((), v.dtype), v.shape) if isinstance(v, Tracer) else v for v in operands]
    try:
        return np.einsum_path(*stand_ins, optimize=optimize, einsum_call=einsum_call)
    except (ValueError, TypeError, KeyError) as e:
        raise fail(TracingError, f"np.einsum_path: {e}") from None


def split_arguments(operands: Sequence[Any]) -> tuple[str, list[Any]]:
    """The subscripts string and the arrays, from either calling form of np.einsum."""
    if not operands:
        raise fail(TracingError, "np.einsum: no subscripts and no operands given")
    if isinstance(operands[0], str):
        return operands[0], list(operands[1:])
    pairs, output = (operands[:-1], "->" + sublist(operands[-1])) if len(operands) % 2 else (operands, "")
    return ",".join(sublist(s) for s in pairs[1::2]) + output, list(pairs[0::2])


def sublist(indices: Any) -> str:
    """One interleaved-form sublist (ints 0-51 and Ellipsis) as subscript letters."""
    try:
        return "".join("..." if i is Ellipsis else LETTERS[int(i)] for i in indices)
    except (TypeError, ValueError, IndexError):
        raise fail(TracingError, f"np.einsum: subscript list {indices!r} must hold ints in [0, 52) and Ellipsis") from None


def parse(subscripts: str, ranks: Sequence[int]) -> tuple[list[tuple[str, ...]], tuple[str, ...]]:
    """Each operand's labels and the output's, `...` expanded to labels of its own (aligned on the
    right, as NumPy broadcasts them); an implicit output is the ellipsis, then the labels used once, sorted."""
    text = subscripts.replace(" ", "")
    explicit = "->" in text
    left, _, right = text.partition("->")
    parts = left.split(",")
    if len(parts) != len(ranks):
        more = "more" if len(ranks) > len(parts) else "fewer"
        raise fail(TracingError, f"np.einsum: {more} operands ({len(ranks)}) than the subscripts '{subscripts}' specify ({len(parts)})")
    for what, part in [*((f"operand {n}", p) for n, p in enumerate(parts)), ("the output", right)]:
        check_letters(part, what)
    spans = [ellipsis_span(p, rank, n) for n, (p, rank) in enumerate(zip(parts, ranks, strict=True))]
    width = max(spans, default=0)
    inputs = [expand(p, span, width) for p, span in zip(parts, spans, strict=True)]
    dots = tuple(f"...{i}" for i in range(width))
    if not explicit:
        counts = [l for labels in inputs for l in labels if l not in dots]
        return inputs, dots + tuple(sorted(l for l in set(counts) if counts.count(l) == 1))
    if width and "..." not in right:
        raise fail(TracingError, f"np.einsum: the output '{right}' has no '...' for the operands' broadcast dimensions")
    output = expand(right, width, width)
    if len(set(output)) != len(output):
        raise fail(TracingError, f"np.einsum: the output '{right}' holds an index more than once")
    missing = sorted(set(output) - {l for labels in inputs for l in labels})
    if missing:
        raise fail(TracingError, f"np.einsum: output index '{missing[0]}' appears in no operand")
    return inputs, output


def ellipsis_span(part: str, rank: int, n: int) -> int:
    """How many axes of operand n its `...` stands for (TracingError when the rank does not fit)."""
    letters = len(part.replace("...", ""))
    if "..." not in part:
        if letters != rank:
            raise fail(TracingError, f"np.einsum: operand {n} has {rank} dimensions but its subscripts '{part}' name {letters}")
        return 0
    if letters > rank:
        raise fail(TracingError, f"np.einsum: operand {n} has {rank} dimensions but its subscripts '{part}' name {letters} and '...'")
    return rank - letters


def check_letters(part: str, what: str) -> None:
    """TracingError for a subscript string of anything but letters and one `...`."""
    head, _, tail = part.partition("...")
    if "." in head + tail:
        raise fail(TracingError, f"np.einsum: {what}'s subscripts '{part}' have a '.' outside one '...'")
    for c in head + tail:
        if c not in LETTERS:
            raise fail(TracingError, f"np.einsum: invalid subscript '{c}' in {what}'s subscripts '{part}' (subscripts must be letters)")


def expand(part: str, span: int, width: int) -> tuple[str, ...]:
    """The labels of one subscript string, its `...` as the last `span` of `width` ellipsis labels."""
    head, dots, tail = part.partition("...")
    return tuple(head) + tuple(f"...{i}" for i in range(width - span, width)) * bool(dots) + tuple(tail)


def collapse_repeats(term: Term, n: int) -> Term:
    """An index repeated within operand n (`ii`) as its diagonal (a view), until each label is on one axis."""
    labels = term.labels
    for label in labels:
        if labels.count(label) > 1:
            i = labels.index(label)
            j = labels.index(label, i + 1)
            x = term.value
            if x.shape[i] != x.shape[j]:
                raise fail(TracingError, f"np.einsum: operand {n}'s axes for the repeated index '{label}' "
                                         f"differ in size ({x.shape[i]} != {x.shape[j]})")
            rest = tuple(l for k, l in enumerate(labels) if k not in (i, j))
            return collapse_repeats(Term(diagonal(x, 0, i, j), (*rest, label)), n)
    return term


def label_sizes(terms: Sequence[Term]) -> dict[str, int]:
    """The extent of each label: equal in every operand, or 1 where an operand broadcasts."""
    sizes: dict[str, int] = {}
    where: dict[str, int] = {}
    for n, term in enumerate(terms):
        for label, size in zip(term.labels, term.value.shape, strict=True):
            seen = sizes.get(label, 1)
            if seen != 1 and size not in (1, seen):
                name = "a '...' dimension" if label.startswith("...") else f"index '{label}'"
                raise fail(TracingError, f"np.einsum: {name} has size {seen} in operand {where[label]} but {size} in operand {n}")
            if seen == 1 and (size != 1 or label not in sizes):
                sizes[label], where[label] = size, n
    return sizes


def sum_out(term: Term, keep: set[str]) -> Term:
    """`term` with the labels not in `keep` summed (in the einsum's own dtype, as NumPy: int32 stays int32)."""
    axes = tuple(i for i, l in enumerate(term.labels) if l not in keep)
    if not axes:
        return term
    total = sum_(term.value, axes, term.value.dtype)
    return Term(total, tuple(l for l in term.labels if l in keep))


def contract_pair(a: Term, b: Term, keep: set[str]) -> Term:
    """The product of two terms with the labels in neither `keep` summed: labels of both that stay are
    the batch, those summed the contracted dim of one matmul ((batch, free a, summed) @ (batch, summed, free b));
    with nothing summed, or a batch and one side with no free label (a batched matvec, which as a
    batch_matmul of one column ran 3x slower), a broadcast multiply, summed."""
    a, b = sum_out(a, keep | set(b.labels)), sum_out(b, keep | set(a.labels))
    shared = [l for l in a.labels if l in b.labels]
    batch, summed = [l for l in shared if l in keep], [l for l in shared if l not in keep]
    free_a, free_b = [l for l in a.labels if l not in shared], [l for l in b.labels if l not in shared]
    x = transpose(a.value, [a.labels.index(l) for l in (*batch, *free_a, *summed)])
    y = transpose(b.value, [b.labels.index(l) for l in (*batch, *summed, *free_b)])
    if not summed or (batch and not (free_a and free_b)):  # (batch, free a, summed, 1...) * (batch, 1..., summed, free b)
        x = reshape(x, (*x.shape, *(1,) * len(free_b)))
        y = reshape(y, (*y.shape[: len(batch)], *(1,) * len(free_a), *y.shape[len(batch) :]))
        return sum_out(Term(multiply(x, y), (*batch, *free_a, *summed, *free_b)), keep)
    extent = {l: s for t in (a, b) for l, s in zip(t.labels, t.value.shape, strict=True)}
    nb, m, k, n = [math.prod(extent[l] for l in group) for group in (batch, free_a, summed, free_b)]
    lead = (nb,) if batch else ()
    x = reshape(x, (*lead, m, k) if batch or free_a else (k,))
    y = reshape(y, (*lead, k, n) if batch or free_b else (k,))
    labels = (*batch, *free_a, *free_b)
    return Term(reshape(matmul(x._trace, x._node, y._node), tuple(extent[l] for l in labels)), labels)


def is_chain(inputs: Sequence[tuple[str, ...]], output: tuple[str, ...]) -> bool:
    """Whether the einsum is a (batched) matrix chain, `b?ij,b?jk,...,b?yz->b?iz` (an unbatched chain may
    start or end with a vector): then each product is a matmul of the last one's result, and the
    e-graph chooses the order."""
    batch = inputs[0][:-2] if len(inputs[0]) == 3 else ()
    cores = [labels[len(batch):] for labels in inputs]
    ends = (1, 2) if not batch else (2,)
    shaped = all(len(c) == 2 for c in cores[1:-1]) and len(cores[0]) in ends and len(cores[-1]) in ends
    if not shaped or any(labels[: len(batch)] != batch for labels in inputs):
        return False
    free = (*cores[0][:-1], *cores[-1][1:])
    linked = all(a[-1] == b[0] for a, b in itertools.pairwise(cores))
    distinct = len({l for c in cores for l in c}) == len(cores) - 1 + len(free)
    return linked and distinct and output == (*batch, *free)


def chain(terms: Sequence[Term]) -> Tracer:
    """A matrix chain's products left to right as `einsum_matmul`s, which the e-graph reassociates
    without fast math (NumPy leaves einsum's order unspecified) into the cheapest order."""
    value = terms[0].value
    for term in terms[1:]:
        value = result(value._trace, value._trace.make("einsum_matmul", (value._node, term.value._node)))
    return value


def contraction_order(operands: Sequence[set[str]], output: set[str], sizes: dict[str, int]) -> list[tuple[int, int]]:
    """The pairwise contractions (positions in the list of remaining terms, the result appended) of
    least total loop size: the optimum over every tree up to EXHAUSTIVE operands, else greedy."""
    if len(operands) <= EXHAUSTIVE:
        return tree_steps(optimal_tree(operands, output, sizes), len(operands))
    return greedy_steps(list(operands), output, sizes)


def pair_cost(a: set[str], b: set[str], sizes: dict[str, int]) -> int:
    """The loop size of contracting terms of labels a and b: the product of every label's extent."""
    return math.prod(sizes[l] for l in a | b)


def optimal_tree(operands: Sequence[set[str]], output: set[str], sizes: dict[str, int]) -> Any:
    """The contraction tree (an operand index or a pair of trees) of least total cost, over subsets."""
    n = len(operands)
    full = (1 << n) - 1
    labels = [set().union(*(operands[i] for i in range(n) if mask >> i & 1)) for mask in range(full + 1)]
    kept = [labels[mask] & (output | labels[full & ~mask]) for mask in range(full + 1)]
    best: dict[int, tuple[int, Any]] = {1 << i: (0, i) for i in range(n)}
    for mask in sorted(range(1, full + 1), key=int.bit_count):
        if mask in best:
            continue
        low = mask & -mask  # splits with the lowest operand on the left: each pair once
        options = []
        part = (mask - 1) & mask
        while part:
            if part & low:
                rest = mask & ~part
                cost = best[part][0] + best[rest][0] + pair_cost(kept[part], kept[rest], sizes)
                options.append((cost, (best[part][1], best[rest][1])))
            part = (part - 1) & mask
        best[mask] = min(options, key=lambda option: option[0])
    return best[full][1]


def tree_steps(tree: Any, n: int) -> list[tuple[int, int]]:
    """The pairwise steps computing `tree`: positions in the list of terms, each result appended."""
    terms: list[Any] = list(range(n))
    steps: list[tuple[int, int]] = []

    def visit(node: Any) -> Any:
        if isinstance(node, int):
            return node
        left, right = visit(node[0]), visit(node[1])
        i, j = terms.index(left), terms.index(right)
        steps.append((i, j))
        terms.remove(left)
        terms.remove(right)
        terms.append(node)
        return node

    visit(tree)
    return steps


def greedy_steps(operands: list[set[str]], output: set[str], sizes: dict[str, int]) -> list[tuple[int, int]]:
    """Pairwise steps contracting, each time, the cheapest pair of the remaining terms."""
    steps = []
    while len(operands) > 1:
        def cost(pair: tuple[int, int]) -> int:
            return pair_cost(operands[pair[0]], operands[pair[1]], sizes)

        i, j = min(itertools.combinations(range(len(operands)), 2), key=cost)
        rest = [t for k, t in enumerate(operands) if k not in (i, j)]
        keep = output.union(*rest)
        operands = [*rest, (operands[i] | operands[j]) & keep]
        steps.append((i, j))
    return steps
