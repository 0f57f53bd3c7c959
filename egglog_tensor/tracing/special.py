"""scipy.special's elementwise functions (its ufuncs) in a kernel: `erf erfc gammaln gammainc gammaincc betainc
betaincc beta betaln binom exp1 expi i0e i1 ...` and the private ufuncs of scipy.special.zeta are ops of their own (OPS,
PRIVATE_OPS: libm's, or scalar code: lowering/incomplete.py, incompletebeta.py, betafunction.py, zeta.py...); the others
are made of NumPy's ufuncs and those ops by SciPy's own definitions (its special cases of 0, NaN and negative
arguments included), in the dtype SciPy's loop resolves. Those whose float32 loop SciPy computes in float64 are
computed in float64 here too and rounded once. A SciPy ufunc is recognized by identity (`scipy.special.<name> is
ufunc`, and `scipy.special._ufuncs.<name>` for the private ones scipy.stats calls), looked up only when the code calls
one: scipy is not imported here."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import UnsupportedError
from .core import Tracer, as_tracer, astype, fail, trace_of
from .polynomials import horner
from .special_bessel import BESSEL
from .special_distributions import DISTRIBUTIONS
from .special_polynomials import POLYNOMIALS

OPS = ("erf", "erfc", "gamma", "gammaln", "gammainc", "gammaincc", "gammaincinv", "gammainccinv", "psi", "betainc",
       "betaincc", "betaincinv", "betainccinv", "beta", "betaln", "binom", "poch", "exp1", "expi", "i0e", "i1", "i1e", "k0", "k0e", "k1", "k1e", "j0", "j1", "y0", "y1",
       "ellipk", "ellipkm1", "ellipe", "spence", "owens_t",
       "zetac", "agm", "expn", "ellipkinc", "ellipeinc", "elliprc", "elliprd", "elliprf", "elliprg",
       "dawsn", "erfi", "kolmogorov", "kolmogi")  # SciPy ufuncs that are ops of their own (ops.py)
# scipy.special._ufuncs' private ufuncs that are ops, by the op's name: those scipy.special.zeta calls (Riemann's, Hurwitz's)
# and scipy.stats' beta.pdf (Boost's ibeta_derivative, in the private ufunc's argument order x, a, b)
PRIVATE_OPS = {"_riemann_zeta": "riemann_zeta", "_zeta": "zeta", "_beta_pdf": "beta_pdf"}


def _module_of(ufunc: np.ufunc) -> str | None:
    """"scipy.special" when `ufunc` is that module's function of its name, or one of the private ufuncs of
    scipy.special._ufuncs that scipy.stats and scipy.special.zeta call (_PRIVATE, PRIVATE_OPS; None otherwise)."""
    name = ufunc.__name__
    module = sys.modules.get("scipy.special._ufuncs" if name in _PRIVATE or name in PRIVATE_OPS else "scipy.special")
    return "scipy.special" if module is not None and getattr(module, name, None) is ufunc else None


def is_op(ufunc: np.ufunc) -> bool:
    """Whether `ufunc` is NumPy's own of its name, or a SciPy ufunc that is an op of its own (OPS, PRIVATE_OPS)."""
    if getattr(np, ufunc.__name__, None) is ufunc:
        return True
    return (ufunc.__name__ in OPS or ufunc.__name__ in PRIVATE_OPS) and _module_of(ufunc) is not None


def composed(ufunc: np.ufunc) -> Callable[..., Tracer] | None:
    """The implementation of a SciPy ufunc made of NumPy's, or of an op whose SciPy loops take an integer argument
    (expn: _call casts it; an op's own loops are float ones), called through _call; None for NumPy's own ufuncs,
    SciPy's other OPS and other libraries' ufuncs, which tracing/ufuncs.py refuses; UnsupportedError naming a SciPy
    ufunc not implemented."""
    if _module_of(ufunc) is None:
        return None
    name = ufunc.__name__
    fn = _FUNCTIONS.get(name) or _PRIVATE.get(name)
    if fn is None and is_op(ufunc):
        return None
    if fn is None:
        raise fail(UnsupportedError, f"scipy.special.{name} is not supported in a kernel (supported: {', '.join(supported())})")
    return lambda *inputs: _call(ufunc, fn, inputs)


