"""scipy.special.zeta and zetac by SciPy's algorithms (Cephes' zeta, riemann_zeta and zetac), in float64 (float32:
the float64 value rounded once, as SciPy's loops), and Hurwitz's zeta(s, q) of Python floats, for constants (digamma.py, gammafunction.py):

- Hurwitz's zeta(x, q) (`zeta`): inf at x = 1 and at q a nonpositive integer, NaN for x < 1 and for q < 0 where x is
  not an integer; (1 / (x - 1) + 1 / 2q) q^(1 - x) for q > 1e8; else the Euler-Maclaurin formula: the terms
  (q + k)^-x summed until a term is below MACHEP of the sum or (from 9 terms) q + k > 9, then the integral, half the
  last term and up to 12 terms of B_2j / (2j)! stopped at one below MACHEP of the sum.
- Riemann's zeta(x) (`riemann_zeta`) and zeta(x) - 1 (`zetac`, the same parts without the 1): 1 + zetac(x) for
  x >= 0 - tabulated at the integers below 31, a rational
  approximation on [0, 1), 2^-x (1 - 1/x)^-1 P(1/x) / Q(1/x) on (1, 10], exp of a rational plus 2^-x on (10, 50],
  the sum of odd k^-x beyond (1 from 127) - a Taylor polynomial on (-0.01, 0), and the reflection formula below
  with Gamma through the Lanczos approximation; NaN at NaN and -inf.
"""

from __future__ import annotations

import math as pymath

from .scalarcode import Real, Truth, choose, entry, exp, fabs, floor, fmod, horner, isnan, iterate, sin, table, truth, where

MACHEP = 2.0**-53
# (2j)! / B_2j, Cephes' constants (its Euler-Maclaurin terms divide by them)
ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10, -2.950130727918164224e12,
          1.1646782814350067249e14, -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)
_AZETAC = (-1.50000000000000000000e0, 0.0, 6.44934066848226436472e-1, 2.02056903159594285400e-1, 8.23232337111381915160e-2,
           3.69277551433699263314e-2, 1.73430619844491397145e-2, 8.34927738192282683980e-3, 4.07735619794433937869e-3,
           2.00839282608221441785e-3, 9.94575127818085337146e-4, 4.94188604119464558702e-4, 2.46086553308048298638e-4,
           1.22713347578489146752e-4, 6.12481350587048292585e-5, 3.05882363070204935517e-5, 1.52822594086518717326e-5,
           7.63719763789976227360e-6, 3.81729326499983985646e-6, 1.90821271655393892566e-6, 9.53962033872796113152e-7,
           4.76932986787806463117e-7, 2.38450502727732990004e-7, 1.19219925965311073068e-7, 5.96081890512594796124e-8,
           2.98035035146522801861e-8, 1.49015548283650412347e-8, 7.45071178983542949198e-9, 3.72533402478845705482e-9,
           1.86265972351304900640e-9, 9.31327432419668182872e-10)  # zeta(n) - 1 for n < 31 (n = 1 unused)
_P = (5.85746514569725319540e11, 2.57534127756102572888e11, 4.87781159567948256438e10, 5.15399538023885770696e9,
      3.41646073514754094281e8, 1.60837006880656492731e7, 5.92785467342109522998e5, 1.51129169964938823117e4,
      2.01822444485997955865e2)  # (highest power first, as Cephes' polevl takes them)
_Q = (1.0, 3.90497676373371157516e11, 5.22858235368272161797e10, 5.64451517271280543351e9, 3.39006746015350418834e8,
      1.79410371500126453702e7, 5.66666825131384797029e5, 1.60382976810944131506e4, 1.96436237223387314144e2)
_A = (8.70728567484590192539e6, 1.76506865670346462757e8, 2.60889506707483264896e10, 5.29806374009894791647e11,
      2.26888156119238241487e13, 3.31884402932705083599e14, 5.13778997975868230192e15, -1.98123688133907171455e15,
      -9.92763810039983572356e16, 7.82905376180870586444e16, 9.26786275768927717187e16)
_B = (1.0, -7.92625410563741062861e6, -1.60529969932920229676e8, -2.37669260975543221788e10, -4.80319584350455169857e11,
      -2.07820961754173320170e13, -2.96075404507272223680e14, -4.86299103694609136686e15, 5.34589509675789930199e15,
      5.71464111092297631292e16, -1.79915597658676556828e16)
_R = (-3.28717474506562731748e-1, 1.55162528742623950834e1, -2.48762831680821954401e2, 1.01050368053237678329e3,
      1.26726061410235149405e4, -1.11578094770515181334e5)
_S = (1.0, 1.95107674914060531512e1, 3.17710311750646984099e2, 3.03835500874445748734e3, 2.03665876435770579345e4,
      7.43853965136767874343e4)
_TAYLOR0 = (-1.0000000009110164892, -1.0000000057646759799, -9.9999983138417361078e-1, -1.0000013011460139596,
            -1.000001940896320456, -9.9987929950057116496e-1, -1.000785194477042408, -1.0031782279542924256,
            -9.1893853320467274178e-1, -1.5)
_SQRT2OPI = 7.978845608028653558798921198687637369517e-1  # sqrt(2 / pi)


def hurwitz_zeta(s: int, q: float) -> float:
    """zeta(s, q) = sum_k (k + q)^-s of Python floats for an integer s >= 2 and q > -1 not an integer nor 0: the terms
    below k = 10 summed, the rest by Euler and Maclaurin with ZETA_A (to double precision)."""
    n = 10
    tail = n + q
    terms = [(k + q) ** -s for k in range(n)] + [tail ** (1 - s) / (s - 1), 0.5 * tail**-s]
    rising = float(s)  # s (s+1) ... (s+2j-2)
    for j, a in enumerate(ZETA_A, 1):
        terms.append(rising * tail ** (-s - 2 * j + 1) / a)
        rising *= (s + 2 * j - 1) * (s + 2 * j)
    return pymath.fsum(terms)


