"""Backend tests: hand-written linalg-on-tensors MLIR through both pipelines, llvmlite, and NumPy-array calls."""

from __future__ import annotations

import functools
import re

import numpy as np
import pytest

from egglog_tensor.errors import CompileError, KernelArgumentError
from egglog_tensor.lowering.llvm import LoadedModule, load_llvm_ir
from egglog_tensor.lowering.pipelines import NAMES, lower_to_llvm_ir, pipeline_for, resolve_target, run_pipeline
from egglog_tensor.target import Target
from egglog_tensor.runtime import ArgType, NativeFunction, describe, element_strides

MLIR_TYPES = {"float32": "f32", "float64": "f64", "int32": "i32", "int64": "i64", "bool": "i8"}  # NumPy bools are bytes; i1 only inside bodies


def memref(shape: tuple[int, ...], element: str, strided: bool = True) -> str:
    """MLIR memref type; strided=True accepts any strides and offset (what arbitrary NumPy views need)."""
    dims = "".join(f"{n}x" for n in shape)
    if not strided:
        return f"memref<{dims}{element}>"
    return f"memref<{dims}{element}, strided<[{', '.join('?' * len(shape))}], offset: ?>>"


def elementwise_kernel(shape: tuple[int, ...], element: str, body: list[str], n_inputs: int, strided: bool = True) -> str:
    """A kernel `out = body(inputs)` as one linalg.generic on tensors with memref arguments (DPS)."""
    rank = len(shape)
    tensor = f"tensor<{''.join(f'{n}x' for n in shape)}{element}>"
    mem = memref(shape, element, strided)
    dims = ", ".join(f"d{i}" for i in range(rank))
    args = ", ".join([f"%in{i}: {mem}" for i in range(n_inputs)] + [f"%out: {mem}"])
    lines = [f"#map = affine_map<({dims}) -> ({dims})>"]
    lines.append(f"func.func @kernel({args}) attributes {{llvm.emit_c_interface}} {{")
    for i in range(n_inputs):
        lines.append(f"  %t{i} = bufferization.to_tensor %in{i} restrict : {mem} to {tensor}")
    ins = ", ".join(f"%t{i}" for i in range(n_inputs))
    block = ", ".join([f"%x{i}: {element}" for i in range(n_inputs)] + [f"%o: {element}"])
    iterators = ", ".join(['"parallel"'] * rank)
    lines += [
        f"  %e = tensor.empty() : {tensor}",
        f"  %r = linalg.generic {{indexing_maps = [{', '.join(['#map'] * (n_inputs + 1))}], "
        f"iterator_types = [{iterators}]}} ins({ins} : {', '.join([tensor] * n_inputs)}) outs(%e : {tensor}) {{",
        f"  ^bb0({block}):",
        *[f"    {line}" for line in body],
        f"  }} -> {tensor}",
        f"  bufferization.materialize_in_destination %r in restrict writable %out : ({tensor}, {mem}) -> ()",
        "  return",
        "}",
    ]
    return "\n".join(lines) + "\n"


@functools.cache
def compile_module(mlir_text: str, pipeline: str) -> tuple[LoadedModule, tuple[tuple[str, str], ...]]:
    """Lower, translate and JIT-load a module (cached: many tests share kernels)."""
    stages = run_pipeline(mlir_text, pipeline_for(resolve_target(pipeline))).texts
    return load_llvm_ir(lower_to_llvm_ir(stages[-1][1]), Target.host()), tuple(stages)


def native(mlir_text: str, pipeline: str, arg_types: list[ArgType]) -> NativeFunction:
    """The kernel `@kernel` of mlir_text, compiled, as a NativeFunction."""
    module, _ = compile_module(mlir_text, pipeline)
    return NativeFunction(module.address("_mlir_ciface_kernel"), arg_types, owner=module)


