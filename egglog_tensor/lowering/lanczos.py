"""The Lanczos approximation of Gamma (Boost's N=13, g=6.024680040776729583740234375) in scalar code
(lowering/scalarcode.py): Gamma(z) = L(z) (z + g - 1/2)^(z - 1/2) e^-(z - 1/2), whose ratios of large
arguments have no cancellation (the incomplete gamma and beta integrals' factors: incomplete.py, incompletebeta.py)."""

from __future__ import annotations

from .scalarcode import Real, horner, where

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
