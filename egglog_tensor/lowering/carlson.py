"""scipy.special's Carlson symmetric elliptic integrals of real arguments elliprc elliprd elliprf elliprg by SciPy's
algorithm (its ellint_carlson library, as SciPy 1.17's, with its relative error bound 5e-16), in float64 (float32: the
float64 value rounded once, as SciPy's loops): Carlson's duplication x_i -> (x_i + lambda) / 4 until the mean A
exceeds both max|A0 - x_i| / 4^m and the spread divided by the bound's eighth root, then the Taylor series in the
normalized differences (DLMF 19.36.1-2, R_D's to the 7th degree), the sums and products compensated (TwoSum and FMA's
TwoProduct) as SciPy's:

- R_C(x, y): NaN for y = 0 (or subnormal), x < 0 or NaN; 0 where x or y is infinite (y NaN included); for y < 0
  Cauchy's principal value R_C(x - y, -y) sqrt(x / (x - y)).
- R_F(x, y, z) (sorted): NaN for a negative or NaN argument, 0 where one is infinite, inf where two are 0 (or
  subnormal); where one is, the AGM of the other two's square roots pi / (2 M(sqrt y, sqrt z)) minus sqrt(x / yz).
- R_D(x, y, z): NaN for a negative or NaN argument, inf at z = 0 and at x = y = 0, 0 where one is infinite; the
  duplication's sum_m 4^-m / (sqrt z_m (z_m + lambda_m)) added three times.
- R_G(x, y, z): inf where one is infinite (none negative), NaN for a negative or NaN argument; of the sorted z >= y >=
  x, sqrt(z) / 2 where x and y are 0 (or subnormal), the AGM of sqrt y and sqrt z with the sum of its squared
  differences where x is (DLMF 19.22.6), else the cyclic sum (x (y + z) R_D(y, z, x) + ...) / 6 (DLMF 19.21.11).
"""

from __future__ import annotations

import math as pymath
from collections.abc import Sequence

from .scalarcode import Real, Truth, choose, fabs, isinf, isnan, iterate, sqrt, two_product, two_sum, where

BOUND = 5e-16  # SciPy's relative error bound (ellint_carlson_wrap.cxx)
MAX_STEPS = 1001
SMALLEST_NORMAL = 2.2250738585072014e-308
_RC = (80080.0, 0.0, 24024.0, 11440.0, 30030.0, 32760.0, 61215.0, 90090.0)  # (lowest power first)
_RF1, _RF2, _RF33, _RF_DENOMINATOR = (0.0, -24024.0, 10010.0, -5775.0), (17160.0, -16380.0, 15015.0), 6930.0, 240240.0
_RD = ((0.0, -875160.0, 417690.0, -255255.0), (0.0, 680680.0, 306306.0), (0.0, -706860.0, 675675.0), (-556920.0, 612612.0),
       (471240.0, -540540.0))
_RD_DENOMINATOR = 4084080.0


def _octic_root(x: float) -> float:
    return pymath.sqrt(pymath.sqrt(pymath.sqrt(x)))


def _sum(values: Sequence[Real]) -> Real:
    """sum of values, compensated (SciPy's nsum2)."""
    total, error = Real(0.0), Real(0.0)
    for v in values:
        total, e = two_sum(v, total)
        error = error + e
    return total + error


def _dot(xs: Sequence[Real], ys: Sequence[Real]) -> Real:
    """sum x_i y_i, compensated (SciPy's ndot2)."""
    total, error = Real(0.0), Real(0.0)
    for x, y in zip(xs, ys, strict=True):
        h, r = two_product(x, y)
        total, q = two_sum(total, h)
        error = error + (q + r)
    return total + error


def _horner(x: Real, coefficients: Sequence[float]) -> Real:
    """The polynomial of coefficients (lowest power first) at x by the compensated Horner scheme (SciPy's comp_horner)."""
    s, r = Real(coefficients[-1]), Real(0.0)
    for c in coefficients[-2::-1]:
        p, pp = two_product(s, x)
        s, ps = two_sum(p, Real(c))
        r = r * x + (pp + ps)
    return s + r


def _tiny(x: Real) -> Truth:
    """SciPy's too_small: 0 or subnormal."""
    return fabs(x) < SMALLEST_NORMAL


def _largest(values: Sequence[Real]) -> Real:
    """max |v|."""
    best = fabs(values[0])
    for v in values[1:]:
        best = where(best < fabs(v), fabs(v), best)
    return best


def _sorted(x: Real, y: Real, z: Real) -> tuple[Real, Real, Real]:
    """x, y, z in ascending order of magnitude (as SciPy sorts them)."""

    def pair(a: Real, b: Real) -> tuple[Real, Real]:
        swap = fabs(b) < fabs(a)
        return where(swap, b, a), where(swap, a, b)

    x, y = pair(x, y)
    y, z = pair(y, z)
    x, y = pair(x, y)
    return x, y, z


