"""DAG-aware extraction, in Python over the e-graph's serialized e-nodes: no recursion, any depth.

Each e-class gets the e-node whose program below is cheapest, where a program's price counts every
e-class in it once (greedy DAG extraction): a value read by five stencil neighbours is computed once
if materialized, so its kernel is paid once, not once per reader. Fusing a value into its readers
stays a real alternative: a fused value adds its flops to each reader's kernel (egglog_tensor/cost.py
prices a node alone, from its children's own Costs, with `TensorCostModel(target, local=True)`).

The e-classes below a choice are a bitset (a Python int over e-class numbers), so a choice is never
one that reaches its own e-class (extraction stays acyclic). Changes propagate from children to
parents with a work list until nothing changes or `budget` e-node evaluations are spent (reported).
"""

from __future__ import annotations

import json
import warnings
from collections import deque
from dataclasses import dataclass, replace
from typing import Any

from egglog import EGraph, get_callable_fn

from .cost import Cost, TensorCostModel
from .errors import TracingError
from .graph import Builder, Node
from .ir import DTYPE_TERMS, LAYOUT_TERMS, OP_OF

_TENSOR = "egglog_tensor.ir.Tensor"
_PROGRAM = "egglog_tensor.ir.Program"


@dataclass(frozen=True)
class _Enode:
    """One serialized e-node: its op (a registry op name, or the egg name of anything else) and children's e-classes."""

    op: str
    tensor: bool  # an op of the tensor language (a Tensor e-node we can compile)
    kids: tuple[int, ...]


@dataclass(frozen=True)
class _Choice:
    """An e-class's chosen e-node, priced alone (`cost`), the e-classes below it (a bitset) and the sum
    of their own closed kernel times (`under`)."""

    enode: int
    cost: Cost
    below: int
    under: float

    @property
    def total(self) -> float:
        return self.under + self.cost.total


@dataclass(frozen=True)
class Extracted:
    """The extracted program's Nodes, its DAG price (ns), e-node evaluations spent, what was cut ("": nothing)."""

    outputs: list[Node]
    cost: float
    evaluations: int
    cut: str


class ExtractionError(Exception):
    """No acyclic program of the tensor language was found for the root (or the budget ran out first)."""


_EGG_OPS: dict[str, str] = {}  # egg name -> registry op, and the egg names of dtype and layout constants
_EGG_CONSTANTS: dict[str, str] = {}


def _names(egraph: EGraph) -> None:
    """Fill the egg-name tables (the same for every e-graph: names come from the Python declarations)."""
    if _EGG_OPS:
        return
    for fn, op in OP_OF.items():
        _EGG_OPS[egraph._callable_to_egg(fn)[1]] = op
    for name, term in {**DTYPE_TERMS, **LAYOUT_TERMS}.items():
        _EGG_CONSTANTS[egraph._callable_to_egg(get_callable_fn(term))[1]] = name


