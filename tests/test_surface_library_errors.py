"""Clear errors for what library code does that a kernel cannot trace (issue 25): scikit-learn's input
check branching on `np.isfinite(X).all()` where no call's values are known (a kernel's call takes it as a
guard), SciPy's compiled `cdist` (the code shapes, written here), and compiled code given tracers (SciPy's own)."""

from __future__ import annotations

import numpy as np
import pytest

import egglog_tensor as et
from egglog_tensor.spec import specs_of
from egglog_tensor.stages import trace


def validated(X):
    """scikit-learn's _assert_all_finite shape: a branch on a value only a run can tell."""
    if not np.isfinite(X).all():
        raise ValueError("Input contains NaN or infinity")
    return X * 2.0


def traced_from_shapes(fn, *arrays):
    """Trace fn from its arguments' shapes only (stages.trace, no call's values): a data value has no value there."""
    names = tuple(f"X{i}" if i else "X" for i in range(len(arrays)))
    return trace(fn, names, specs_of(names, list(arrays)), et.kernel(fn).options)


def test_isfinite_branch_names_the_line_and_what_to_do() -> None:
    """A kernel's call takes the branch as a guard (tests/test_guards.py); tracing without values explains the check."""
    with pytest.raises(et.ConcreteValueError, match=r"(?s)if not np.isfinite\(X\).all\(\).*assume_finite=True.*check_finite=False"):
        traced_from_shapes(validated, np.ones(3))
    np.testing.assert_array_equal(et.kernel(validated)(np.ones(3)), validated(np.ones(3)))


def test_other_branches_keep_the_plain_message() -> None:
    def f(X):
        return X if X.sum() > 0 else -X

    with pytest.raises(et.ConcreteValueError) as info:
        traced_from_shapes(f, np.ones(3))
    assert "assume_finite" not in str(info.value)


# SciPy's scipy.spatial.distance.cdist: NumPy's own asarray (bound at import) hands the array to compiled code.
SCIPY_LIKE: dict = {"__name__": "scipy.spatial.distance", "np_asarray": np.asarray}
exec("def cdist(XA, XB, metric='euclidean'):\n"  # noqa: S102  (a module of SciPy's name, for the frame check)
     "    XA, XB = np_asarray(XA), np_asarray(XB)\n"
     "    return XA\n", SCIPY_LIKE)


def test_scipy_cdist_gets_a_clear_error_with_the_numpy_spelling() -> None:
    def vq(obs, code_book):  # SciPy's py_vq: the distances from cdist, then argmin
        dist = SCIPY_LIKE["cdist"](obs, code_book)
        return dist.argmin(axis=1)

    with pytest.raises(et.ConcreteValueError, match=r"(?s)SciPy's cdist runs compiled code.*np.sqrt\(\(\(XA\[:, None, :\] - XB"):
        et.kernel(vq)(np.ones((4, 2)), np.ones((3, 2)))


def test_the_numpy_spelling_of_vq_matches_scipys_results() -> None:
    def vq(obs, code_book):
        dist = np.sqrt(((obs[:, None, :] - code_book[None, :, :]) ** 2).sum(-1))
        code = dist.argmin(axis=1)
        return code, np.take_along_axis(dist, code[:, None], axis=1)[:, 0]

    rng = np.random.default_rng(5)
    obs, book = rng.standard_normal((20, 3)), rng.standard_normal((4, 3))
    got, want = et.kernel(vq)(obs, book), vq(obs, book)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-14)


def test_compiled_library_code_given_tracers_is_named_with_its_call() -> None:
    """SciPy's Cython vq refuses the Tracer by type; its C spline evaluation (cspline1d_eval's BSpline) refuses it as
    not a contiguous array (no 'Tracer' in the message): both become an UnsupportedError at the library line calling
    the compiled function."""
    from scipy import signal
    from scipy.cluster.vq import vq

    with pytest.raises(et.UnsupportedError, match=r"(?s)compiled code .*got Tracer.*cannot be traced.*scipy/cluster/vq.py:\d+: result = _vq.vq"):
        et.kernel(lambda obs, book: vq(obs, book)[0])(np.ones((4, 2)), np.ones((3, 2)))
    with pytest.raises(et.UnsupportedError, match=r"(?s)traced arrays \(x\) raised ValueError: Expected a 1-dim C contiguous.*_bsplines.py:\d+"):
        et.kernel(lambda x: signal.cspline1d_eval(x, np.linspace(0.0, 7.0, 5)))(np.ones(8))


def test_the_users_own_errors_pass_through_unchanged() -> None:
    with pytest.raises(ValueError, match="invalid literal for int"):
        et.kernel(lambda x: x + int("x"))(np.ones(8))