def _rc_positive(x: Real, y: Real) -> Real:
    """R_C(x, y) for x >= 0, y > 0, both finite."""
    mean = (x + 2.0 * y) / 3.0
    spread = fabs(mean - x) / _octic_root(3.0 * BOUND)

    def step(state: list[Real]) -> tuple[list[Real], Truth]:
        a, xm, ym, sm, f = state
        going = ~(where(fabs(xm - ym) < f, f, fabs(xm - ym)) < fabs(a))
        lam = 2.0 * sqrt(xm) * sqrt(ym) + ym
        following = [(a + lam) * 0.25, (xm + lam) * 0.25, (ym + lam) * 0.25, sm * 0.25, f * 0.25]
        new = [where(going, n, s) for n, s in zip(following, state, strict=True)]
        return new, ~going

    _, xm, ym, sm, _ = iterate([mean, x, y, y - mean, spread], step, MAX_STEPS)
    mean = (xm + ym + ym) / 3.0
    return _horner(sm / mean, _RC) / (sqrt(mean) * _RC[0])


def elliprc(x: Real, y: Real) -> Real:
    """scipy.special.elliprc (module docstring)."""
    principal = y < 0.0
    u, v = where(principal, x - y, x), where(principal, -y, y)
    invalid = _tiny(v) | ~(u >= 0.0)
    infinite = isinf(u) | isinf(v)
    value = choose(invalid | infinite | isnan(v), lambda: where(invalid, float("nan"), where(infinite, 0.0, v)),
                   lambda: _rc_positive(u, v))
    return where(principal, value * sqrt(x / (x - y)), value)


def _agm(y: Real, z: Real, bound: float, weighted: bool) -> tuple[Real, Real, Real]:
    """The AGM of sqrt y and sqrt z until their difference is below 2 sqrt(bound) of the smaller (SciPy's rf0 and rg0
    loops): the means a and b, and (weighted: R_G's) -(a0^2 - sum_j 2^(j-1) (a_j - b_j)^2) compensated, else 0."""
    limit = 2.0 * pymath.sqrt(bound)
    a, b = sqrt(y), sqrt(z)
    half = (a + b) * 0.5

    def step(state: list[Real]) -> tuple[list[Real], Truth]:
        a, b, factor, total, error = state
        going = ~(fabs(a - b) < limit * where(a < b, a, b))
        a2, b2 = (a + b) * 0.5, sqrt(a * b)
        factor2 = factor * 2.0
        h, r = two_product(factor2, (a2 - b2) * (a2 - b2))
        total2, q = two_sum(total, h)
        following = [a2, b2, factor2, total2, error + (q + r)] if weighted else [a2, b2, factor, total, error]
        return [where(going, n, o) for n, o in zip(following, state, strict=True)], ~going

    a, b, _, total, error = iterate([a, b, Real(0.25), -half * half, Real(0.0)], step, MAX_STEPS)
    return a, b, total + error


def _rf0(y: Real, z: Real, bound: float) -> Real:
    """R_F(0, y, z) = pi / (2 M(sqrt y, sqrt z)) (SciPy's rf0)."""
    a, b, _ = _agm(y, z, bound, False)
    return pymath.pi / (a + b)


def _rg0(y: Real, z: Real) -> Real:
    """R_G(0, y, z) by the AGM and the sum of its squared differences (SciPy's rg0, DLMF 19.22.6)."""
    a, b, total = _agm(y, z, BOUND, True)
    return pymath.pi / (a + b) * (-0.5 * total)


def _duplicated(x: Real, y: Real, z: Real, weights: int, bound: float) -> tuple[Real, ...]:
    """Carlson's duplication from (x, y, z) with mean (x + y + (weights - 2) z) / weights, until the mean exceeds the
    spread: (x_m, y_m, z_m, (A0 - x) / 4^m, (A0 - y) / 4^m, 4^-m, and R_D's sum of 4^-j / (sqrt z_j (z_j + lambda_j))
    with its compensation)."""
    mean = _sum([x, y, *([z] * (weights - 2))]) / float(weights)
    dx, dy = mean - x, mean - y
    root = _octic_root(3.0 * bound if weights == 3 else bound / 5.0)
    spread = _largest([dx, dy, mean - z]) / root

    def step(state: list[Real]) -> tuple[list[Real], Truth]:
        a, xm, ym, zm, ex, ey, f, power, total, error = state
        going = (fabs(a) <= f) | (fabs(a) <= _largest([ex, ey, a - zm]))
        sx, sy, sz = sqrt(xm), sqrt(ym), sqrt(zm)
        lam = _dot([sx, sy, sz], [sy, sz, sx])
        term = power / (sz * (zm + lam))
        added, e = two_sum(term, total)
        following = [(a + lam) * 0.25, (xm + lam) * 0.25, (ym + lam) * 0.25, (zm + lam) * 0.25, ex * 0.25, ey * 0.25, f * 0.25,
                     power * 0.25, added, error + e]
        new = [where(going, n, s) for n, s in zip(following, state, strict=True)]
        return new, ~going

    start = [mean, x, y, z, dx, dy, spread, Real(1.0), Real(0.0), Real(0.0)]
    _, xm, ym, zm, ex, ey, _, power, total, error = iterate(start, step, MAX_STEPS)
    return xm, ym, zm, ex, ey, power, total, error