def supported() -> list[str]:
    """The scipy.special ufuncs a kernel computes."""
    return sorted({*_FUNCTIONS, *OPS})


def _call(ufunc: np.ufunc, fn: Callable[..., Any], inputs: Sequence[Any]) -> Tracer:
    """fn on the inputs cast to SciPy's loop dtype (float32: widened to float64 unless fn is _IN_LOOP_DTYPE), rounded to it."""
    from .ufuncs import loop_dtypes

    trace = trace_of(inputs)
    loop = loop_dtypes(ufunc, inputs)
    if any(d.kind not in "fi" for d in loop):  # (an integer loop argument, as bdtri's n: computed in float64)
        raise fail(UnsupportedError, f"scipy.special.{ufunc.__name__} on {loop[0]} is not supported (float32 and float64 are)")
    work = loop[-1] if fn in _IN_LOOP_DTYPE else np.dtype("float64")
    if loop[0].kind == "i":  # SciPy's loop of an integer degree or order (the orthogonal polynomials' recurrences;
        # expn's int64 order, exact in float64 below 2^53, which the op truncates as SciPy's float loop's cast to int)
        fn = getattr(fn, "integer_loop", fn)
    args = [astype(as_tracer(trace, v), work.name) for v in inputs]
    return astype(as_tracer(trace, fn(*args)), loop[-1].name)


def _expit(x: Tracer) -> Any:
    return 1 / (1 + np.exp(-x))


def _logit(x: Tracer) -> Any:  # SciPy's: log(x / (1 - x)), and near 1/2 the difference of two log1p's
    s = 2 * (x - 0.5)
    return np.where((x < 0.3) | (x > 0.65), np.log(x / (1 - x)), np.log1p(s) - np.log1p(-s))


def _log_expit(x: Tracer) -> Any:
    """SciPy's x - log1p(exp(x)) below 0 and -log1p(exp(-x)) from 0, as one expression: the same operations per branch."""
    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


def _times_log(log: Callable[[Any], Any]) -> Callable[[Tracer, Tracer], Any]:
    """xlogy, xlog1py: x * log(y) (log1p(y)), 0 where x is 0 and y is not NaN."""
    return lambda x, y: np.where((x == 0) & ~np.isnan(y), 0.0, x * log(y))


def _entr(x: Tracer) -> Any:
    return np.where(np.isnan(x), x, np.where(x > 0, -x * np.log(x), np.where(x == 0, 0.0, -np.inf)))


def _rel_entr(x: Tracer, y: Tracer) -> Any:
    """x log(x/y) for positive x and y as SciPy's: log1p of (x - y) / y where x/y is near 1, log(x) - log(y) where
    x/y over- or underflows; 0 at x = 0 <= y; inf where x or y is negative."""
    r = x / y
    inner = np.where((r > 0.5) & (r < 2), x * np.log1p((x - y) / y),
                     np.where((r > np.finfo(np.float64).tiny) & (r < np.inf), x * np.log(r), x * (np.log(x) - np.log(y))))
    value = np.where((x > 0) & (y > 0), inner, np.where((x == 0) & (y >= 0), 0.0, np.inf))
    return np.where(np.isnan(x) | np.isnan(y), np.nan, value)


def _kl_div(x: Tracer, y: Tracer) -> Any:
    """x log(x/y) - x + y for positive x and y (SciPy's formula: x/y may overflow); y at x = 0 <= y; inf where x or y is negative."""
    value = np.where((x > 0) & (y > 0), x * np.log(x / y) - x + y, np.where((x == 0) & (y >= 0), y, np.inf))
    return np.where(np.isnan(x) | np.isnan(y), np.nan, value)