BINARY = {  # dtype -> (MLIR body, numpy function)
    "float32": (["%s = arith.mulf %x0, %x1 : f32", "%r = arith.addf %s, %x0 : f32", "linalg.yield %r : f32"], lambda a, b: a * b + a),
    "float64": (["%s = arith.mulf %x0, %x1 : f64", "%r = arith.subf %s, %x1 : f64", "linalg.yield %r : f64"], lambda a, b: a * b - b),
    "int32": (["%s = arith.muli %x0, %x1 : i32", "%r = arith.addi %s, %x0 : i32", "linalg.yield %r : i32"], lambda a, b: a * b + a),
    "int64": (["%s = arith.subi %x0, %x1 : i64", "%r = arith.muli %s, %x1 : i64", "linalg.yield %r : i64"], lambda a, b: (a - b) * b),
    "bool": (
        [
            "%p = arith.trunci %x0 : i8 to i1",
            "%q = arith.trunci %x1 : i8 to i1",
            "%s = arith.xori %p, %q : i1",
            "%t = arith.ori %s, %p : i1",
            "%r = arith.extui %t : i1 to i8",
            "linalg.yield %r : i8",
        ],
        lambda a, b: (a ^ b) | a,
    ),
}


def random_array(shape: tuple[int, ...], dtype: str, rng: np.random.Generator) -> np.ndarray:
    """Random values of dtype (small integers so products do not overflow)."""
    if dtype == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.startswith("int"):
        return np.asarray(rng.integers(-50, 50, size=shape), dtype=dtype)
    return np.asarray(rng.standard_normal(shape), dtype=dtype)


