"""Vectorized transcendental math: glibc's libmvec behind LLVM's vector-function ABI.

After conversion to the LLVM dialect, the math ops (`math.exp/log/tanh/sin/cos`, `log2 log10 exp2
sinh cosh tan asin acos atan asinh acosh atanh cbrt erf erfc`, two-argument `atan2 powf`) are scalar
intrinsics (`llvm.intr.exp`, ...) or libm calls, which LLVM splits back into one libm call per element, so
a fused elementwise loop does not vectorize. The `vecmath` stage rewrites each of them (float32
and float64) into a call to the libm function (`expf`, `exp`, ...) and declares that function
`memory(none)` with the attribute `vector-function-abi-variant` naming glibc's vector variants
for this CPU (`_ZGVeN16v_expf` on AVX-512, `_ZGVdN8v_expf` on AVX2, `_ZGVbN4v_expf` on SSE;
`_ZGVeN16vv_powf` for two arguments).
LLVM's loop vectorizer then calls one of those per 16 (8, 4) elements; the remainder of a loop
calls the scalar libm function. Nothing here approximates anything itself: libmvec is glibc's
maintained implementation, and special inputs (inf, NaN, huge arguments) go through its own
scalar fallbacks. The module's functions are marked `stackrealign` (as `opt -stackrealign`): vectors
live across a call are spilled to a frame aligned for them (gelu on one core 1.12x).

exp (float32, float64) and float32 tanh never get here: the `math` stage computes them inline
(math.py: faster than libmvec's, and as accurate or more).

Why not MLIR's polynomial approximations: MLIR 22.1 ships them only as C++ patterns
(`populateMathPolynomialApproximationPatterns`) used by a test pass; this build has no pass and
no transform op (`transform.apply_patterns.math.*` is newer) that applies them, and the Python
bindings' library does not contain them at all.

Accuracy, as max ULP distance from an extended-precision (np.longdouble) reference rounded to the
dtype, over 2^21 evenly spaced bit patterns, 2^21 random bit patterns, dense sweeps of [-120, 120],
[-10, 10], [0, 4] and special values, per dtype; measured on AVX-512 (the `_ZGVe` variants, with
the AVX2 ones in loop remainders), NumPy's own for comparison.
tests/test_vecmath.py asserts the bound, libmvec's documented 4-ULP criterion:

    op     float32: measured  NumPy  bound    float64: measured  NumPy  bound
    exp                 3       2      4                 3         1      4   (now math.py's: 1 and 1, bound 2)
    log                 4       4      4                 2         1      4
    tanh                1       1      4                 1         1      4   (float32 now math.py's: 1, bound 2)
    sin                 2       1      4                 3         1      4
    cos                 2       1      4                 3         1      4
    atan2, pow          tested at 4 (tests/test_vecmath.py); the one-argument rest: docs/accuracy.md

Special values match NumPy exactly (tested): NaN where NumPy gives NaN (log(x<0), sin/cos(+-inf)),
exp overflow to inf and underflow through subnormals to +0.0, exp(-inf) = 0, log(0) = -inf,
log(inf) = inf, tanh(+-large) = +-1, signed zeros (sin/tanh(-0.0) = -0.0), huge sin/cos arguments
(libmvec reduces those with its scalar fallback). Not exact: float64 cos(1e-8) is 1 - 2^-53, not
1.0 (1 ULP; NumPy gives 1.0). Elements of the loop remainder go through the
scalar libm function, so two equal inputs may differ by the ULPs above depending on position.
Without libmvec (not glibc, or glibc older than 2.35 for tanh) an op keeps its scalar libm call:
same results, no vector speed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from ...target import Target
from .stage import Stage

# NumPy ufunc / math op -> libm name per element type.
FUNCTIONS = {name: name for name in ("exp log tanh sin cos log2 log10 exp2 sinh cosh tan asin acos atan asinh acosh "
                                      "atanh cbrt erf erfc atan2 pow").split()}
_TYPES = {"f32": ("f", 32), "f64": ("", 64)}

# Max ULP error asserted by tests/test_vecmath.py per (op, dtype): libmvec's documented criterion;
# exp and float32 tanh are math.py's (measured 1).
MAX_ULP = {(op, dtype): 4 for op in FUNCTIONS for dtype in ("float32", "float64")} | {
    ("exp", "float32"): 2, ("exp", "float64"): 2, ("tanh", "float32"): 2}

# Vector ISAs of the x86_64 vector function ABI, widest first: (ABI letter, CPU feature, vector bits).
_ISAS = (("e", "avx512f", 512), ("d", "avx2", 256), ("b", "sse2", 128))


@functools.cache
def _libmvec() -> ctypes.CDLL | None:
    """glibc's vector math library, loaded with RTLD_GLOBAL so the JIT resolves its symbols (None if absent)."""
    name = ctypes.util.find_library("mvec")
    if name is None:
        return None
    try:
        return ctypes.CDLL(name, mode=os.RTLD_GLOBAL)
    except OSError:
        return None


@functools.cache
def variants(scalar: str, bits: int, target: Target, arity: int = 1) -> tuple[tuple[int, str], ...]:
    """(lanes, vector function name) of libmvec variants of libm `scalar` (of `arity` vector arguments) usable on `target`'s CPU."""
    lib = _libmvec()
    if lib is None:
        return ()
    found = []
    for letter, feature, width in _ISAS:
        lanes = width // bits
        name = f"_ZGV{letter}N{lanes}{'v' * arity}_{scalar}"
        if target.has(feature) and hasattr(lib, name):
            found.append((lanes, name))
    return tuple(found)


