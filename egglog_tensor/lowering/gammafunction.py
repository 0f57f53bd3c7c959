"""Gamma function pieces in scalar code (lowering/scalarcode.py) for the incomplete gamma and beta integrals
(incomplete.py, incompletebeta.py): the Lanczos approximation (Boost's N=13, g=6.024680040776729583740234375),
Gamma(z) = L(z) (z + g - 1/2)^(z - 1/2) e^-(z - 1/2), whose ratios of large arguments have no cancellation;
lgamma(1 + x) near 0 and 1 by its Taylor series; log Gamma(b + a) - log Gamma(b) for tiny a to a relative MACHEP."""

from __future__ import annotations

from .digamma import EULER
from .scalarcode import Real, fabs, floor, horner, lgamma, log, log1p, where
from .zeta import hurwitz_zeta

LANCZOS_G = 6.024680040776729583740234375
# sum_expg_scaled(a) = num(a) / den(a), coefficients highest power first (den(a) is a(a+1)...(a+11)).
_LANCZOS_NUM = (0.006061842346248906525783753964555936883222, 0.5098416655656676188125178644804694509993,
                19.51992788247617482847860966235652136208, 449.9445569063168119446858607650988409623,
                6955.999602515376140356310115515198987526, 75999.29304014542649875303443598909137092,
                601859.6171681098786670226533699352302507, 3481712.15498064590882071018964774556468,
                14605578.08768506808414169982791359218571, 43338889.32467613834773723740590533316085,
                86363131.28813859145546927288977868422342, 103794043.1163445451906271053616070238554,
                56906521.91347156388090791033559122686859)
_LANCZOS_DEN = (1, 66, 1925, 32670, 357423, 2637558, 13339535, 45995730, 105258076, 150917976, 120543840, 39916800, 0)


def lanczos_sum_expg_scaled(a: Real) -> Real:
    """L(a), the Lanczos sum scaled by e^g, as a rational in a (a <= 1) or in 1/a (a > 1: no overflow)."""
    inverse = 1.0 / a
    near = horner(_LANCZOS_NUM, a) / horner(_LANCZOS_DEN, a)
    far = horner(_LANCZOS_NUM[::-1], inverse) / horner(_LANCZOS_DEN[::-1], inverse)
    return where(a <= 1.0, near, far)


# lgamma(1 + x) = -EULER x + sum_{n >= 2} (-1)^n zeta(n) x^n / n (|x| <= 1/2), highest power first, to n = 64
# (at x = 1/2 the terms fall below 1e-17 of the sum from n = 60)
_LGAMMA1P_TAYLOR = tuple([(-1) ** n * hurwitz_zeta(n, 1.0) / n for n in range(64, 1, -1)] + [-EULER, 0.0])


def lgamma1p_near_zero(x: Real) -> Real:
    """lgamma(1 + x) for |x| <= 1/2 by its Taylor series (no libm call: GPU targets compute it)."""
    return horner(_LGAMMA1P_TAYLOR, x)


def lgamma1p(x: Real) -> Real:
    """lgamma(1 + x), accurate near x = 0 and x = 1 (where lgamma(1 + x) is near 0) by its Taylor series."""
    near_one = x - 1.0
    return where(fabs(x) <= 0.5, lgamma1p_near_zero(x),
                 where(fabs(near_one) < 0.5, log(x) + lgamma1p_near_zero(near_one), lgamma(x + 1.0)))


def gamma_sign(x: Real) -> Real:
    """The sign of Gamma(x), as Cephes' lgam_sgn gives it with log|Gamma(x)|: -1 where x < 0 is not an integer and floor(x)
    is odd, else 1 (at the poles too)."""
    n = floor(x)
    return where((x < 0.0) & (x != n) & (n - 2.0 * floor(0.5 * n) == 1.0), -1.0, 1.0)


def _horner_difference(coefficients: tuple[float, ...], u: Real, v: Real) -> tuple[Real, Real]:
    """(P(v), (P(u) - P(v)) / (u - v)) for the polynomial P of `coefficients` (highest power first), the divided
    difference by its own Horner recurrence: no cancellation where u is near v."""
    value, difference = Real(coefficients[0]), Real(0.0)
    for c in coefficients[1:]:
        difference = difference * u + value
        value = value * v + c
    return value, difference


def lgamma_shift(b: Real, a: Real) -> Real:
    """log Gamma(b + a) - log Gamma(b) for b > 0, to a relative MACHEP also where a is tiny: by the Lanczos form,
    log(L(b + a) / L(b)) (its rational's divided differences) + (b - 1/2) log1p(a / (b + g - 1/2)) + a log(b + a + g - 1/2) - a."""
    u = b + a

    def ratio_less_one(num: tuple[float, ...], den: tuple[float, ...], at_u: Real, at_v: Real, step: Real) -> Real:
        """L(u) / L(v) - 1 = step (N'[u, v] D(v) - N(v) D'[u, v]) / (N(v) D(u)), step = at_u - at_v."""
        n_v, n_d = _horner_difference(num, at_u, at_v)
        d_v, d_d = _horner_difference(den, at_u, at_v)
        return step * (n_d * d_v - n_v * d_d) / (n_v * (d_v + step * d_d))

    near = ratio_less_one(_LANCZOS_NUM, _LANCZOS_DEN, u, b, a)
    far = ratio_less_one(_LANCZOS_NUM[::-1], _LANCZOS_DEN[::-1], 1.0 / u, 1.0 / b, -a / (u * b))
    h = LANCZOS_G - 0.5
    return log1p(where(b <= 1.0, near, far)) + (b - 0.5) * log1p(a / (b + h)) + a * log(u + h) - a
