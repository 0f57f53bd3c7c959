"""The op registry (egglog_tensor.ops) agrees with the term language, the scalar emitter and the
shape rules: one record per op, and each place that handles ops by class handles every op of it."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest
from egglog import EGraph
from mlir import ir
from mlir.dialects import func

import egglog_tensor.ir as terms
from egglog_tensor.errors import TracingError, UnsupportedError
from egglog_tensor.graph import Builder, Node
from egglog_tensor.ir import CONSTRUCTORS, OP_OF, WITH_LANES, Tensor, dtype_of, shape_of, static_facts, to_term
from egglog_tensor.lowering import scalar
from egglog_tensor.ops import BINARY, COMPOSED, DTYPE_CLASSES, ELEMENTWISE, OPS, PREDICATES, UNARY, Kind, dtype_class, infer, names
from egglog_tensor.rulesets.shapes import shapes


def test_every_op_has_one_constructor_and_back() -> None:
    assert set(CONSTRUCTORS) == set(OPS)
    assert all(OP_OF[CONSTRUCTORS[name]] == name for name in OPS)


def _declared_tensor_constructors() -> set[str]:
    """The constructors ir.py declares that return a Tensor: "Tensor.<method>" and `@function` names."""
    tree = ast.parse(Path(terms.__file__).read_text())
    found = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.decorator_list and ast.unparse(node.returns or ast.Constant(None)) == "Tensor":
            found.add(node.name)
        if isinstance(node, ast.ClassDef) and node.name == "Tensor":
            found |= {f"Tensor.{f.name}" for f in node.body
                      if isinstance(f, ast.FunctionDef) and ast.unparse(f.returns or ast.Constant(None)) == "Tensor"}
    return found


def test_every_tensor_constructor_of_the_term_language_is_an_op_or_a_choice_form() -> None:
    """A constructor declared in ir.py but missing from the registry would be invisible to the
    tracer, cost model and emitter (their op sets come from the registry); the plain elementwise
    ones are generated from their records and importable from ir.py by name."""
    choices = {"materialize_shared"} | {f"Tensor.{op}_lanes" for op in WITH_LANES}
    generated = {OPS[name].term for name in terms.GENERATED}
    assert not generated & _declared_tensor_constructors()
    assert _declared_tensor_constructors() | generated == {record.term for record in OPS.values()} | choices
    assert all(getattr(terms, OPS[name].term) is fn and CONSTRUCTORS[name] is fn for name, fn in terms.GENERATED.items())
    assert {"exp", "maximum", "logical_not"} <= set(terms.GENERATED)


def _emit_all(dtype: str, check: Callable[[str, list[ir.Value]], None]) -> None:
    """Calls check(op, operands) for every elementwise op of the registry inside a function of
    scalars of `dtype`, then verifies the module."""
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        scalar_type = scalar.element_type(dtype)
        with ir.InsertionPoint(module.body):
            function = func.FuncOp("f", ([scalar_type] * 3, []))
            block = function.add_entry_block()
            with ir.InsertionPoint(block):
                for name in sorted(ELEMENTWISE - {"where", "astype", "bitcast"}):
                    check(name, list(block.arguments)[: OPS[name].inputs])
                func.ReturnOp([])
        assert module.operation.verify()


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
def test_every_elementwise_op_has_the_scalar_semantics_its_record_gives(dtype: str) -> None:
    """lowering/scalar.py emits every elementwise op for each dtype class its record lists, as the
    one MLIR op the record names when it names one, and refuses the others by op and dtype."""

    def check(name: str, operands: list[ir.Value]) -> None:
        record = OPS[name]
        out = "bool" if record.kind & (Kind.PREDICATE | Kind.LOGICAL) else dtype
        named = record.scalar.get(dtype_class(dtype))
        if named is None:
            with pytest.raises(UnsupportedError, match=f"op {name} is not supported for dtype {dtype}"):
                scalar.apply(name, dtype, out, operands)
            return
        result = scalar.apply(name, dtype, out, operands)
        assert result is not None, name
        if named != COMPOSED:
            assert result.owner.name == named, name

    _emit_all(dtype, check)


def test_records_name_mlir_ops_of_the_dialects_scalar_builds() -> None:
    """Each MLIR op a record names ("math.log1p") has a builder; a record's classes are dtype classes;
    every elementwise op (but where, astype and bitcast, defined for any dtype) lists at least one."""
    for record in OPS.values():
        assert set(record.scalar) <= set(DTYPE_CLASSES), record.name
        for named in set(record.scalar.values()) - {COMPOSED}:
            assert callable(scalar.mlir_op(named)), (record.name, named)
    assert all(OPS[name].scalar for name in ELEMENTWISE - {"where", "astype", "bitcast"})


def test_attributes_are_named() -> None:
    b = Builder()
    x = b.make("arg", (), ("x", (3, 4), "float32", "F"))
    s = b.make("sum", (x,), ((1,),))
    chosen = b.make("sum", (x,), ((1,), 16))
    assert (x.attr("name"), x.attr("shape"), x.attr("layout")) == ("x", (3, 4), "F")
    assert s.attr("axes") == (1,) and s.attr("lanes") is None and chosen.attr("lanes") == 16
    with pytest.raises(KeyError, match="op sum has no attribute 'perm' \\(it has axes, lanes\\)"):
        s.attr("perm")


def test_inference_errors_name_the_op() -> None:
    b = Builder()
    x = b.make("arg", (), ("x", (3,), "float32", "C"))
    y = b.make("arg", (), ("y", (4,), "float32", "C"))
    with pytest.raises(TracingError, match=r"^add: shapes \(3,\) and \(4,\) cannot be broadcast together"):
        b.make("add", (x, y))
    with pytest.raises(TracingError, match="^exp: takes 1 tensor inputs, got 2"):
        infer("exp", (x, y), ())
    with pytest.raises(UnsupportedError, match="unknown op 'no_such_op'"):
        b.make("no_such_op", (x,), ())


def test_op_sets_come_from_the_registry() -> None:
    assert set(UNARY) | set(BINARY) | set(names(Kind.TERNARY)) | {"where", "astype", "bitcast"} == ELEMENTWISE
    assert set(PREDICATES) <= set(BINARY) and "exp" in names(Kind.TRANSCENDENTAL)
    assert names(Kind.VIEW) == ("transpose", "broadcast_to", "slice", "diagonal")


def _programs() -> list[tuple[str, Node]]:
    """One node of each op the shape rules cover, over arguments of known shape: elementwise ops of
    equal shapes or with a scalar, views, reductions, casts, matmul. (They do not cover broadcasting
    between two non-scalar shapes, diagonal or concat: no rule condition tests their shapes.)"""
    b = Builder()
    a = b.make("arg", (), ("a", (3, 4), "float32", "C"))
    a2 = b.make("arg", (), ("a2", (3, 4), "float32", "C"))
    k = b.make("const", (), (2.0, "float32"))
    m = b.make("arg", (), ("m", (4, 5), "float32", "C"))
    r = b.make("arg", (), ("r", (4,), "float32", "C"))
    c = b.make("arg", (), ("c", (3, 4), "bool", "C"))
    nodes = [b.make(name, (a,)) for name in UNARY]
    nodes += [b.make(name, (a, a2)) for name in BINARY] + [b.make("add", (k, a)), b.make("less", (a, k))]
    nodes += [b.make(name, (a, k, a2)) for name in names(Kind.TERNARY)]
    nodes += [b.make("where", (c, a, a2)), b.make("astype", (a,), ("float64",)), b.make("bitcast", (a,), ("int32",)), b.make("matmul", (a, m)),
              b.make("transpose", (a,), ((1, 0),)), b.make("reshape", (a,), ((2, 6),)), b.make("broadcast_to", (r,), ((2, 4),)),
              b.make("slice", (a,), ((0, 1), (2, 1), (2, 3)))]
    nodes += [b.make(name, (a,), ((1,),)) for name in ("sum", "max", "min", "prod")]
    return [(f"{n.op}{i}", n) for i, n in enumerate(nodes)]


@pytest.mark.parametrize(("case", "node"), _programs(), ids=[case for case, _ in _programs()])
def test_shape_rules_agree_with_the_registry(case: str, node: Node) -> None:
    """The shapes ruleset derives shape_of of each op's term from its arguments' alone, equal to the
    registry's inference (rules test it in their conditions); dtype_of too, for casts and views."""
    memo: dict[int, Tensor] = {}
    to_term([node], memo)
    egraph = EGraph()
    leaves = [n for n in node.inputs if n.op in ("arg", "const")]
    egraph.register(memo[id(node)], *static_facts(leaves, memo))
    egraph.run(shapes.saturate())
    assert terms.literal(egraph.extract(shape_of(memo[id(node)]))) == node.shape
    if node.op in ("astype", "bitcast", "transpose", "reshape", "broadcast_to"):
        assert terms.literal(egraph.extract(dtype_of(memo[id(node)]))) == node.dtype
