"""Real code by others, compiled unchanged as a new user would (issue 25): tests/corpus/ holds each source's code.

Each case calls `et.kernel(fn)` on the arguments as the original passes them (Python int sizes, NumPy
scalars, dicts of weights) and compares with `fn` run by NumPy on copies of the same arguments: the
results, and the array arguments afterwards (NPBench's kernels update their arguments in place, and
NumPy code run on a kernel's arguments must leave them as NumPy leaves them). Sizes are NPBench's "S"
preset or smaller (Python loops unroll at trace time). A case that stops today is
`xfail(strict=True)` with the reason: it fails loudly once the reason is gone (a case failing in
some runs only is `xfail(strict=False)`, its reason saying so).

Tolerances: float64 results to 1e-12 relative (sums of at most a few hundred terms, a few dozen
roundings per element: well under 1e-13), float32 to 2e-5 (the same over 2^-24, with float32
`exp`/`tanh` within a few ULP); both relative to the result's largest element (`atol`), since
differences of nearly equal terms (stencils, centred data) may leave elements far smaller than
their error. Integer and index results exactly.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pytest

import egglog_tensor as et
from corpus import adam, llama3np, picogpt, scipy_kernels, sklearn_pairwise
from corpus.npbench import (adi, atax, bicg, conv2d_bias, correlation, covariance, deriche, doitgen, fdtd_2d,
                            floyd_warshall, gemver, gesummv, gramschmidt, heat_3d, jacobi_1d, jacobi_2d, mlp,
                            mvt, seidel_2d, softmax, syr2k, syrk, vadv)

OPTIMIZER = ("fails in some runs only, the optimizer's result depending on the run: the extraction's cost model "
             "meets an update_slice whose base e-class is 0-d (pyo3 PanicException), the emitted MLIR fails "
             "verification, or (once in ~10 runs) wrong values")
WRITES = ("writes into its array arguments, which a kernel refuses (docs/calling.md#in-place-updates: "
          "TracingError, 'write into a copy and return it')")
DICTS = "takes dicts of weight arrays as arguments (KernelArgumentError: no pytree arguments)"
KWONLY = "keyword-only parameters are refused by et.kernel (TypeError)"
NDARRAY = ("makes its buffers with the np.ndarray constructor, a NumPy array that traced values cannot be written "
           "into (TracingError: converting a traced array to a NumPy array)")
NUMPY_STATE = ("writes traced values into a NumPy array the object holds (its KV cache), which NumPy must convert "
               "(TracingError: converting a traced array to a NumPy array)")
NUMPY_INDEX = ("indexes a NumPy array the object holds (the embedding table) with a traced array, which NumPy must "
               "convert (TracingError: converting a traced array to a NumPy array)")


@dataclass(frozen=True)
class Case:
    """One corpus kernel: the function, its arguments' maker, tolerances, and why it stops today (if it does)."""

    fn: Callable[..., Any]
    make: Callable[[], tuple]
    xfail: str | None = None
    kw: dict[str, Any] = field(default_factory=dict)
    slow: bool = False
    flaky: str | None = None
    rtol: dict[str, float] = field(default_factory=lambda: {"float64": 1e-12, "float32": 2e-5})


def _tolerance(case: Case, ref: np.ndarray) -> dict[str, float]:
    """rtol and atol (relative to the largest element) for a result of ref's dtype; zero for exact dtypes."""
    rtol = case.rtol.get(ref.dtype.name, 0.0)
    finite = np.abs(ref[np.isfinite(ref)]) if ref.dtype.kind == "f" else np.zeros(0)
    return {"rtol": rtol, "atol": rtol * (float(finite.max()) if finite.size else 0.0)}