class _Graph:
    """The serialized e-graph: e-classes numbered, their e-nodes, parents, literal values and types."""

    def __init__(self, egraph: EGraph) -> None:
        _names(egraph)
        raw = json.loads(egraph._egraph.serialize([], max_functions=None, max_calls_per_function=None,
                                                  include_temporary_functions=False).to_json())
        number: dict[str, int] = {}
        self.types: list[str] = []
        for name, data in raw["class_data"].items():
            number[name] = len(self.types)
            self.types.append(data["type"])
        self.enodes: list[_Enode] = []
        self.members: list[list[int]] = [[] for _ in self.types]
        cls = {key: number[node["eclass"]] for key, node in raw["nodes"].items()}
        for key, node in raw["nodes"].items():
            if node.get("subsumed"):
                continue
            op = _EGG_OPS.get(node["op"], node["op"])
            self.members[cls[key]].append(len(self.enodes))
            self.enodes.append(_Enode(op, node["op"] in _EGG_OPS, tuple(cls[k] for k in node["children"])))
        self.values = self._literals()

    def tensor(self, c: int) -> bool:
        return self.types[c] == _TENSOR

    def _literals(self) -> dict[int, Any]:
        """The value of every literal e-class: ints, floats, strings, dtype and layout names, Vecs of
        them (a tuple), and Vec[Tensor] (a tuple of the Tensor e-classes, in order)."""
        values: dict[int, Any] = {}
        vecs = []
        for c, kind in enumerate(self.types):
            for e in self.members[c]:
                node = self.enodes[e]
                if node.op in _EGG_CONSTANTS:
                    values[c] = _EGG_CONSTANTS[node.op]
                elif node.op == "vec-of":
                    vecs.append((c, node.kids))
                elif not node.kids and kind in ("i64", "f64", "String"):
                    values[c] = int(node.op) if kind == "i64" else float(node.op) if kind == "f64" else node.op[1:-1]
        for c, kids in vecs:  # (Vec[i64] holds literals; Vec[Tensor] holds e-classes)
            values[c] = kids if all(self.tensor(k) for k in kids) and kids else tuple(values[k] for k in kids)
        return values

    def parents(self) -> list[list[int]]:
        """For each e-class, the Tensor e-classes with an e-node reading it (through a Vec[Tensor] too)."""
        users: list[set[int]] = [set() for _ in self.types]
        for c in range(len(self.types)):
            if not self.tensor(c):
                continue
            for e in self.members[c]:
                for k in self.tensor_kids(e):
                    users[k].add(c)
        return [sorted(u) for u in users]

    def tensor_kids(self, e: int) -> tuple[int, ...]:
        """The Tensor e-classes an e-node reads, in order (a concat's parts included)."""
        kids: list[int] = []
        for k in self.enodes[e].kids:
            if self.tensor(k):
                kids.append(k)
            elif self.types[k].endswith(f"[{_TENSOR}]"):
                kids.extend(self.values.get(k, ()))
        return tuple(kids)

    def programs(self) -> list[tuple[int, ...]]:
        """The outputs' Tensor e-classes of each Program e-node (the e-graph holds one Program e-class)."""
        classes = [c for c, t in enumerate(self.types) if t == _PROGRAM]
        if len(classes) != 1:
            raise ExtractionError(f"the e-graph holds {len(classes)} Program e-classes, not one")
        return [tuple(self.values.get(self.enodes[e].kids[0], ())) for e in self.members[classes[0]]]