def _declarations(calls: dict[str, tuple[str, int, int]], target: Target) -> str:
    """LLVM-dialect declarations: each scalar function with its vector variants, and @llvm.compiler.used."""
    lines, used = [], []
    for scalar, (type_name, bits, arity) in sorted(calls.items()):
        vecs = variants(scalar, bits, target, arity)
        mapping = ",".join(f"_ZGV_LLVM_N{lanes}{'v' * arity}_{scalar}({name})" for lanes, name in vecs)
        lines.append(
            f"llvm.func @{scalar}({', '.join([type_name] * arity)}) -> {type_name} attributes {{"
            "memory_effects = #llvm.memory_effects<other = none, argMem = none, inaccessibleMem = none, errnoMem = none, targetMem0 = none, targetMem1 = none>, "
            f'no_unwind, passthrough = [["vector-function-abi-variant", "{mapping}"]]}}'
        )
        for lanes, name in vecs:
            vtype = f"vector<{lanes}x{type_name}>"
            lines.append(f"llvm.func @{name}({', '.join([vtype] * arity)}) -> {vtype} attributes {{no_unwind}}")
            used.append(name)
    if used:  # keeps the vector declarations alive until the loop vectorizer runs
        n = len(used)
        lines.append(f'llvm.mlir.global appending @llvm.compiler.used() {{section = "llvm.metadata"}} : !llvm.array<{n} x ptr> {{')
        lines.append(f"  %a0 = llvm.mlir.undef : !llvm.array<{n} x ptr>")
        for i, name in enumerate(used):
            lines.append(f"  %p{i} = llvm.mlir.addressof @{name} : !llvm.ptr")
            lines.append(f"  %a{i + 1} = llvm.insertvalue %p{i}, %a{i}[{i}] : !llvm.array<{n} x ptr>")
        lines.append(f"  llvm.return %a{n} : !llvm.array<{n} x ptr>")
        lines.append("}")
    return "\n".join(lines)


def _scalar_name(op: ir.Operation) -> tuple[str, str, int] | None:
    """(libm name, MLIR type, bits) if `op` is a scalar f32/f64 intrinsic or libm call of one of FUNCTIONS."""
    if len(op.results) != 1 or len(op.operands) not in (1, 2):
        return None
    type_name = str(op.results[0].type)
    if type_name not in _TYPES or any(str(v.type) != type_name for v in op.operands):
        return None
    suffix, bits = _TYPES[type_name]
    if op.name.startswith("llvm.intr.") and op.name[len("llvm.intr."):] in FUNCTIONS:
        return FUNCTIONS[op.name[len("llvm.intr."):]] + suffix, type_name, bits
    if op.name == "llvm.call" and "callee" in op.attributes:
        callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
        if callee in {f + suffix for f in FUNCTIONS.values()}:
            return callee, type_name, bits
    return None


def vectorize_math(module: ir.Module, target: Target) -> None:
    """Rewrite scalar calls of FUNCTIONS into libm calls that LLVM may vectorize with `target`'s libmvec variants (in place)."""
    found: list[tuple[ir.Operation, str]] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        hit = _scalar_name(op)
        if hit is not None and variants(hit[0], hit[2], target, len(op.operands)):
            found.append((op, hit[0]))
            calls[hit[0]] = (hit[1], hit[2], len(op.operands))
        return ir.WalkResult.ADVANCE

    calls: dict[str, tuple[str, int, int]] = {}
    module.operation.walk(visit)
    if not calls:
        return
    for op, scalar in found:
        if op.name == "llvm.call":
            continue
        with ir.InsertionPoint(op), op.location:
            call = ir.Operation.create(
                "llvm.call",
                results=[op.results[0].type],
                operands=list(op.operands),
                attributes={
                    "callee": ir.FlatSymbolRefAttr.get(scalar),
                    "op_bundle_sizes": ir.DenseI32ArrayAttr.get([]),
                    "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(op.operands), 0]),
                },
            )
        op.results[0].replace_all_uses_with(call.results[0])
        op.erase()
    symbols = ir.SymbolTable(module.operation)
    for scalar in calls:
        if scalar in symbols:  # a declaration made by convert-math-to-libm: replaced by ours
            symbols.erase(symbols[scalar])
    if "llvm.compiler.used" in symbols:
        raise AssertionError("the module already has @llvm.compiler.used")
    for op in module.body.operations:  # (as `opt -stackrealign`)
        if op.operation.name == "llvm.func" and len(op.regions[0].blocks):
            held = list(op.attributes["passthrough"]) if "passthrough" in op.attributes else []
            op.attributes["passthrough"] = ir.ArrayAttr.get([*held, ir.StringAttr.get("stackrealign")])
    extra = ir.Module.parse(_declarations(calls, target))
    first = module.body.operations[0]
    for op in list(extra.body.operations):
        op.operation.move_before(first)


@dataclass(frozen=True)
class Vecmath(Stage):
    """Scalar math (FUNCTIONS) becomes libm calls that LLVM vectorizes with glibc's libmvec variants for the Target."""

    target: Target
    name: ClassVar[str] = "vecmath"

    def rewrite(self, module: ir.Module) -> None:
        vectorize_math(module, self.target)