def views(shape: tuple[int, ...], dtype: str, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Arrays of `shape` in several memory layouts: C, F, strided, negative-stride, transposed."""
    big = random_array(tuple(2 * n + 1 for n in shape), dtype, rng)
    out = {
        "C": random_array(shape, dtype, rng),
        "F": np.asfortranarray(random_array(shape, dtype, rng)).reshape(shape, order="F"),
        "strided": big[(*(slice(1, 2 * n, 2) for n in shape), ...)],
        "negative": big[(*(slice(2 * n - 1, None, -2) if n else slice(0, 0) for n in shape), ...)],
    }
    if len(shape) >= 2:
        out["transposed"] = random_array(shape[::-1], dtype, rng).T
    return out


@pytest.mark.parametrize("pipeline", sorted(NAMES))
@pytest.mark.parametrize("dtype", sorted(BINARY))
@pytest.mark.parametrize("shape", [(5, 7), (3, 4, 2), (6,), (), (0, 3)])
def test_elementwise_any_layout(pipeline: str, dtype: str, shape: tuple[int, ...]) -> None:
    body, reference = BINARY[dtype]
    text = elementwise_kernel(shape, MLIR_TYPES[dtype], body, n_inputs=2)
    types = [ArgType(dtype, shape), ArgType(dtype, shape), ArgType(dtype, shape, writable=True)]
    function = native(text, pipeline, types)
    rng = np.random.default_rng(0)
    a_views, b_views, out_views = views(shape, dtype, rng), views(shape, dtype, rng), views(shape, dtype, rng)
    for name in a_views:
        a, b = a_views[name], b_views[name]
        for call in (function, function.call_generic):
            out = out_views[name]
            out[...] = random_array(shape, dtype, rng)
            call(a, b, out)
            np.testing.assert_array_equal(out, reference(a, b), err_msg=f"{name} layout, {call}")


@pytest.mark.parametrize(
    ("a_view", "out_view", "meets"),
    [
        (slice(0, 6), slice(4, 10), True),  # out starts inside a
        (slice(0, 6), slice(6, 12), False),  # adjacent: a's last element is buf[5]
        (slice(11, 5, -1), slice(0, 6), False),  # a reversed over buf[6..11]
        (slice(11, 5, -1), slice(1, 7), True),
        (slice(0, 12, 2), slice(11, 17), False),  # a strided over buf[0..10]: its span ends after buf[10]
        (slice(0, 12, 2), slice(10, 16), True),
        (slice(12, 18), slice(3, 9), False),
        (slice(12, 18), slice(7, 13), True),  # out ends inside a
    ],
)
def test_an_output_sharing_memory_with_an_input_is_refused(a_view: slice, out_view: slice, meets: bool) -> None:
    """The native reader compares byte spans (any strides): an output meeting an input could be read
    after it is written, so nothing runs; both call paths say which arguments."""
    text = elementwise_kernel((6,), "f64", BINARY["float64"][0], n_inputs=2)
    function = native(text, "cpu", [ArgType("float64", (6,))] * 2 + [ArgType("float64", (6,), writable=True)])
    b = np.arange(6.0)
    for call in (function, function.call_generic):
        buf = np.arange(20.0)
        a, out = buf[a_view], buf[out_view]
        expected = a * b - b
        if meets:
            with pytest.raises(KernelArgumentError, match=r"argument 2 \(an output\) shares memory with argument 0 \(an input\)"):
                call(a, b, out)
            np.testing.assert_array_equal(buf, np.arange(20.0))  # nothing ran
        else:
            call(a, b, out)
            np.testing.assert_array_equal(out, expected)
    empty = np.empty((0, 3))  # no elements: never meets anything, whatever its address
    shape0 = native(elementwise_kernel((0, 3), "f64", BINARY["float64"][0], n_inputs=2), "cpu",
                    [ArgType("float64", (0, 3))] * 2 + [ArgType("float64", (0, 3), writable=True)])
    shape0(empty, empty, empty)


def test_identity_layout_requires_contiguous() -> None:
    text = elementwise_kernel((4, 4), "f32", BINARY["float32"][0], n_inputs=2, strided=False)
    types = [ArgType("float32", (4, 4), contiguous=True)] * 2 + [ArgType("float32", (4, 4), True, True)]
    function = native(text, "cpu", types)
    rng = np.random.default_rng(1)
    a, b, out = (random_array((4, 4), "float32", rng) for _ in range(3))
    function(a, b, out)
    np.testing.assert_array_equal(out, a * b + a)
    with pytest.raises(KernelArgumentError, match="argument 1: expected a C-contiguous array"):
        function(a, b.T, out)


MATMUL = """
func.func @kernel(%a: memref<37x19xf32, strided<[?, ?], offset: ?>>, %b: memref<19x23xf32, strided<[?, ?], offset: ?>>,
                  %out: memref<37x23xf32, strided<[?, ?], offset: ?>>) attributes {llvm.emit_c_interface} {
  %ta = bufferization.to_tensor %a restrict : memref<37x19xf32, strided<[?, ?], offset: ?>> to tensor<37x19xf32>
  %tb = bufferization.to_tensor %b restrict : memref<19x23xf32, strided<[?, ?], offset: ?>> to tensor<19x23xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<37x23xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<37x23xf32>) -> tensor<37x23xf32>
  %mm = linalg.matmul ins(%ta, %tb : tensor<37x19xf32>, tensor<19x23xf32>) outs(%init : tensor<37x23xf32>) -> tensor<37x23xf32>
  %e2 = tensor.empty() : tensor<37x23xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]} ins(%mm : tensor<37x23xf32>) outs(%e2 : tensor<37x23xf32>) {
  ^bb0(%x: f32, %o: f32):
    %c = arith.constant 0.0 : f32
    %m = arith.maximumf %x, %c : f32
    linalg.yield %m : f32
  } -> tensor<37x23xf32>
  bufferization.materialize_in_destination %r in restrict writable %out : (tensor<37x23xf32>, memref<37x23xf32, strided<[?, ?], offset: ?>>) -> ()
  return
}
"""


@pytest.mark.parametrize("pipeline", sorted(NAMES))
def test_matmul_relu(pipeline: str) -> None:
    types = [ArgType("float32", (37, 19)), ArgType("float32", (19, 23)), ArgType("float32", (37, 23), writable=True)]
    function = native(MATMUL, pipeline, types)
    rng = np.random.default_rng(2)
    a = rng.standard_normal((19, 37)).astype(np.float32).T
    b = rng.standard_normal((40, 23)).astype(np.float32)[::-2][:19]
    out = np.full((37, 23), np.nan, np.float32)
    function(a, b, out)
    np.testing.assert_allclose(out, np.maximum(a @ b, 0), rtol=1e-5, atol=1e-5)


MATH = {  # op -> (MLIR op line with %x, %y inputs, numpy reference, input ranges)
    "exp": ("%r = math.exp %x : T", lambda x, y: np.exp(x)),
    "log": ("%r = math.log %y : T", lambda x, y: np.log(y)),
    "sqrt": ("%r = math.sqrt %y : T", lambda x, y: np.sqrt(y)),
    "tanh": ("%r = math.tanh %x : T", lambda x, y: np.tanh(x)),
    "sin": ("%r = math.sin %x : T", lambda x, y: np.sin(x)),
    "cos": ("%r = math.cos %x : T", lambda x, y: np.cos(x)),
    "atan2": ("%r = math.atan2 %x, %y : T", lambda x, y: np.arctan2(x, y)),
    "powf": ("%r = math.powf %y, %x : T", lambda x, y: np.power(y, x)),
    "floor": ("%r = math.floor %x : T", lambda x, y: np.floor(x)),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", sorted(MATH))
def test_math_ops(op: str, dtype: str) -> None:
    line, reference = MATH[op]
    element = MLIR_TYPES[dtype]
    body = [line.replace("%x", "%x0").replace("%y", "%x1").replace(": T", f": {element}"), f"linalg.yield %r : {element}"]
    text = elementwise_kernel((1000,), element, body, n_inputs=2)
    types = [ArgType(dtype, (1000,))] * 2 + [ArgType(dtype, (1000,), writable=True)]
    rng = np.random.default_rng(3)
    x = rng.uniform(-4, 4, 1000).astype(dtype)
    y = rng.uniform(0.1, 5, 1000).astype(dtype)
    expected = reference(x.astype(np.float64), y.astype(np.float64))
    for pipeline in sorted(NAMES):
        out = np.full(1000, np.nan, dtype)
        native(text, pipeline, types)(x, y, out)
        np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-6 if op in ("sin", "cos") else 0, err_msg=pipeline)


def test_openmp_large_parallel_loop() -> None:
    shape = (512, 300)
    text = elementwise_kernel(shape, "f64", BINARY["float64"][0], n_inputs=2)
    types = [ArgType("float64", shape)] * 2 + [ArgType("float64", shape, writable=True)]
    module, stages = compile_module(text, "cpu-openmp")
    assert "__kmpc_fork_call" in module.llvm_ir
    function = NativeFunction(module.address("_mlir_ciface_kernel"), types, owner=module)
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal(shape), rng.standard_normal(shape)
    out = np.empty(shape)
    for _ in range(3):
        function(a, b, out)
        np.testing.assert_array_equal(out, a * b - b)


def test_loaded_module_keeps_every_stage() -> None:
    text = elementwise_kernel((64,), "f32", BINARY["float32"][0], n_inputs=2)
    module, stages = compile_module(text, "cpu")
    assert [name for name, _ in stages] == [stage.name for stage in pipeline_for(resolve_target("cpu")).stages]
    text_of = dict(stages)  # the "tile" stage comes first and has nothing to do without a contraction
    assert text_of["tile"] == text and "tensor<" not in text_of["bufferize"] and "linalg.generic" in text_of["bufferize"]
    assert "scf.for" in text_of["loops"] and "linalg." not in text_of["loops"] and "llvm.func @_mlir_ciface_kernel" in stages[-1][1]
    assert "define void @_mlir_ciface_kernel" in module.llvm_ir
    assert "define void @_mlir_ciface_kernel" in module.optimized_ir
    assert re.search(r"^_mlir_ciface_kernel:", module.asm, re.MULTILINE)
    with pytest.raises(CompileError, match="no_such_symbol"):
        module.address("no_such_symbol")


def test_vectorized_for_host_cpu() -> None:
    text = elementwise_kernel((256, 256), "f32", BINARY["float32"][0], n_inputs=2)
    module, _ = compile_module(text, "cpu")
    register = "zmm" if Target.host().has("avx512f") else "ymm" if Target.host().has("avx2") else "xmm"
    assert re.search(rf"\tvmulps\t.*%{register}", module.asm) or re.search(rf"\tmulps\t.*%{register}", module.asm)


def test_describe_fields() -> None:
    base = np.arange(60, dtype=np.float64).reshape(6, 10)
    view = base[5:0:-2, 1::3]
    descriptor = describe(view)
    assert descriptor.aligned == descriptor.allocated == view.ctypes.data and descriptor.offset == 0
    assert list(descriptor.sizes) == [3, 3] and list(descriptor.strides) == [-20, 3]
    scalar = describe(np.array(7, dtype=np.int32))
    assert not hasattr(scalar, "sizes") and scalar.offset == 0
    fortran = describe(np.asfortranarray(np.zeros((2, 3), np.bool_)))
    assert list(fortran.strides) == [1, 2]


def test_describe_rejects_unaligned_strides() -> None:
    record = np.zeros(5, dtype=[("a", np.int32), ("b", np.float64)])
    with pytest.raises(KernelArgumentError, match="not multiples of the itemsize"):
        element_strides(record["b"])


def test_argument_errors() -> None:
    text = elementwise_kernel((3,), "i64", BINARY["int64"][0], n_inputs=2)
    function = native(text, "cpu", [ArgType("int64", (3,))] * 2 + [ArgType("int64", (3,), writable=True)])
    a = np.arange(3, dtype=np.int64)
    with pytest.raises(KernelArgumentError, match="argument 1: expected dtype int64, got int32"):
        function(a, a.astype(np.int32), np.empty(3, np.int64))
    with pytest.raises(KernelArgumentError, match=r"argument 0: expected shape \(3,\), got \(1, 3\)"):
        function(a[None], a, np.empty(3, np.int64))
    with pytest.raises(KernelArgumentError, match="expected 3 arrays, got 2"):
        function(a, a)
    with pytest.raises(KernelArgumentError, match="read-only"):
        function(a, a, np.broadcast_to(np.int64(0), (3,)))
    with pytest.raises(KernelArgumentError, match="expected a numpy.ndarray, got list"):
        function([0, 1, 2], a, np.empty(3, np.int64))
    with pytest.raises(KernelArgumentError, match="not aligned"):
        odd = np.lib.stride_tricks.as_strided(np.zeros(8, np.int64), shape=(3,), strides=(12,))
        function(odd, a, np.empty(3, np.int64))


def test_code_calling_a_runtime_function_no_library_defines_is_refused() -> None:
    """LLVM's code generator calls __truncdfhf2 for a float64 -> float16 conversion x86 has no
    instruction for; no loaded library defines it: MCJIT would leave it at address 0 and the first
    call would crash. The object code's undefined symbols are checked before it is loaded."""
    from egglog_tensor.lowering.elf import undefined_symbols
    from egglog_tensor.lowering.llvm import _codegen, load_object
    from egglog_tensor.lowering.stages.streams import Streamed

    target = resolve_target("cpu")
    llvm_ir = ("define half @narrow(double %x) {\n  %h = fptrunc double %x to half\n  ret half %h\n}\n"
               "define double @wide(double %x) {\n  ret double %x\n}\n")
    object_code = _codegen(llvm_ir, target)
    assert undefined_symbols(object_code) == ["__truncdfhf2"]
    with pytest.raises(CompileError, match=r"stage 'link'.*__truncdfhf2"):
        load_object(object_code, target, llvm_ir, llvm_ir, streamed=Streamed(0))
    to_float32 = "define float @narrow(double %x) {\n  %f = fptrunc double %x to float\n  ret float %f\n}\n"
    assert undefined_symbols(_codegen(to_float32, target)) == []  # (an instruction: nothing to call)


def test_float64_to_float16_is_rounded_once_as_numpy_rounds() -> None:
    """float64 -> float16 (no x86 instruction) goes through float32 rounded to odd: bit for bit NumPy's
    correctly rounded conversion, at halfway points, overflow, subnormals, zeros, inf and NaN."""
    import egglog_tensor as et

    rng = np.random.default_rng(1)
    h = rng.standard_normal(20000).astype(np.float16).astype(np.float64)
    ulp = np.spacing(h.astype(np.float16)).astype(np.float64)
    x = np.concatenate([h + ulp * rng.choice([0.5, -0.5, 0.5 + 1e-12, 0.5 - 1e-12, 0.25], h.size),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 65504.0, 65519.99, 65520.0, 1e300, -1e300, 2.0**-24,
                         2.0**-25, 2.0**-25 * (1 + 2.0**-40), 1e-300, 5e-324, 3.4028235e38, 3.5e38]])
    got = et.kernel(lambda a: a.astype(np.float16))(x)
    with np.errstate(over="ignore"):
        want = x.astype(np.float16)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got.view(np.uint16)[~np.isnan(want)], want.view(np.uint16)[~np.isnan(want)])
    assert np.isnan(got[np.isnan(want)]).all()