def _ndtr(a: Tracer) -> Any:  # Cephes' ndtr: erf near 0, erfc of |x| beyond (no cancellation in either tail)
    x = a * np.sqrt(0.5)
    tail = 0.5 * call_op("erfc", np.abs(x))
    return np.where(np.abs(x) < np.sqrt(0.5), 0.5 + 0.5 * call_op("erf", x), np.where(x > 0, 1 - tail, tail))


def _log_ndtr(a: Tracer) -> Any:
    """log(ndtr(a)): log1p(-erfc(a/sqrt 2)/2) from -1 up (SciPy's form), log(erfc(-a/sqrt 2)/2) below (erfc has no
    cancellation there; SciPy's log(erfcx)-t^2 is the same value), and below -20, where erfc underflows, the
    asymptotic series -a^2/2 - log(-a) - log(2 pi)/2 + log(1 - 1/a^2 + 3/a^4 - ...) (its 12 terms reach 1e-20)."""
    t = a * np.sqrt(0.5)
    near = np.where(a < -1, np.log(0.5 * call_op("erfc", -t)), np.log1p(-0.5 * call_op("erfc", t)))
    inverse_square, term, series = 1.0 / (a * a), 1.0, 0.0
    for k in range(1, 13):
        term = -term * (2 * k - 1) * inverse_square
        series = series + term
    far = -0.5 * a * a - np.log(-a) - 0.5 * np.log(2 * np.pi) + np.log1p(series)
    return np.where(a < -20, far, near)


# Cephes' ndtri: rational approximations of the inverse of ndtr, in w = y - 1/2 for 0.135 < y < 0.865, else in
# 1/z with z = sqrt(-2 log y) (y < 1/2 mirrored), two of them for z below and above 8. Coefficients highest first.
_NDTRI_P0 = (-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1, 1.39312609387279679503E1,
             -1.23916583867381258016E0)
_NDTRI_Q0 = (1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1, -2.25462687854119370527E2,
             2.00260212380060660359E2, -8.20372256168333339912E1, 1.59056225126211695515E1, -1.18331621121330003142E0)
_NDTRI_P1 = (4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1, 4.40805073893200834700E1,
             1.46849561928858024014E1, 2.18663306850790267539E0, -1.40256079171354495875E-1, -3.50424626827848203418E-2,
             -8.57456785154685413611E-4)
_NDTRI_Q1 = (1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1, 1.50425385692907503408E1,
             2.50464946208309415979E0, -1.42182922854787788574E-1, -3.80806407691578277194E-2, -9.33259480895457427372E-4)
_NDTRI_P2 = (3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0, 1.33303460815807542389E0,
             2.01485389549179081538E-1, 1.23716634817820021358E-2, 3.01581553508235416007E-4, 2.65806974686737550832E-6,
             6.23974539184983293730E-9)
_NDTRI_Q2 = (1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0, 2.16236993594496635890E-1,
             1.34204006088543189037E-2, 3.28014464682127739104E-4, 2.89247864745380683936E-6, 6.79019408009981274425E-9)
_EXP_M2 = 0.13533528323661269189  # exp(-2)


def _ndtri_central(w: Tracer) -> Any:
    """ndtri(1/2 + w) for |w| < 1/2 - exp(-2) (Cephes' central rational approximation in w)."""
    w2 = w * w
    return (w + w * (w2 * horner(w2, _NDTRI_P0) / horner(w2, _NDTRI_Q0))) * np.sqrt(2 * np.pi)


def _ndtri(y0: Tracer) -> Any:
    flipped = y0 > 1.0 - _EXP_M2
    y = np.where(flipped, 1.0 - y0, y0)
    central = _ndtri_central(y - 0.5)
    z = np.sqrt(-2.0 * np.log(y))
    u = 1.0 / z
    correction = np.where(z < 8.0, u * horner(u, _NDTRI_P1) / horner(u, _NDTRI_Q1), u * horner(u, _NDTRI_P2) / horner(u, _NDTRI_Q2))
    tail = z - np.log(z) / z - correction
    value = np.where(y > _EXP_M2, central, np.where(flipped, tail, -tail))
    edges = np.where(y0 == 0.0, -np.inf, np.where(y0 == 1.0, np.inf, np.nan))
    return np.where((y0 > 0.0) & (y0 < 1.0), value, np.where(np.isnan(y0), y0, edges))


