"""Bad input gets a clear error naming what was wrong and where; never a crash or a silent wrong answer."""

from __future__ import annotations

import inspect
import os
import re

import numpy as np
import pytest

import egglog_tensor as et
from egglog_tensor.spec import specs_of
from egglog_tensor.stages import trace
from egglog_tensor.lowering.pipelines import Pipeline, run_pipeline
from egglog_tensor.lowering.stages import Passes
from egglog_tensor.target import Target

A = np.ones((4, 5), np.float32)
B = np.ones((3, 5), np.float32)
THIS_FILE = os.path.basename(__file__)
NUMPY = {"asarray": np.asarray}  # NumPy's own, held where tracing does not rebind it (a module global would be: creation.rebound)


def line_of(fn, marker: str) -> int:
    """Source line number of the line in `fn` containing `marker`."""
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if marker in line)


def test_unsupported_function_names_function_types_and_line() -> None:
    def f(x):
        return np.linalg.eig(x)  # MARK

    with pytest.raises(et.UnsupportedError) as info:
        et.kernel(f)(A)
    msg = str(info.value)
    assert "np.linalg.eig" in msg and "float32" in msg
    assert f"{THIS_FILE}:{line_of(f, 'MARK')}" in msg


def test_unsupported_ndarray_method_names_method_and_line() -> None:
    def f(x):
        return x.tobytes()  # MARK

    with pytest.raises(et.UnsupportedError) as info:
        et.kernel(f)(A)
    msg = str(info.value)
    assert "ndarray.tobytes" in msg and f"{THIS_FILE}:{line_of(f, 'MARK')}" in msg


def test_unsupported_dtype_promotion_is_reported() -> None:
    with pytest.raises(et.UnsupportedError, match="np.add.*complex64"):  # (bool // bool runs in int8, supported)
        et.kernel(lambda a: a + np.complex64(1))(np.ones(3, bool))


def test_shape_mismatch_at_trace_time() -> None:
    def f(a, b):
        return a + b  # MARK

    with pytest.raises(et.TracingError) as info:
        et.kernel(f)(A, B)
    msg = str(info.value)
    assert "(4, 5)" in msg and "(3, 5)" in msg and "broadcast" in msg
    assert f"{THIS_FILE}:{line_of(f, 'MARK')}" in msg


def test_matmul_shape_mismatch() -> None:
    with pytest.raises(et.TracingError, match=r"inner dimensions differ: \(4, 5\) @ \(3, 5\)"):
        et.kernel(lambda a, b: a @ b)(A, B)


def test_python_if_on_traced_value_names_the_argument() -> None:
    def f(x, y):
        if x.sum() > 0:  # MARK
            return x
        return y

    names = ("x", "y")  # traced from shapes only: a kernel's call takes the value as a guard (tests/test_guards.py)
    with pytest.raises(et.TracingError) as info:
        trace(f, names, specs_of(names, [A, A]), et.kernel(f).options)
    msg = str(info.value)
    assert "argument(s) x" in msg and "np.where" in msg
    assert f"{THIS_FILE}:{line_of(f, 'MARK')}" in msg


@pytest.mark.parametrize(
    ("fn", "pattern"),
    [
        (lambda x: bool(x), "bool()"),  # (of a 0-d data value: a guard, tests/test_guards.py)
        (lambda x: NUMPY["asarray"](x), "np.asarray"),  # bound before tracing: NumPy's own (np.asarray itself traces)
        (lambda x: x[x > 0], "boolean-mask indexing (x[mask]) is not supported"),
        (lambda x: x.reshape(3, 3), "cannot reshape array of size 20"),
        (lambda x: x.max(axis=2), "axis 2 is out of bounds"),
        (lambda x: x[4], "index 4 is out of bounds"),
        (lambda x: x + np.zeros(x.shape, np.complex128), "complex128"),
        (lambda x: x + np.random.rand(*x.shape), "np.random.rand in a kernel is not supported: its values would be drawn once"),
        (lambda x: x + np.random.default_rng().normal(size=x.shape), "np.random.default_rng in a kernel is not supported"),
        (lambda x: setattr(x, "shape", (5, 4)), "setting ndarray.shape in place is not supported"),
        (lambda x: np.frompyfunc(lambda v: v * 2, 1, 1)(x), "a ufunc made by np.frompyfunc"),
        (lambda x: np.fft.fft(x), "np.fft.fft(tracer float32[4, 5]) is not supported (complex results"),
        (lambda x: np.polynomial.polynomial.polyval2d(x, x, x), "np.polynomial.polynomial.polyval2d("),  # (polyval: tracing/series.py)
    ],
)
def test_trace_time_errors(fn, pattern: str) -> None:
    with pytest.raises((et.TracingError, et.UnsupportedError), match=re.escape(pattern)):
        et.kernel(fn)(A)


@pytest.mark.parametrize("ufunc", [np.add, np.maximum, np.logical_or])
def test_ufunc_reduce_names_the_unsupported_keyword(ufunc: np.ufunc) -> None:
    """initial= of the logical ufuncs is refused by name, an out= of the wrong shape names both shapes (out= itself,
    axis, dtype, keepdims, initial and where work: tests/test_surface_outs.py)."""
    shape = ufunc.reduce(A, axis=0).shape
    with pytest.raises(et.TracingError, match=re.escape(f"np.{ufunc.__name__}.reduce: the out array's shape (3,) is not the result's {shape}")):
        et.kernel(lambda x: ufunc.reduce(x, axis=0, out=np.empty(3)))(A)
    if ufunc is np.logical_or:
        with pytest.raises(et.UnsupportedError, match=re.escape("np.logical_or.reduce(initial=...) is not supported")):
            et.kernel(lambda x: ufunc.reduce(x, axis=0, initial=True))(A)


