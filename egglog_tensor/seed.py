"""The traced program into an e-graph as egglog commands built directly (`egglog.bindings`): one `let`
per node, one node deep, naming its inputs' lets; each node's shape and dtype facts; the Program; the
facts the tiling rules read of the kernel's Target (its cache tiles and reduction lanes).

egglog-python's conversion of Python expressions took about a millisecond per node and fact (1,000
nodes: 1.3 s of a 2.5 s optimize), and registering a large term with shared subterms in one call
sometimes built wrong e-nodes (optimize._registers_traced). Here only each constructor and each
distinct attribute value (shapes, dtypes, names) goes through egglog-python, once per program.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable

from egglog import EGraph, Vec, bindings

from .graph import Node
from .ir import Program, Tensor, _attr_term, constructor, dtype_of, shape_of
from .rulesets.tiling import target_facts
from .target import Target

_SPAN = bindings.RustSpan("", 0, 0)
_NAMES = itertools.count()  # unique let names (egglog's globals) across e-graphs and runs


class _Commands:
    """Egg names and literal expressions of one e-graph, each converted by egglog-python once."""

    def __init__(self, egraph: EGraph) -> None:
        self.egraph = egraph
        self.names: dict[object, str] = {}
        self.literals: dict[tuple[type, Hashable], bindings._Expr] = {}

    def name(self, fn: object) -> str:
        """The egg name of a constructor or function (declared in this e-graph if it was not)."""
        if fn not in self.names:
            self.names[fn] = self.egraph._callable_to_egg(fn)[1]
        return self.names[fn]

    def literal(self, value: object) -> bindings._Expr:
        """A Node attribute (int, float, bool, str, int tuple, dtype or layout name) as an egg expression:
        numbers and plain strings as egg literals (a float keeps its sign and NaN), the rest converted once."""
        term = _attr_term(value)
        if isinstance(term, bool):
            return bindings.Lit(_SPAN, bindings.Bool(term))
        if isinstance(term, int | str):
            return bindings.Lit(_SPAN, bindings.Int(term) if isinstance(term, int) else bindings.String(term))
        if isinstance(value, float):
            return bindings.Lit(_SPAN, bindings.Float(value))
        key = (type(value), value)  # (int tuples, dtype and layout names)
        if key not in self.literals:
            self.egraph._add_decls(term)
            self.literals[key] = self.egraph._state.typed_expr_to_egg(term.__egg_typed_expr__)
        return self.literals[key]


def _call(commands: _Commands, node: Node, names: dict[int, str]) -> bindings.Call:
    """The egg call of one node, its inputs named by their lets."""
    inputs = [bindings.Var(_SPAN, names[id(i)]) for i in node.inputs]
    ctor = constructor(node)
    if node.op == "concat":
        parts = bindings.Call(_SPAN, commands.name(Vec[Tensor]), inputs)
        return bindings.Call(_SPAN, commands.name(ctor), [parts, commands.literal(node.attr("axis"))])
    if node.op == "arg":  # (its name is a string even when it spells a dtype or layout)
        name, *rest = node.attrs
        return bindings.Call(_SPAN, commands.name(ctor), [bindings.Lit(_SPAN, bindings.String(name)), *map(commands.literal, rest)])
    return bindings.Call(_SPAN, commands.name(ctor), [*inputs, *(commands.literal(a) for a in node.attrs)])


def program(egraph: EGraph, outputs: list[Node], nodes: list[Node], facts: list[Node], target: Target) -> list[bindings._Command]:
    """The commands adding the program `outputs` (`nodes`: every node, inputs first) to `egraph`, with the
    traced shape and dtype of each node of `facts` and what the tiling rules read of `target` (run them with `seed`)."""
    commands = _Commands(egraph)
    names: dict[int, str] = {}
    program: list[bindings._Command] = []
    for node in nodes:
        names[id(node)] = f"$et_node_{next(_NAMES)}"
        program.append(bindings.ActionCommand(bindings.Let(_SPAN, names[id(node)], _call(commands, node, names))))
    shape, dtype = commands.name(shape_of), commands.name(dtype_of)
    for node in facts:
        var = [bindings.Var(_SPAN, names[id(node)])]
        program.append(bindings.ActionCommand(bindings.Set(_SPAN, shape, var, commands.literal(tuple(node.shape)))))
        program.append(bindings.ActionCommand(bindings.Set(_SPAN, dtype, var, commands.literal(node.dtype))))
    for relation, values in target_facts(target):
        fact = bindings.Call(_SPAN, commands.name(relation), [bindings.Lit(_SPAN, bindings.Int(v)) for v in values])
        program.append(bindings.ActionCommand(bindings.Expr_(_SPAN, fact)))
    roots = bindings.Call(_SPAN, commands.name(Vec[Tensor]), [bindings.Var(_SPAN, names[id(o)]) for o in outputs])
    program.append(bindings.ActionCommand(bindings.Expr_(_SPAN, bindings.Call(_SPAN, commands.name(Program), [roots]))))
    return program


def called(program: list[bindings._Command]) -> frozenset[str]:
    """The egg names of the functions the commands of `program` call (`set` targets too): each constructor
    the seeded e-graph then holds an e-node of."""
    names: set[str] = set()
    stack: list[object] = [command.action for command in program]
    while stack:
        item = stack.pop()
        if isinstance(item, bindings.Call):
            names.add(item.name)
            stack.extend(item.args)
        elif isinstance(item, bindings.Let):
            stack.append(item.rhs)
        elif isinstance(item, bindings.Expr_):
            stack.append(item.expr)
        elif isinstance(item, bindings.Set):
            names.add(item.lhs)
            stack.extend([*item.args, item.rhs])
    return frozenset(names)


def seed(egraph: EGraph, program: list[bindings._Command]) -> None:
    """Add a program's commands (`program`) to `egraph`."""
    egraph._egraph.run_program(*program)