def _erfinv(y: Tracer) -> Any:
    """erfinv(y) = ndtri((1 + y) / 2) / sqrt 2 without forming 1 + y (which would lose y's low digits near 0, and
    1 - |y| near +-1): Cephes' central approximation in w = y / 2 where |y| < 1 - 2 exp(-2), else the tail's
    -ndtri((1 - |y|) / 2) / sqrt 2 with y's sign (1 - |y| exact there); +-inf at +-1, NaN outside [-1, 1].
    (SciPy's own is Boost's; within a few ULP of it.)"""
    central = np.abs(y) < 1.0 - 2 * _EXP_M2
    tail = -_ndtri(0.5 * (1.0 - np.abs(y))) * np.sign(y)
    value = np.where(central, _ndtri_central(0.5 * np.where(central, y, 0.0)), tail) * np.sqrt(0.5)
    return np.where((y > -1) & (y < 1), value, np.where(y == -1, -np.inf, np.where(y == 1, np.inf, np.nan)))


def _erfcinv(y: Tracer) -> Any:
    """SciPy's erfcinv: -ndtri(y / 2) / sqrt 2 on (0, 2), inf at 0, -inf at 2, NaN outside."""
    value = -_ndtri(0.5 * y) * np.sqrt(0.5)
    return np.where((y > 0) & (y < 2), value, np.where(y == 0, np.inf, np.where(y == 2, -np.inf, np.nan)))


def _rgamma(x: Tracer) -> Any:
    """1 / gamma(x): 0 at the poles (0 and the negative integers) and at +-inf, as SciPy's."""
    poles = (x <= 0) & (x == np.floor(x))
    return np.where(poles, 0.0, 1.0 / call_op("gamma", np.where(poles, 1.0, x)))


def _loggamma(x: Tracer) -> Any:
    """scipy.special.loggamma of real x: gammaln(x) for x >= 0, NaN below (its complex branch is not real there)."""
    return np.where(x < 0, np.nan, call_op("gammaln", x))


def _gammasgn(x: Tracer) -> Any:
    """The sign of gamma(x) as SciPy's: 1 for x > 0 (and +0, +inf), -1 for -0, NaN at the negative integers and
    -inf; between the negative integers (-1)^ceil(-x)."""
    below = np.floor(x)
    negative = np.where((x == below) | np.isinf(x), np.nan, np.where(np.fmod(below, 2.0) == 0, 1.0, -1.0))
    return np.where(x > 0, 1.0, np.where(x == 0, np.where(np.signbit(x), -1.0, 1.0), np.where(np.isnan(x), x, negative)))


def _exprel(x: Tracer) -> Any:
    """(e^x - 1) / x as SciPy's: expm1(x) / x, 1 where |x| < 1e-16, inf above 717."""
    return np.where(np.abs(x) < 1e-16, 1.0, np.where(x > 717, np.inf, np.expm1(x) / np.where(x == 0, 1.0, x)))


ERFCX_ASYMPTOTIC = 26.0  # from here on erfcx's asymptotic series (its 9 terms reach below 1e-18 of the sum)


def _erfcx(x: Tracer) -> Any:
    """exp(x^2) erfc(x): for 0 <= x < 26 erfc(x) times exp(x^2) with x^2's rounding carried (x^2 = s + r exactly,
    exp(s) (1 + r)); above, the asymptotic series 1/(x sqrt(pi)) sum (-1)^k (2k-1)!! / (2x^2)^k; for x < 0,
    2 exp(x^2) - erfcx(-x) (inf below about -26.6)."""
    a = np.abs(x)
    s = a * a
    b = np.where(a < 1e150, a, 0.0)  # (Dekker: b = hi + lo, 26 bits each, so r is exact; 0 where b * 2^27 overflows)
    split = 134217729.0 * b
    hi = split - (split - b)
    lo = b - hi
    r = np.where(a < 1e150, ((hi * hi - s) + 2.0 * hi * lo) + lo * lo, 0.0)
    near = np.exp(s) * (1.0 + r) * call_op("erfc", a)
    u = 1.0 / (2.0 * s)
    series, term = 1.0, 1.0
    for k in range(1, 10):
        term = term * -(2 * k - 1) * u
        series = series + term
    far = series / (np.where(a > 0, a, 1.0) * np.sqrt(np.pi))
    positive = np.where(a < ERFCX_ASYMPTOTIC, near, far)
    return np.where(x >= 0, positive, 2.0 * np.exp(s) * (1.0 + r) - positive)