def test_in_place_update_of_a_read_only_argument_is_refused() -> None:
    def f(x):
        x += 1.0
        return x

    frozen = A.copy()
    frozen.flags.writeable = False
    with pytest.raises(et.KernelArgumentError, match="argument 'x' is written into by the kernel, but the array is read-only"):
        et.kernel(f)(frozen)


def test_in_place_update_of_a_local_is_fine() -> None:
    def f(x):
        y = x * 2.0
        y += 1.0
        return y

    np.testing.assert_array_equal(et.kernel(f)(A), f(A))


def test_returning_a_non_array() -> None:
    with pytest.raises(et.TracingError, match="must return arrays"):
        et.kernel(lambda x: None)(A)


def test_recursion_is_reported() -> None:
    def f(x):
        return f(x + 1.0)

    with pytest.raises(et.TracingError, match="recursion"):
        et.kernel(f)(A)


def test_max_of_empty_array() -> None:
    with pytest.raises(et.TracingError, match="zero-size array"):
        et.kernel(lambda x: x.max())(np.ones((0, 3), np.float32))


@pytest.mark.parametrize(
    ("args", "pattern"),
    [
        ((A,), "missing a required argument"),
        ((A, A, A), "too many positional arguments"),
        ((A, object()), "argument 'b': expected a NumPy array or a Python number, got object"),
        ((A, [[1.0], [2.0, 3.0]]), "argument 'b': NumPy cannot make an array of this list: setting an array element with a sequence"),
        ((A, np.ones(5, np.complex64)), "argument 'b': dtype complex64 is not supported"),
        ((A, np.ones(5, object)), "argument 'b': dtype object is not supported"),
        ((A, np.ones(5, ">f4")), "non-native byte order"),
    ],
)
def test_call_argument_errors(args, pattern: str) -> None:
    k = et.kernel(lambda a, b: a + b)
    with pytest.raises(et.KernelArgumentError, match=re.escape(pattern)):
        k(*args)


def test_a_string_argument_is_a_constant_and_no_operand() -> None:
    """A str argument is a constant (tests/test_surface_arguments.py); as an operand it is refused at its line."""
    with pytest.raises(et.UnsupportedError, match=r"(?s)operand of type str is not supported.*test_errors.py"):
        et.kernel(lambda a, b: a + b)(A, "hello")


def test_native_function_checks_compiled_signature() -> None:
    comp = et.kernel(lambda a: a * 2.0).inspect(A)
    out = np.empty((4, 5), np.float32)
    with pytest.raises(et.KernelArgumentError, match="dtype"):
        comp.native(A.astype(np.float64), out)
    with pytest.raises(et.KernelArgumentError, match="shape"):
        comp.native(np.ones((4, 5, 1), np.float32), out)
    with pytest.raises(et.KernelArgumentError, match="expected 2 arrays"):
        comp.native(A)


def test_failing_pass_raises_compile_error_with_saved_ir(monkeypatch) -> None:
    # A pipeline that skips bufferization and the linalg lowering leaves ops LLVM cannot take.
    broken = Pipeline("broken", (Passes("llvm", ("convert-func-to-llvm", "reconcile-unrealized-casts")),))
    linalg = et.kernel(lambda a: a + 1.0).trace(A).optimize().lower().as_text("linalg")
    with pytest.raises(et.CompileError) as info:
        run_pipeline(linalg, broken)
    msg = str(info.value)
    assert "'broken'" in msg and "stage 'llvm'" in msg and "convert-func-to-llvm" in msg
    assert "not in the LLVM dialect: arith.addf" in msg
    saved = re.search(r"input IR saved to: (\S+)", msg)
    assert saved and os.path.exists(saved[1])
    assert "linalg.generic" in open(saved[1]).read()
    # under the configured cache dir (issue 22: it went to ~/.cache whatever EGGLOG_TENSOR_CACHE_DIR said)
    assert os.path.commonpath([saved[1], os.environ["EGGLOG_TENSOR_CACHE_DIR"]]) == os.environ["EGGLOG_TENSOR_CACHE_DIR"]
    assert os.path.basename(os.path.dirname(os.path.dirname(saved[1]))) == "failures"


def test_failure_input_is_saved_even_when_the_cache_dir_cannot_be_written(tmp_path, monkeypatch) -> None:
    from egglog_tensor.toolchain import save_failure_input

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("EGGLOG_TENSOR_CACHE_DIR", str(blocker / "cache"))  # below a file: mkdir fails
    saved = save_failure_input("module {}", "some stage")
    assert saved.read_text() == "module {}" and "some_stage" in str(saved)


def test_unknown_target() -> None:
    with pytest.raises(ValueError, match="unknown target 'gpu-x'"):
        et.kernel(lambda a: a, target="gpu-x")


def test_unresolved_external_symbol_is_a_compile_error_not_a_crash() -> None:
    from egglog_tensor.lowering.llvm import load_llvm_ir

    ir_text = "declare void @no_such_runtime_function()\ndefine void @f() {\n  call void @no_such_runtime_function()\n  ret void\n}\n"
    with pytest.raises(et.CompileError, match="no_such_runtime_function"):
        load_llvm_ir(ir_text, Target.host())