def _rf_series(x: Real, y: Real, z: Real, bound: float) -> Real:
    """R_F(x, y, z) of sorted positive finite arguments, the smallest not tiny."""
    xm, ym, zm, ex, ey, *_ = _duplicated(x, y, z, 3, bound)
    mean = _sum([xm, ym, zm]) / 3.0
    ex, ey = ex / mean, ey / mean
    ez = -(ex + ey)
    e2, e3 = ex * ey - ez * ez, ex * (ey * ez)
    s = _horner(e2, _RF1) + e3 * (_horner(e2, _RF2) + e3 * _RF33)
    return (s / _RF_DENOMINATOR + 1.0) / sqrt(mean)


def _rf(x: Real, y: Real, z: Real, bound: float) -> Real:
    """R_F of sorted arguments with SciPy's edges (module docstring)."""
    invalid = ~(x >= 0.0) | ~(y >= 0.0) | ~(z >= 0.0)
    infinite = isinf(x) | isinf(y) | isinf(z)
    edge = invalid | infinite | _tiny(y)
    value = choose(edge, lambda: where(invalid, float("nan"), where(infinite, 0.0, float("inf"))),
                   lambda: choose(_tiny(x), lambda: _rf0(y, z, 0.5 * bound) - sqrt(x / (y * z)), lambda: _rf_series(x, y, z, bound)))
    return value


def elliprf(x: Real, y: Real, z: Real) -> Real:
    """scipy.special.elliprf (module docstring)."""
    return _rf(*_sorted(x, y, z), BOUND)


def _rd_series(x: Real, y: Real, z: Real, bound: float) -> Real:
    """R_D(x, y, z) of nonnegative finite arguments, z and x + y not tiny."""
    xm, ym, zm, ex, ey, power, total, error = _duplicated(x, y, z, 5, bound)
    mean = _sum([xm, ym, zm, zm, zm]) / 5.0
    ex, ey = ex / mean, ey / mean
    ez = (ex + ey) / -3.0
    xy, zz2 = ex * ey, ez * ez
    e2, e3, e4, e5 = xy - zz2 * 6.0, (xy * 3.0 - zz2 * 8.0) * ez, (xy - zz2) * zz2 * 3.0, xy * zz2 * ez
    t = sqrt(mean)
    terms = [_horner(e2, _RD[0]), _horner(e3, _RD[1]), _horner(e2, _RD[2]), _horner(e2, _RD[3]), _horner(e2, _RD[4]), e3 * _RD[4][1]]
    series = _dot(terms, [Real(1.0), Real(1.0), e3, e4, e5, e4]) / _RD_DENOMINATOR + 1.0
    return _dot([power / (t * t * t), Real(3.0), Real(3.0)], [series, total, error])


def _rd(x: Real, y: Real, z: Real, bound: float) -> Real:
    """R_D with SciPy's edges (module docstring)."""
    invalid = ~(x >= 0.0) | ~(y >= 0.0) | ~(z >= 0.0)
    infinite = isinf(x) | isinf(y) | isinf(z)
    singular = _tiny(z) | (_tiny(x) & _tiny(y))
    edge = invalid | singular | infinite
    value = where(invalid, float("nan"), where(_tiny(z), float("inf"), where(infinite, 0.0, float("inf"))))
    return choose(edge, lambda: value, lambda: _rd_series(x, y, z, bound))


def elliprd(x: Real, y: Real, z: Real) -> Real:
    """scipy.special.elliprd (module docstring)."""
    return _rd(x, y, z, BOUND)


def elliprg(x: Real, y: Real, z: Real) -> Real:
    """scipy.special.elliprg (module docstring)."""
    low, middle, high = _sorted(x, y, z)
    invalid = ~(x >= 0.0) | ~(y >= 0.0) | ~(z >= 0.0)
    infinite = (isinf(x) | isinf(y) | isinf(z)) & ~invalid

    def cyclic() -> Real:
        weights = [_dot([x, x], [y, z]), _dot([y, y], [x, z]), _dot([z, z], [x, y])]
        return _dot(weights, [_rd(y, z, x, BOUND), _rd(z, x, y, BOUND), _rd(x, y, z, BOUND)]) / 6.0

    def finite() -> Real:  # (a negative subnormal counts as 0 there, as SciPy's; sqrt makes other negatives NaN)
        return choose(_tiny(low), lambda: choose(_tiny(middle), lambda: sqrt(high) * 0.5, lambda: _rg0(middle, high)), cyclic)

    nan = isnan(x) | isnan(y) | isnan(z)
    return choose(infinite | nan, lambda: where(nan, float("nan"), float("inf")), finite)