def _huber(delta: Tracer, r: Tracer) -> Any:
    value = np.where(np.abs(r) <= delta, 0.5 * r * r, delta * (np.abs(r) - 0.5 * delta))
    return np.where(delta < 0, np.inf, value)


def _pseudo_huber(delta: Tracer, r: Tracer) -> Any:
    """delta^2 (sqrt(1 + (r/delta)^2) - 1) as expm1(log1p(u^2) / 2): no cancellation for small r/delta."""
    u = r / delta
    value = np.where((delta == 0) | (r == 0), 0.0, delta * delta * np.expm1(0.5 * np.log1p(u * u)))
    return np.where(delta < 0, np.inf, value)


def _boxcox(log: Callable[[Any], Any]) -> Callable[[Tracer, Tracer], Any]:
    """boxcox, boxcox1p: (x^l - 1) / l as expm1(l log x) / l (log1p for boxcox1p), log x where |l| < 1e-19."""
    return lambda x, lmbda: np.where(np.abs(lmbda) < 1e-19, log(x), np.expm1(lmbda * log(x)) / lmbda)


def _gamma_tail(complement: bool) -> Callable[[Tracer, Tracer, Tracer], Any]:
    """gdtr(a, b, x) (gdtrc: complement): the gamma distribution's cdf (sf) at x of rate a and shape b, P(b, a x)
    (Q); NaN where x < 0."""
    name = "gammaincc" if complement else "gammainc"
    return lambda a, b, x: np.where(x < 0, np.nan, call_op(name, b, a * x))


def _chi2_tail(complement: bool) -> Callable[[Tracer, Tracer], Any]:
    """chdtr(df, x) (chdtrc: complement): the chi-square distribution's cdf (sf), P(df / 2, x / 2) (Q); NaN where x < 0."""
    name = "gammaincc" if complement else "gammainc"
    return lambda df, x: np.where(x < 0, np.nan, call_op(name, 0.5 * df, 0.5 * x))


def _poisson_tail(complement: bool) -> Callable[[Tracer, Tracer], Any]:
    """pdtr(k, m) (pdtrc: complement): the Poisson distribution's cdf (sf) at k of mean m, Q(floor(k) + 1, m) (P);
    in Cephes' order: NaN where k or m is negative, then 1 (0) where m is 0 (k NaN too)."""
    name = "gammainc" if complement else "gammaincc"
    value = lambda k, m: np.where(m == 0, float(not complement), call_op(name, np.floor(k) + 1, m))  # noqa: E731
    return lambda k, m: np.where((k < 0) | (m < 0), np.nan, value(k, m))


def _chdtri(df: Tracer, y: Tracer) -> Any:
    """The chi-square distribution's inverse survival function: 2 gammainccinv(df / 2, y)."""
    return 2.0 * call_op("gammainccinv", 0.5 * df, y)


def _pdtri(k: Tracer, y: Tracer) -> Any:
    """The Poisson mean m with pdtr(k, m) = y: gammainccinv(floor(k) + 1, y); NaN for k < 0 or infinite, y outside [0, 1)."""
    return np.where((k < 0) | np.isinf(k) | (y < 0) | (y >= 1), np.nan, call_op("gammainccinv", np.floor(k) + 1, y))


