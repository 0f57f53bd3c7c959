"""Reading the payload IR the lowering stages transform: the linalg ops of a module, an op's owner,
indexing maps, loop extents and element sizes, and integer-list attributes (what every stage's
analysis needs, none of it changing the IR)."""

from __future__ import annotations

from mlir import ir


def as_operation(owner: object) -> ir.Operation | None:
    """The Operation a value or use belongs to (None when it is a block argument's block)."""
    if isinstance(owner, ir.OpView):
        return owner.operation
    return owner if isinstance(owner, ir.Operation) else None


def indexing_maps(op: ir.Operation) -> list[ir.AffineMap] | None:
    """A linalg op's indexing maps, one per operand (None for named ops that do not print them)."""
    if "indexing_maps" not in op.attributes:
        return None
    return [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]


def reverses(op: ir.Operation) -> bool:
    """Whether an indexing map of the op multiplies a loop by a negative constant (`a[::-1]`): linalg's
    tiling asserts on that ("nonpositive multiplying coefficient"), so no stage tiles or fuses it."""

    def negative(expr: ir.AffineExpr) -> bool:
        if isinstance(expr, ir.AffineMulExpr) and isinstance(expr.rhs, ir.AffineConstantExpr) and expr.rhs.value <= 0:
            return True
        return isinstance(expr, ir.AffineBinaryExpr) and (negative(expr.lhs) or negative(expr.rhs))

    return any(negative(e) for m in indexing_maps(op) or () for e in m.results)


def in_forall(op: ir.Operation) -> bool:
    """Whether `op` is inside an scf.forall (a loop a tiling stage already made)."""
    parent = op.parent
    while parent is not None and parent.name != "builtin.module":
        if parent.name == "scf.forall":
            return True
        parent = parent.parent
    return False


def nested_ops(op: ir.Operation) -> list[ir.Operation]:
    """`op` and every op inside it, in walk (post-)order."""
    found: list[ir.Operation] = []
    op.walk(lambda inner: found.append(inner) or ir.WalkResult.ADVANCE)
    return found


def linalg_ops(module: ir.Module) -> list[ir.Operation]:
    """Every linalg op of the module in walk (pre-)order, as `match interface{LinalgOp}` returns them."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name.startswith("linalg.") and op.name not in ("linalg.yield", "linalg.index"):
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def int_list(attr: ir.Attribute) -> tuple[int, ...]:
    """The integers of an array attribute (`et.tiles = [...]`)."""
    return tuple(ir.IntegerAttr(a).value for a in ir.ArrayAttr(attr))


def loop_extents(op: ir.Operation) -> tuple[int, ...]:
    """Static extents of a linalg op's loops, read off its operand shapes and indexing maps."""
    shapes = [ir.ShapedType(v.type).shape for v in op.operands]
    maps = indexing_maps(op)
    name = op.name.removeprefix("linalg.")
    if maps is None:  # the named ops' default maps
        a, b, c = shapes
        return {
            "matmul": lambda: (a[0], b[1], a[1]),
            "batch_matmul": lambda: (a[0], a[1], b[2], a[2]),
            "matvec": lambda: (a[0], a[1]),
            "vecmat": lambda: (b[1], a[0]),
            "dot": lambda: (a[0],),
        }[name]()
    extents: dict[int, int] = {}
    for amap, shape in zip(maps, shapes, strict=True):
        for expr, size in zip(amap.results, shape, strict=True):
            if isinstance(expr, ir.AffineDimExpr):
                extents[expr.position] = size
    return tuple(extents[i] for i in range(len(extents)))


def element_bytes(elem: ir.Type) -> int:
    """Bytes per element of an MLIR element type (at least 1: i1 is stored as a byte)."""
    for cls in (ir.IntegerType, ir.FloatType):
        try:
            return max(1, cls(elem).width // 8)
        except ValueError:
            pass
    return 4