def _euler_maclaurin(x: Real, q: Real) -> Real:
    """Cephes' sum for zeta(x, q): the terms to where q + k > 9 (at least 9 of them), then the integral and the
    Bernoulli terms, each part stopped where a term falls below MACHEP of the sum."""

    def step(state: list[Real]) -> tuple[list[Real], Truth]:
        i, a, _, total, _ = state
        i, a = i + 1.0, a + 1.0
        b = a**-x
        total = total + b
        converged = fabs(b / total) < MACHEP
        return [i, a, b, total, where(converged, 1.0, 0.0)], converged | ~((i < 9.0) | (a <= 9.0))

    _, w, b, total, converged = iterate([Real(0.0), q, Real(0.0), q**-x, Real(0.0)], step, 2**62)

    def tail() -> Real:
        s = total + b * w / (x - 1.0) - 0.5 * b
        a, c, k, done = Real(1.0), b, 0.0, truth(False)
        for coefficient in ZETA_A:
            a, c = a * (x + k), c / w
            t = a * c / coefficient
            s = where(done, s, s + t)
            done = done | (fabs(t / s) < MACHEP)
            a, c, k = a * (x + (k + 1.0)), c / w, k + 2.0
        return s

    return choose(converged == 1.0, lambda: total, tail)


def zeta(x: Real, q: Real) -> Real:
    """Hurwitz's zeta(x, q), scipy.special.zeta(x, q) (Cephes' zeta)."""
    pole = (q <= 0.0) & (q == floor(q))
    edge = (x == 1.0) | (x < 1.0) | ((q <= 0.0) & (pole | (x != floor(x))))
    value = where(x == 1.0, float("inf"), where(x < 1.0, float("nan"), where(pole, float("inf"), float("nan"))))
    asymptotic = lambda: (1.0 / (x - 1.0) + 1.0 / (2.0 * q)) * q ** (1.0 - x)  # noqa: E731
    return choose(edge, lambda: value, lambda: choose(q > 1e8, asymptotic, lambda: _euler_maclaurin(x, q)))


def _zetac_positive(x: Real) -> Real:
    """zeta(x) - 1 for x >= 0 (Cephes' zetac_positive)."""

    def odd_powers() -> Real:  # x > 50
        def step(state: list[Real]) -> tuple[list[Real], Truth]:
            a, total = state
            a = a + 2.0
            b = a**-x
            total = total + b
            return [a, total], ~(b / total > MACHEP)

        total = iterate([Real(1.0), Real(0.0)], step, 2**62)[1]
        b = Real(2.0) ** -x
        return (total + b) / (1.0 - b)

    def up_to_ten() -> Real:
        w = 1.0 / x
        return x * horner(_P, w) / (Real(2.0) ** x * (x - 1.0) * horner(_Q, w))

    def rational() -> Real:
        return choose(x < 1.0, lambda: horner(_R, x) / ((1.0 - x) * horner(_S, x)),
                      lambda: choose(x <= 10.0, up_to_ten, lambda: exp(horner(_A, x) / horner(_B, x)) + Real(2.0) ** -x))

    tabulated = (x == floor(x)) & (x < 31.0)
    return choose(x == 1.0, lambda: Real(float("inf")), lambda: choose(x >= 127.0, lambda: Real(0.0), lambda: choose(
        tabulated, lambda: entry(table([_AZETAC]), Real(0.0), x), lambda: choose(x <= 50.0, rational, odd_powers))))


def _reflection(x: Real) -> Real:
    """zeta(-x) for x > 0.01 by the reflection formula, Gamma(x + 1) through the Lanczos approximation, its large
    power split where it overflows (Cephes' zeta_reflection)."""
    from .gammafunction import LANCZOS_G, lanczos_sum_expg_scaled  # (here: gammafunction's constants use hurwitz_zeta)

    small = -_SQRT2OPI * sin(0.5 * pymath.pi * fmod(x, 4.0)) * (lanczos_sum_expg_scaled(x + 1.0) * zeta(x + 1.0, Real(1.0)))
    base = (x + LANCZOS_G + 0.5) / (2.0 * pymath.pi * pymath.e)
    large = base ** (x + 0.5)
    half = base ** (0.5 * x + 0.25)
    value = where(fabs(large) < float("inf"), large * small, half * small * half)
    return where(0.5 * x == floor(0.5 * x), 0.0, value)


def _riemann(x: Real, one: float) -> Real:
    """zeta(x) - 1 + one (Cephes' riemann_zeta where one is 1, zetac where it is 0): one plus zetac_positive for x >= 0
    or the Taylor polynomial on (-0.01, 0), the reflection minus 1 - one below; NaN at NaN and -inf."""
    return choose(isnan(x) | (x == float("-inf")), lambda: x + float("nan"), lambda: choose(
        x >= 0.0, lambda: one + _zetac_positive(x), lambda: choose(x > -0.01, lambda: one + horner(_TAYLOR0, x),
                                                                    lambda: _reflection(-x) - (1.0 - one))))


def riemann_zeta(x: Real) -> Real:
    """Riemann's zeta(x), scipy.special.zeta(x) (Cephes' riemann_zeta)."""
    return _riemann(x, 1.0)


def zetac(x: Real) -> Real:
    """zeta(x) - 1, scipy.special.zetac (Cephes' zetac: no cancellation for large x, where zeta(x) - 1 is 2^-x)."""
    return _riemann(x, 0.0)