def _incbet(a: Tracer, b: Tracer, x: Tracer) -> Any:
    """Cephes' incbet, which SciPy's bdtr fdtr nbdtr call: betainc, but NaN where a or b is <= 0 or infinite."""
    return np.where((a <= 0) | (b <= 0) | np.isinf(a) | np.isinf(b), np.nan, call_op("betainc", a, b, x))


def _binomial_tail(complement: bool) -> Callable[[Tracer, Tracer, Tracer], Any]:
    """bdtr(k, n, p) (bdtrc: complement): the binomial distribution's cdf (sf) at floor(k) of trunc(n) trials
    (SciPy's cast to int) of probability p, I_(1-p)(n - k, k + 1) (I_p(k + 1, n - k)), as Cephes': NaN where p is
    outside [0, 1], n is not finite or k > n (and bdtr's k < 0); 1 (0) at k = n, bdtrc 1 below k = 0; at k = 0
    (1 - p)^n (1 - it, by expm1 and log1p where p < 0.01)."""

    def tail(k: Tracer, n: Tracer, p: Tracer) -> Any:
        k, n = np.floor(k), np.trunc(n)
        rest = n - k
        if complement:
            at_zero = np.where(p < 0.01, -np.expm1(rest * np.log1p(-p)), 1.0 - (1.0 - p) ** rest)
            value = np.where(k < 0, 1.0, np.where(k == n, 0.0, np.where(k == 0, at_zero, _incbet(k + 1, rest, p))))
            invalid = np.isnan(k) | ((k >= 0) & (k > n))
        else:
            value = np.where(k == n, 1.0, np.where(k == 0, (1.0 - p) ** rest, _incbet(rest, k + 1, 1.0 - p)))
            invalid = np.isnan(k) | (k < 0) | (n < k)
        return np.where(invalid | np.isnan(p) | (p < 0) | (p > 1) | ~np.isfinite(n), np.nan, value)

    return tail


def _negative_binomial_tail(complement: bool) -> Callable[[Tracer, Tracer, Tracer], Any]:
    """nbdtr(k, n, p) (nbdtrc: complement): the negative binomial distribution's cdf (sf) at trunc(k) failures before
    the trunc(n)-th success of probability p (SciPy's casts to int), I_p(n, k + 1) (I_(1-p)(k + 1, n)); NaN where p
    is outside [0, 1], k < 0 or k, n are not finite."""

    def tail(k: Tracer, n: Tracer, p: Tracer) -> Any:
        k, n = np.trunc(k), np.trunc(n)
        value = _incbet(k + 1, n, 1.0 - p) if complement else _incbet(n, k + 1, p)
        return np.where((p < 0) | (p > 1) | (k < 0) | ~np.isfinite(k) | ~np.isfinite(n), np.nan, value)

    return tail


def _f_tail(complement: bool) -> Callable[[Tracer, Tracer, Tracer], Any]:
    """fdtr(dfn, dfd, x) (fdtrc: complement): the F distribution's cdf (sf), I_w(dfn / 2, dfd / 2) at
    w = dfn x / (dfd + dfn x) (I_(1-w)(dfd / 2, dfn / 2)); NaN where dfn or dfd <= 0 or NaN or x < 0, 1 (0) at x = inf."""

    def tail(dfn: Tracer, dfd: Tracer, x: Tracer) -> Any:
        w = dfn * x
        value = _incbet(0.5 * dfd, 0.5 * dfn, dfd / (dfd + w)) if complement else _incbet(0.5 * dfn, 0.5 * dfd, w / (dfd + w))
        value = np.where(np.isinf(x), float(not complement), value)
        return np.where((dfn <= 0) | (dfd <= 0) | (x < 0) | np.isnan(dfn) | np.isnan(dfd), np.nan, value)

    return tail