class _Extractor:
    """Greedy DAG extraction over a _Graph with a local TensorCostModel (module docstring)."""

    def __init__(self, graph: _Graph, model: TensorCostModel, forced: tuple[int, int] | None = None) -> None:
        self.graph = graph
        self.model = model
        self.forced = forced  # (e-class, e-node): that e-class may choose only that e-node (`alternatives`)
        self.best: dict[int, _Choice] = {}
        self.views: dict[int, Cost] = {}  # a chosen e-class's Cost as its readers see it (its own closed time counted once, in `under`)
        self.evaluations = 0
        self.ill_shaped: dict[int, str] = {}  # e-nodes NumPy defines no shapes for, by e-node: why (`_price`)

    def run(self, budget: int) -> str:
        """Propagate choices until nothing changes; what was cut when `budget` evaluations ran out ("": nothing)."""
        graph, parents = self.graph, self.graph.parents()
        tensors = [c for c in range(len(graph.types)) if graph.tensor(c)]
        work = deque(c for c in tensors if any(not graph.tensor_kids(e) for e in graph.members[c]))
        queued = set(work)
        while work:
            if self.evaluations >= budget:
                return f"extraction stopped after {self.evaluations} e-node evaluations (limit {budget}), {len(work)} e-class(es) left"
            c = work.popleft()
            queued.discard(c)
            if self._choose(c):
                for p in parents[c]:
                    if p not in queued:
                        queued.add(p)
                        work.append(p)
        return ""

    def _choose(self, c: int) -> bool:
        """Re-choose e-class c's cheapest acyclic e-node; whether its choice changed."""
        found: _Choice | None = None
        members = (self.forced[1],) if self.forced is not None and self.forced[0] == c else self.graph.members[c]
        for e in members:
            if self.graph.enodes[e].tensor:
                choice = self._price(c, e)
                if choice is not None and (found is None or choice.total < found.total):
                    found = choice
        old = self.best.get(c)
        if found is None:
            if old is None:
                return False
            del self.best[c], self.views[c]
            return True
        if old is not None and old.enode == found.enode and old.total == found.total and old.below == found.below:
            return False
        self.best[c] = found
        self.views[c] = replace(found.cost, total=found.cost.total - found.cost.done, done=0.0, value=("class", c))
        return True

    def _price(self, c: int, e: int) -> _Choice | None:
        """E-node e of e-class c priced with its children's choices, or None (a child has none, or it reaches c)."""
        self.evaluations += 1
        kids = self.graph.tensor_kids(e)
        if any(k not in self.best for k in kids):
            return None
        below, under = self.union(kids)
        if below >> c & 1:
            return None
        node = self.graph.enodes[e]
        try:
            cost = self.model.call(node.op, [self._argument(k) for k in node.kids])
        except TracingError as why:  # (a rule that equated it with this e-class's well-shaped terms lacks a shape condition)
            self.ill_shaped[e] = str(why)
            return None
        return _Choice(e, cost, below, under)

    def _argument(self, k: int) -> Cost:
        """A child e-class's Cost as an argument: a chosen tensor, a literal, or a Vec of tensors."""
        if k in self.views:
            return self.views[k]
        value = self.graph.values.get(k)
        if self.graph.types[k].endswith(f"[{_TENSOR}]"):
            parts = [self.views[p] for p in value]
            return self.model.container(tuple(p.meta for p in parts), parts)
        return Cost(0.0, value)

    def union(self, kids: tuple[int, ...]) -> tuple[int, float]:
        """(bitset, summed own closed time) of the e-classes at and below `kids`, each counted once."""
        if not kids:
            return 0, 0.0
        main = max(kids, key=lambda k: self.best[k].under)
        below = self.best[main].below | 1 << main
        under = self.best[main].under + self.best[main].cost.done
        for k in kids:
            new = (self.best[k].below | 1 << k) & ~below
            while new:
                low = new & -new
                d = low.bit_length() - 1
                under += self.best[d].cost.done
                new ^= low
            below |= self.best[k].below | 1 << k
        return below, under

    def price_outputs(self, roots: tuple[int, ...]) -> float:
        """The DAG price (ns) of the program with outputs `roots`: every chosen e-class below once, then the outputs written."""
        _, under = self.union(roots)
        return under + self.model.written([self.views[c] for c in roots])

    def cheapest(self) -> tuple[float, tuple[int, ...]] | None:
        """(DAG price, output e-classes) of the cheapest Program e-node with every output chosen, or None."""
        priced = [(self.price_outputs(roots), roots) for roots in self.graph.programs() if all(c in self.best for c in roots)]
        return min(priced, key=lambda pr: pr[0]) if priced else None

    def chosen(self, roots: tuple[int, ...]) -> frozenset[tuple[int, int]]:
        """The (e-class, e-node) choices of the program below `roots`: two programs differ iff these do."""
        seen: dict[int, int] = {}
        stack = list(roots)
        while stack:
            c = stack.pop()
            if c not in seen:
                seen[c] = self.best[c].enode
                stack.extend(self.graph.tensor_kids(seen[c]))
        return frozenset(seen.items())

    def nodes(self, roots: tuple[int, ...], builder: Builder) -> list[Node]:
        """The chosen program as Nodes, children before parents (an explicit stack: any depth)."""
        made: dict[int, Node] = {}
        stack = [(c, False) for c in reversed(roots)]
        while stack:
            c, ready = stack.pop()
            if c in made:
                continue
            kids = self.graph.tensor_kids(self.best[c].enode)
            if not ready:
                stack.append((c, True))
                stack.extend((k, False) for k in kids if k not in made)
                continue
            made[c] = self._node(c, made, builder)
        return [made[c] for c in roots]

    def _node(self, c: int, made: dict[int, Node], builder: Builder) -> Node:
        node = self.graph.enodes[self.best[c].enode]
        if node.op == "concat":
            parts, axis = node.kids
            return builder.make("concat", tuple(made[p] for p in self.graph.values[parts]), (self.graph.values[axis],))
        tensors = tuple(made[k] for k in node.kids if self.graph.tensor(k))
        attrs = tuple(self.graph.values[k] for k in node.kids if not self.graph.tensor(k))
        return builder.make(node.op, tensors, attrs)