def _compare(case: Case, got: Any, ref: Any, what: str) -> None:
    """got equals ref (a value, or a tuple/list of them) within the case's tolerance, dtype and shape included."""
    if isinstance(ref, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(ref), what
        for i, (g, r) in enumerate(zip(got, ref)):
            _compare(case, g, r, f"{what}[{i}]")
        return
    if ref is None:
        assert got is None, what
        return
    ref, got = np.asarray(ref), np.asarray(got)
    assert got.dtype == ref.dtype and got.shape == ref.shape, (what, got.dtype, ref.dtype, got.shape, ref.shape)
    np.testing.assert_allclose(got, ref, err_msg=what, **_tolerance(case, ref))


def _arrays(args: tuple) -> list[np.ndarray]:
    """The ndarray arguments (whose contents a kernel call may change)."""
    return [a for a in args if isinstance(a, np.ndarray)]


def run_case(case: Case) -> None:
    """Compile case.fn, call it, compare its result and its array arguments afterwards with NumPy's run."""
    args = case.make()
    ref_args, our_args = copy.deepcopy(args), copy.deepcopy(args)
    ref = case.fn(*ref_args, **case.kw)
    got = et.kernel(case.fn)(*our_args, **case.kw)
    _compare(case, got, ref, "result")
    _compare(case, _arrays(our_args), _arrays(ref_args), "array arguments after the call")


def outputs(init: Callable[..., Any], *sizes: int) -> tuple:
    """NPBench's initialize(*sizes) outputs as a tuple."""
    out = init(*sizes)
    return out if isinstance(out, tuple) else (out,)


def names(cases: dict[str, Case]) -> list[Any]:
    """The cases' names as pytest parameters, the slow ones (over 20 s: long unrolled loops) marked slow."""
    return [pytest.param(n, marks=pytest.mark.slow) if cases[n].slow else n for n in sorted(cases)]


NPBENCH = {
    "fdtd_2d": Case(fdtd_2d.kernel, lambda: (6, *outputs(fdtd_2d.initialize, 6, 20, 22)), xfail=WRITES),
    "adi": Case(adi.kernel, lambda: (2, 12, *outputs(adi.initialize, 12)), xfail=WRITES),
    "seidel_2d": Case(seidel_2d.kernel, lambda: (3, 10, *outputs(seidel_2d.initialize, 10)), xfail=WRITES),
    "deriche": Case(deriche.kernel, lambda: outputs(deriche.initialize, 20, 16), slow=True, flaky=OPTIMIZER),
    "gramschmidt": Case(gramschmidt.kernel, lambda: outputs(gramschmidt.initialize, 12, 8), xfail=WRITES),
    "jacobi_1d": Case(jacobi_1d.kernel, lambda: (10, *outputs(jacobi_1d.initialize, 64)), xfail=WRITES),
    "jacobi_2d": Case(jacobi_2d.kernel, lambda: (8, *outputs(jacobi_2d.initialize, 20)), xfail=WRITES),
    "heat_3d": Case(heat_3d.kernel, lambda: (5, *outputs(heat_3d.initialize, 10)), xfail=WRITES),
    "syrk": Case(syrk.kernel, lambda: outputs(syrk.initialize, 6, 8), xfail=WRITES),
    "syr2k": Case(syr2k.kernel, lambda: outputs(syr2k.initialize, 6, 8), xfail=WRITES),
    "gemver": Case(gemver.kernel, lambda: outputs(gemver.initialize, 64), xfail=WRITES),
    "gesummv": Case(gesummv.kernel, lambda: outputs(gesummv.initialize, 64)),
    "atax": Case(atax.kernel, lambda: outputs(atax.initialize, 40, 50)[::-1]),
    "bicg": Case(bicg.kernel, lambda: outputs(bicg.initialize, 40, 50)),
    "mvt": Case(mvt.kernel, lambda: outputs(mvt.initialize, 64), xfail=WRITES),
    "doitgen": Case(doitgen.kernel, lambda: (4, 5, 8, *outputs(doitgen.initialize, 4, 5, 8)), xfail=WRITES),
    "covariance": Case(covariance.kernel, lambda: (12, *outputs(covariance.initialize, 12, 16)), xfail=WRITES),
    "correlation": Case(correlation.kernel, lambda: (12, *outputs(correlation.initialize, 12, 16)), xfail=WRITES),
    "floyd_warshall": Case(floyd_warshall.kernel, lambda: outputs(floyd_warshall.initialize, 12),
                           xfail=WRITES),
    "vadv": Case(vadv.vadv, lambda: (lambda d, *a: (*a, d))(*outputs(vadv.initialize, 6, 5, 8)),
                 xfail=f"{NDARRAY}; {WRITES}"),
    "softmax": Case(softmax.softmax, lambda: outputs(softmax.initialize, 2, 3, 16)),
    "mlp": Case(mlp.mlp, lambda: outputs(mlp.initialize, 3, 8, 64, 32, 16)),
    "conv2d_bias": Case(conv2d_bias.conv2d_bias, lambda: outputs(conv2d_bias.initialize, 3, 4, 8, 2, 2, 8),
                        flaky=OPTIMIZER),
}


@pytest.mark.parametrize("name", names(NPBENCH))
def test_npbench(name: str, request: pytest.FixtureRequest) -> None:
    """NPBench's NumPy kernel, unchanged, on its own initialize's data, matches NumPy."""
    expect_failure(request, NPBENCH[name])
    run_case(NPBENCH[name])


def expect_failure(request: pytest.FixtureRequest, case: Case) -> None:
    """Mark the running test xfail(strict=True) with the case's reason, if it has one."""
    if case.xfail:
        request.applymarker(pytest.mark.xfail(strict=True, reason=case.xfail))
    if case.flaky:  # fails in some runs only: strict would fail the runs where it passes
        request.applymarker(pytest.mark.xfail(strict=False, reason=case.flaky))


RNG = np.random.default_rng(0)


def normal(*shape: int, dtype: Any = np.float32, scale: float = 1.0) -> np.ndarray:
    """Standard-normal data of shape and dtype (weights, activations), times scale."""
    return (RNG.standard_normal(shape) * scale).astype(dtype)


def gpt2_layer_weights(n_embd: int) -> dict[str, Any]:
    """One GPT-2 block's parameters in picoGPT's layout (dicts of w/b, g/b), float32 as GPT-2 ships them."""
    lin = lambda i, o: {"w": normal(i, o, scale=i ** -0.5), "b": normal(o, scale=0.1)}
    norm = lambda: {"g": 1.0 + normal(n_embd, scale=0.1), "b": normal(n_embd, scale=0.1)}
    return {"mlp": {"c_fc": lin(n_embd, 4 * n_embd), "c_proj": lin(4 * n_embd, n_embd)},
            "attn": {"c_attn": lin(n_embd, 3 * n_embd), "c_proj": lin(n_embd, n_embd)}, "ln_1": norm(), "ln_2": norm()}


N_SEQ, N_EMBD, N_HEAD, N_VOCAB = 8, 16, 2, 40
BLOCK = gpt2_layer_weights(N_EMBD)

PICOGPT = {
    # np.sqrt(2 / np.pi) is a float64 scalar: the result is float64, its inner terms float32 (to 2e-5)
    "gelu": Case(picogpt.gelu, lambda: (normal(N_SEQ, 4 * N_EMBD),), rtol={"float64": 2e-5}),
    "softmax": Case(picogpt.softmax, lambda: (normal(N_SEQ, N_SEQ, scale=3.0),)),
    "layer_norm": Case(picogpt.layer_norm, lambda: (normal(N_SEQ, N_EMBD), *BLOCK["ln_1"].values())),
    "linear": Case(picogpt.linear, lambda: (normal(N_SEQ, N_EMBD), *BLOCK["attn"]["c_attn"].values())),
    "ffn": Case(picogpt.ffn, lambda: (normal(N_SEQ, N_EMBD), *BLOCK["mlp"].values()), xfail=DICTS),
    "attention": Case(picogpt.attention, lambda: (*(normal(N_SEQ, N_EMBD // N_HEAD) for _ in range(3)),
                                                  (1 - np.tri(N_SEQ, dtype=np.float32)) * -1e10)),
    "mha": Case(picogpt.mha, lambda: (normal(N_SEQ, N_EMBD), *BLOCK["attn"].values(), N_HEAD), xfail=DICTS),
    "transformer_block": Case(picogpt.transformer_block, lambda: (normal(N_SEQ, N_EMBD), *BLOCK.values(), N_HEAD),
                              xfail=DICTS),
    "gpt2": Case(picogpt.gpt2, lambda: ([3, 1, 4, 1, 5, 9, 2, 6], normal(N_VOCAB, N_EMBD), normal(N_SEQ, N_EMBD),
                                        [BLOCK, gpt2_layer_weights(N_EMBD)], {"g": normal(N_EMBD), "b": normal(N_EMBD)},
                                        N_HEAD), xfail=DICTS),
}


@pytest.mark.parametrize("name", names(PICOGPT))
def test_picogpt(name: str, request: pytest.FixtureRequest) -> None:
    """picoGPT's GPT-2 forward pass, function by function, unchanged, matches NumPy (float32 weights)."""
    expect_failure(request, PICOGPT[name])
    run_case(PICOGPT[name])


LLAMA_ARGS = llama3np.ModelArgs(dim=16, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=40, max_seq_len=16)
HEAD_DIM, L = LLAMA_ARGS.dim // LLAMA_ARGS.n_heads, 6


def llama_weights(args: llama3np.ModelArgs) -> dict[str, np.ndarray]:
    """Random float32 weights under the names of the stories15M checkpoint llama3.np loads."""
    d, fd, kv = args.dim, 4 * args.dim, args.n_kv_heads * (args.dim // args.n_heads)
    w = {"model.embed_tokens.weight": normal(args.vocab_size, d), "model.norm.weight": 1.0 + normal(d, scale=0.1),
         "lm_head.weight": normal(args.vocab_size, d, scale=d ** -0.5)}
    for i in range(args.n_layers):
        p = f"model.layers.{i}."
        w |= {p + "self_attn.q_proj.weight": normal(d, d, scale=d ** -0.5), p + "self_attn.k_proj.weight": normal(kv, d, scale=d ** -0.5),
              p + "self_attn.v_proj.weight": normal(kv, d, scale=d ** -0.5), p + "self_attn.o_proj.weight": normal(d, d, scale=d ** -0.5),
              p + "mlp.up_proj.weight": normal(fd, d, scale=d ** -0.5), p + "mlp.gate_proj.weight": normal(fd, d, scale=d ** -0.5),
              p + "mlp.down_proj.weight": normal(d, fd, scale=fd ** -0.5),
              p + "input_layernorm.weight": 1.0 + normal(d, scale=0.1), p + "post_attention_layernorm.weight": 1.0 + normal(d, scale=0.1)}
    return w


LLAMA = llama3np.Llama(llama_weights(LLAMA_ARGS), LLAMA_ARGS)
LAYER = LLAMA.layers[0]


def rope_tables() -> tuple[np.ndarray, np.ndarray]:
    """The first L rows of the model's RoPE cos/sin tables, as Llama.__call__ slices them."""
    return LLAMA.freqs_cos[:L], LLAMA.freqs_sin[:L]


def causal_mask() -> np.ndarray:
    """The prefill mask Llama.__call__ builds (start_pos 0)."""
    return np.triu(np.full((L, L), float("-inf")), k=1)


LLAMA3 = {
    "softmax": Case(llama3np.softmax, lambda: (normal(1, 4, L, L, scale=3.0),)),
    "silu": Case(llama3np.silu, lambda: (normal(1, L, 4 * LLAMA_ARGS.dim, scale=3.0),)),
    "rmsnorm": Case(LAYER.input_layernorm, lambda: (normal(1, L, LLAMA_ARGS.dim),)),
    "rope": Case(llama3np.apply_rotary_emb, lambda: (normal(1, L, LLAMA_ARGS.n_heads, HEAD_DIM),
                                                    normal(1, L, LLAMA_ARGS.n_kv_heads, HEAD_DIM), *rope_tables())),
    "repeat_kv": Case(llama3np.repeat_kv, lambda: (normal(1, L, LLAMA_ARGS.n_kv_heads, HEAD_DIM), 2)),
    "feed_forward": Case(LAYER.feed_forward, lambda: (normal(1, L, LLAMA_ARGS.dim),)),
    "attention": Case(LAYER.attention, lambda: (normal(1, L, LLAMA_ARGS.dim), 0, causal_mask(), *rope_tables()),
                      xfail=NUMPY_STATE),
    "transformer_block": Case(LAYER, lambda: (normal(1, L, LLAMA_ARGS.dim), 0, causal_mask(), *rope_tables()),
                              xfail=NUMPY_STATE),
    "forward": Case(LLAMA, lambda: (np.array([[1, 5, 7, 2, 9, 3]]), 0), xfail=f"{NUMPY_INDEX}; {NUMPY_STATE}"),
}


@pytest.mark.parametrize("name", names(LLAMA3))
def test_llama3(name: str, request: pytest.FixtureRequest) -> None:
    """llama3.np's forward pass, piece by piece (functions and its callable layer objects), unchanged, matches NumPy."""
    expect_failure(request, LLAMA3[name])
    run_case(LLAMA3[name])


def features(n: int, dtype: Any = np.float64) -> np.ndarray:
    """n samples of 5 features."""
    return normal(n, 5, dtype=dtype)


SKLEARN = {
    "linear_kernel": Case(sklearn_pairwise.linear_kernel, lambda: (features(9), features(7))),
    "polynomial_kernel": Case(sklearn_pairwise.polynomial_kernel, lambda: (features(9), features(7))),
    "sigmoid_kernel": Case(sklearn_pairwise.sigmoid_kernel, lambda: (features(9), features(7))),
    "rbf_kernel": Case(sklearn_pairwise.rbf_kernel, lambda: (features(9), features(7))),
    "rbf_kernel_float32": Case(sklearn_pairwise.rbf_kernel, lambda: (features(9, np.float32), features(7, np.float32))),
    "euclidean_distances": Case(sklearn_pairwise.euclidean_distances, lambda: (features(9), features(7)), xfail=KWONLY),
    "euclidean_distances_self": Case(sklearn_pairwise.euclidean_distances, lambda: (features(9),), xfail=KWONLY),
    "cosine_similarity": Case(sklearn_pairwise.cosine_similarity, lambda: (features(9), features(7))),
}


@pytest.mark.parametrize("name", names(SKLEARN))
def test_sklearn(name: str, request: pytest.FixtureRequest) -> None:
    """scikit-learn's pairwise kernels, bodies unchanged, match NumPy."""
    expect_failure(request, SKLEARN[name])
    run_case(SKLEARN[name])


SCIPY = {
    "py_vq": Case(scipy_kernels.py_vq, lambda: (normal(20, 3, dtype=np.float64), normal(4, 3, dtype=np.float64))),
    "cumulative_trapezoid": Case(scipy_kernels.cumulative_trapezoid, lambda: (normal(3, 11, dtype=np.float64),)),
    "cumulative_trapezoid_x": Case(scipy_kernels.cumulative_trapezoid,
                                   lambda: (normal(3, 11, dtype=np.float64), np.linspace(0.0, 2.0, 11) ** 2)),
    "cumulative_trapezoid_initial": Case(scipy_kernels.cumulative_trapezoid, lambda: (normal(3, 11, dtype=np.float64),),
                                         kw={"initial": 0}),
}


@pytest.mark.parametrize("name", names(SCIPY))
def test_scipy(name: str, request: pytest.FixtureRequest) -> None:
    """SciPy's vq assignment and cumulative_trapezoid, bodies unchanged, match NumPy."""
    expect_failure(request, SCIPY[name])
    run_case(SCIPY[name])


def adam_state(dtype: Any) -> tuple:
    """param, grad, m, v after a few steps (m, v nonzero), and the step count t as a Python int."""
    return normal(64, dtype=dtype), normal(64, dtype=dtype), normal(64, dtype=dtype, scale=0.1), np.abs(normal(64, dtype=dtype, scale=0.01)), 3


ADAM = {
    "adam_step_float32": Case(adam.adam_step, lambda: adam_state(np.float32)),
    "adam_step_float64": Case(adam.adam_step, lambda: adam_state(np.float64)),
    "adam_step_inplace": Case(adam.adam_step_inplace, lambda: adam_state(np.float32), xfail=WRITES),
}


@pytest.mark.parametrize("name", names(ADAM))
def test_adam(name: str, request: pytest.FixtureRequest) -> None:
    """An Adam step with bias correction, functional and in place, matches NumPy."""
    expect_failure(request, ADAM[name])
    run_case(ADAM[name])