def _stdtr(df: Tracer, t: Tracer) -> Any:
    """stdtr(df, t): Student's t distribution's cdf, as Boost's students_t: half the incomplete beta integral of the
    tail, I_z(df / 2, 1/2) at z = df / (df + t^2), or 1 - I(1/2, df / 2) at t^2 / (df + t^2) where df > 2 t^2;
    the normal cdf for infinite df; NaN where df <= 0 or df or t is NaN."""
    square = t * t
    tail = 0.5 * np.where(df > 2 * square, call_op("betaincc", 0.5, 0.5 * df, square / (df + square)),
                          call_op("betainc", 0.5 * df, 0.5, df / (df + square)))
    value = np.where(np.isinf(df), _ndtr(t), np.where(t > 0, 1.0 - tail, tail))
    return np.where((df <= 0) | np.isnan(t) | np.isnan(df), np.nan, np.where(np.isinf(t), np.where(t > 0, 1.0, 0.0), value))


def _stdtrit(df: Tracer, p: Tracer) -> Any:
    """stdtrit(df, p): Student's t quantile, as Boost's students_t: t^2 = df y / x with x = 1 - y the root of
    I_x(df / 2, 1/2) = 2 min(p, 1 - p) (each solved for: betaincinv, betainccinv of the swapped equation, so both
    keep their digits), negative below p = 1/2; the normal quantile for infinite df; SciPy's edges: inf at p = 0
    and 1 (Boost's overflow, its sign lost), NaN where df <= 0, p is outside [0, 1] or NaN."""
    tail = 2 * np.minimum(p, 1 - p)
    x, y = call_op("betaincinv", 0.5 * df, 0.5, tail), call_op("betainccinv", 0.5, 0.5 * df, tail)
    t = np.sqrt(df * y / x)
    value = np.where(np.isinf(df), _ndtri(p), np.where(p < 0.5, -t, np.where(p == 0.5, 0.0, t)))
    value = np.where((p == 0) | (p == 1), np.inf, value)
    return np.where((df <= 0) | np.isnan(df) | np.isnan(p) | (p < 0) | (p > 1), np.nan, value)


def _fdtri(dfn: Tracer, dfd: Tracer, p: Tracer) -> Any:
    """fdtri(dfn, dfd, p): the F distribution's quantile, as Boost's fisher_f: dfd x / (dfn y) with x the root of
    I_x(dfn / 2, dfd / 2) = p and y = 1 - x that of 1 - I_y(dfd / 2, dfn / 2) = p (each solved for); 0 at p = 0,
    inf at p = 1; NaN where dfn or dfd is not positive and finite or p is outside [0, 1]."""
    x, y = call_op("betaincinv", 0.5 * dfn, 0.5 * dfd, p), call_op("betainccinv", 0.5 * dfd, 0.5 * dfn, p)
    value = np.where(p == 0, 0.0, np.where(p == 1, np.inf, dfd * x / (dfn * y)))
    invalid = ~np.isfinite(dfn) | ~np.isfinite(dfd) | (dfn <= 0) | (dfd <= 0) | np.isnan(p) | (p < 0) | (p > 1)
    return np.where(invalid, np.nan, value)


def _infinite_k(k: Tracer, value: Any, complement: bool, at_nan: float) -> Any:
    """SciPy's wrappers of Boost's discrete cdf (sf: complement): value at a finite k; at an infinite k the cdf 0 at
    -inf and 1 at +inf, `at_nan` at NaN, the sf NaN."""
    return np.where(np.isfinite(k), value, np.nan if complement else np.where(np.isnan(k), at_nan, np.where(k > 0, 1.0, 0.0)))


def _binomial(k: Tracer, n: Tracer, p: Tracer, complement: bool) -> Any:
    """Boost's binomial cdf (sf: complement) at k of n trials: 1 - I_p(k + 1, n - k) (I_p); 1 (0) at k = n or p = 0,
    0 (1) at p = 1; NaN where n is negative or not finite, p is outside [0, 1] or k is outside [0, n]."""
    value = np.where((k == n) | (p == 0), float(not complement), np.where(p == 1, float(complement),
                     call_op("betainc" if complement else "betaincc", k + 1, n - k, p)))
    invalid = ~np.isfinite(n) | (n < 0) | np.isnan(p) | (p < 0) | (p > 1) | (k < 0) | (k > n)
    return _infinite_k(k, np.where(invalid, np.nan, value), complement, np.nan)