def extract(egraph: EGraph, model: TensorCostModel, budget: int, builder: Builder | None = None) -> Extracted:
    """The cheapest program of the e-graph's Program under `model`'s target, each value priced once (module docstring)."""
    extractor = _Extractor(_Graph(egraph), TensorCostModel(model.target, local=True))
    cut = extractor.run(budget)
    if extractor.ill_shaped:
        warnings.warn(f"egglog_tensor: the optimizer's e-graph holds {len(extractor.ill_shaped)} term(s) whose shapes NumPy "
                      f"does not define (first: {next(iter(extractor.ill_shaped.values()))}), left out of the extraction: "
                      "a rewrite rule equated them with well-shaped terms (is a rule missing a shape condition?)", stacklevel=2)
    found = extractor.cheapest()
    if found is None:
        raise ExtractionError(cut or "no acyclic program in the tensor language for the outputs")
    cost, roots = found
    return Extracted(extractor.nodes(roots, builder or Builder()), cost, extractor.evaluations, cut)


SWAPS_PER_ALTERNATIVE = 4  # re-extractions tried per alternative asked for (`alternatives`)
SAME_WORK = 0.01  # ns: an e-node priced above the chosen one by at most this is the same program spelled
# otherwise (cost.py prices a materialize of a value already in a buffer, emitted as that buffer, at a 0.001 ns epsilon)


def alternatives(egraph: EGraph, model: TensorCostModel, budget: int, k: int) -> list[Extracted]:
    """Up to k programs of the e-graph other than the cheapest, cheapest first, for autotuning where the
    cost model may rank wrongly: each is the cheapest program once one e-class of the cheapest program
    is made to choose another of its e-nodes (the e-nodes priced closest to the chosen ones tried first,
    SWAPS_PER_ALTERNATIVE * k re-extractions at most; none that only respells the same work, SAME_WORK),
    kept when its choices differ from every other's."""
    graph = _Graph(egraph)
    local = TensorCostModel(model.target, local=True)
    base = _Extractor(graph, local)
    found = None if base.run(budget) else base.cheapest()
    if found is None:
        return []
    _, roots = found
    program = base.chosen(roots)
    swaps = []
    for c, chosen in program:
        for e in graph.members[c]:
            other = base._price(c, e) if e != chosen and graph.enodes[e].tensor else None
            if other is not None and not 0 < other.total - base.best[c].total <= SAME_WORK:
                swaps.append((other.total - base.best[c].total, c, e))
    seen, made = {program}, []
    for _, c, e in sorted(swaps)[:SWAPS_PER_ALTERNATIVE * k]:
        extractor = _Extractor(graph, local, forced=(c, e))
        found = None if extractor.run(budget) else extractor.cheapest()
        if found is not None and extractor.chosen(found[1]) not in seen:
            seen.add(extractor.chosen(found[1]))
            made.append(Extracted(extractor.nodes(found[1], Builder()), found[0], extractor.evaluations, ""))
    kept: list[Extracted] = []
    for x in sorted(made, key=lambda x: x.cost):  # (re-extractions may respell a kept one: SAME_WORK)
        if not any(0 < x.cost - y.cost <= SAME_WORK for y in kept):
            kept.append(x)
    return kept[:k]
