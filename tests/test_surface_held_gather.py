"""Gathers from NumPy arrays the kernel's objects hold, with traced indices (issue 25): llama3.np's
`self.tok_embedding[input_ids]`, a global table, a closure, a weight dict. The array is a constant of the
kernel; the indices are checked at run time (NumPy's IndexError, never a crash); the holders keep the array."""

from __future__ import annotations

import numpy as np
import pytest

import egglog_tensor as et

RNG = np.random.default_rng(25)
TABLE = RNG.standard_normal((7, 3))  # small: embedded in the module
EMBEDDING = RNG.standard_normal((300, 8)).astype(np.float32)  # large: a hidden argument
WEIGHTS = {"embed": EMBEDDING, "norm": 1.0 + RNG.standard_normal(8).astype(np.float32),
           "head": RNG.standard_normal((11, 8)).astype(np.float32)}


def lookup(ids):
    return TABLE[ids] * 2.0, TABLE[ids, 1:]


class Model:
    """The shape of llama3.np's Llama: weights taken from a dict in __init__, the embedding indexed by token ids."""

    def __init__(self, weights: dict) -> None:
        self.tok_embedding = weights.get("embed")
        self.norm = weights["norm"]
        self.lm_head_weight = weights.get("head").T

    def __call__(self, input_ids):
        h = self.tok_embedding[input_ids]
        h = h / np.sqrt(np.mean(h * h, axis=-1, keepdims=True) + 1e-6) * self.norm
        return h[:, [-1], :] @ self.lm_head_weight


MODEL = Model(WEIGHTS)


def test_global_table_with_traced_ids_matches_numpy() -> None:
    ids = np.array([[0, 6, -1], [3, -7, 2]])
    for got, want in zip(et.kernel(lookup)(ids), lookup(ids), strict=True):
        np.testing.assert_array_equal(got, want)
    assert type(TABLE) is np.ndarray  # the global holds its array again


def test_a_global_is_found_beside_a_large_object_graph() -> None:
    """The holders are searched breadth first: with a local reaching 200,000 dicts (as a test's fixtures
    reach pytest's objects), the global table is still found (depth first, the search ran out first)."""
    crowd = [{"i": i} for i in range(200_000)]
    ids = np.array([1, 5])
    np.testing.assert_array_equal(et.kernel(lookup)(ids)[0], lookup(ids)[0])
    assert len(crowd) == 200_000


@pytest.mark.parametrize("made_inside", [False, True])
def test_llama_style_forward_matches_numpy(made_inside: bool) -> None:
    """The model made outside the kernel (its attribute holds the embedding) or inside it (the weight dict does)."""
    forward = (lambda ids: Model(WEIGHTS)(ids)) if made_inside else (lambda ids: MODEL(ids))
    ids = np.array([[3, 1, 299, 1, 5]])
    np.testing.assert_allclose(et.kernel(forward)(ids), forward(ids), rtol=2e-6, atol=2e-6)
    assert WEIGHTS["embed"] is EMBEDDING and MODEL.tok_embedding is EMBEDDING


def test_out_of_range_ids_raise_numpys_index_error_at_run_time() -> None:
    k = et.kernel(lambda ids: MODEL(ids))
    with pytest.raises(IndexError):
        MODEL(np.array([[1, 300]]))  # NumPy
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 300"):
        k(np.array([[1, 300]]))
    with pytest.raises(IndexError, match="out of bounds"):
        k(np.array([[-301, 0]]))
    ids = np.array([[2, -300]])
    np.testing.assert_allclose(k(ids), MODEL(ids), rtol=2e-6, atol=2e-6)  # the kernel still runs


def test_closure_and_dict_holders() -> None:
    params = {"wte": RNG.standard_normal((9, 4)), "wpe": RNG.standard_normal((5, 4))}
    table = RNG.standard_normal((6, 2)).astype(np.float32)

    def gpt_embed(inputs):  # picoGPT's `wte[inputs] + wpe[range(len(inputs))]`, weights from a dict
        return params["wte"][inputs] + params["wpe"][range(len(inputs))], table[inputs % 6]

    inputs = np.array([8, 0, 3, 3, 1])
    for got, want in zip(et.kernel(gpt_embed)(inputs), gpt_embed(inputs), strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    assert type(params["wte"]) is np.ndarray and type(table) is np.ndarray


def test_a_local_concrete_array_gets_a_clear_error() -> None:
    def f(ids):
        local = TABLE.copy()  # a NumPy array only this frame holds: nothing to replace
        return local[ids]

    with pytest.raises(et.UnsupportedError, match=r"indexed with traced indices.*pass it as an argument(.|\n)*local\[ids\]"):
        et.kernel(f)(np.array([1]))


def test_arrays_made_of_constants_in_the_kernel_are_traced_where_they_meet_traced_values() -> None:
    """np.array / np.asarray of constants give NumPy's arrays while tracing; one indexed with traced indices (a lookup
    table), or a view of one (array-API-compat's clip: a broadcast bound indexed by a traced mask), is traced again as a
    constant (tracing/creation.py)."""
    def lookup(ids, x):
        lut = np.array([10.0, 20.0, 30.0, 40.0])
        return lut[ids] + x[ids]

    def clip_below(x):  # array_api_compat's clip(x, 0.0), as scikit-learn's cosine_distances runs it
        a = np.broadcast_to(np.asarray(0.0, dtype=x.dtype), x.shape)
        out = x.copy()
        below = (out < a) | np.isnan(a)
        out[below] = a[below]
        return out

    ids, x = np.array([0, 3, 1, 2, 3]), np.arange(-2.0, 3.0)
    np.testing.assert_array_equal(et.kernel(lookup)(ids, x), lookup(ids, x))
    np.testing.assert_array_equal(et.kernel(clip_below)(x), clip_below(x))


HELD_TWICE = {"table": TABLE}
IN_A_TUPLE = (TABLE,)  # a tuple cannot be changed: the array stays there


def test_an_array_read_where_it_cannot_be_replaced_gets_a_clear_error() -> None:
    with pytest.raises(et.UnsupportedError, match=r"indexed with traced indices(.|\n)*IN_A_TUPLE\[0\]\[ids\]"):
        et.kernel(lambda ids: IN_A_TUPLE[0][ids])(np.array([1]))
    assert HELD_TWICE["table"] is TABLE and type(TABLE) is np.ndarray


def test_writing_into_a_held_array_is_refused_and_it_is_restored() -> None:
    def f(ids):
        row = TABLE[ids]
        TABLE[0] = 1.0  # NumPy would change the global: a kernel refuses
        return row

    with pytest.raises(et.UnsupportedError, match="captured by the kernel"):
        et.kernel(f)(np.array([1]))
    assert type(TABLE) is np.ndarray and TABLE[0, 0] != 1.0