def _negative_binomial(k: Tracer, n: Tracer, p: Tracer, complement: bool) -> Any:
    """Boost's negative binomial cdf (sf: complement) at k failures before the n-th success: I_p(n, k + 1) (1 - it);
    NaN where n is not positive and finite, p is outside [0, 1] or k < 0."""
    value = call_op("betaincc" if complement else "betainc", n, k + 1, p)
    invalid = ~np.isfinite(n) | (n <= 0) | np.isnan(p) | (p < 0) | (p > 1) | (k < 0)
    return _infinite_k(k, np.where(invalid, np.nan, value), complement, 1.0)


def call_op(name: str, *args: Tracer) -> Tracer:
    """scipy.special's ufunc `name` that is an op (OPS: erf, erfc, gammainc...; PRIVATE_OPS: _zeta...) of args."""
    from .ufuncs import apply_ufunc

    return apply_ufunc(trace_of(list(args)), getattr(sys.modules["scipy.special._ufuncs"], name), args)


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "expit": _expit, "logit": _logit, "log_expit": _log_expit,
    "xlogy": _times_log(np.log), "xlog1py": _times_log(np.log1p),
    "entr": _entr, "rel_entr": _rel_entr, "kl_div": _kl_div,
    "ndtr": _ndtr, "log_ndtr": _log_ndtr, "ndtri": _ndtri, "huber": _huber, "pseudo_huber": _pseudo_huber,
    "boxcox": _boxcox(np.log), "boxcox1p": _boxcox(np.log1p),
    "gdtr": _gamma_tail(False), "gdtrc": _gamma_tail(True), "chdtr": _chi2_tail(False), "chdtrc": _chi2_tail(True),
    "pdtr": _poisson_tail(False), "pdtrc": _poisson_tail(True), "chdtri": _chdtri, "pdtri": _pdtri,
    "erfinv": _erfinv, "erfcinv": _erfcinv, "rgamma": _rgamma, "loggamma": _loggamma, "gammasgn": _gammasgn,
    "exprel": _exprel, "erfcx": _erfcx,
    "bdtr": _binomial_tail(False), "bdtrc": _binomial_tail(True), "nbdtr": _negative_binomial_tail(False),
    "nbdtrc": _negative_binomial_tail(True), "fdtr": _f_tail(False), "fdtrc": _f_tail(True), "stdtr": _stdtr,
    "stdtrit": _stdtrit, "fdtri": _fdtri, **DISTRIBUTIONS, **POLYNOMIALS, **BESSEL,
    # SciPy's own spellings of NumPy's functions
    "expm1": np.expm1, "log1p": np.log1p, "cbrt": np.cbrt, "exp2": np.exp2, "round": np.rint,
    "exp10": lambda x: np.power(10.0, x),
    # ops whose SciPy loops take an integer argument too ('ld->d'): _call casts it to float64
    "expn": lambda n, x: call_op("expn", n, x),
}
_IN_LOOP_DTYPE = {_expit, _logit, _log_expit}  # SciPy's float32 loops of these compute in float32
# scipy.special._ufuncs' private ufuncs that scipy.stats' binom and nbinom cdf and sf and beta's ppf call (Boost's
# binomial and negative binomial distributions, its beta distribution's quantile: ibeta_inv), recognized by identity
# as the public ones
_PRIVATE: dict[str, Callable[..., Any]] = {
    "_beta_ppf": lambda q, a, b: call_op("betaincinv", a, b, q),
    "_binom_cdf": lambda k, n, p: _binomial(k, n, p, False), "_binom_sf": lambda k, n, p: _binomial(k, n, p, True),
    "_nbinom_cdf": lambda k, n, p: _negative_binomial(k, n, p, False), "_nbinom_sf": lambda k, n, p: _negative_binomial(k, n, p, True),
}

from . import special_elementary  # noqa: E402  (it imports call_op from this module)

_FUNCTIONS.update(special_elementary.FUNCTIONS)
_IN_LOOP_DTYPE.update(special_elementary.IN_LOOP_DTYPE)
