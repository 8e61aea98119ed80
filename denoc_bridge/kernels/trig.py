"""Branch-free cosine and sine for the geometry pass.

The C library's ``sin``/``cos`` branch on the argument (range and quadrant).
On a long chain with joint angles in every quadrant the branch predictor
cannot learn the pattern, and the two calls cost about 19 ns per joint at
100,000 joints against 10 ns at 1,000 (measured; the predictor memorises the
pattern of a short chain called repeatedly).  :func:`cos_sin` has no
data-dependent branch: Cody-Waite reduction by pi/2 (two steps, as fdlibm's
``__ieee754_rem_pio2`` medium case), the fdlibm kernels ``__kernel_sin`` and
``__kernel_cos`` on the reduced argument and its tail, and the quadrant
applied with selects.  It agrees with the C library to 1 ulp (tests), costs
the same whatever the angles, and lets a loop of joints compile to
straight-line code.

Valid for ``|x| <= TRIG_LIMIT`` (the reduction needs ``|x| / (pi/2) < 2**20``);
callers check their arguments once (:func:`poly_ok`) and fall back to the C
library beyond.

The polynomial coefficients and the split of pi/2 are those of fdlibm:
Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved.
Developed at SunSoft, a Sun Microsystems, Inc. business.  Permission to use,
copy, modify, and distribute this software is freely granted, provided that
this notice is preserved.
"""

import numpy as np
from numba import njit

TRIG_LIMIT = 1.0e5

INVPIO2 = 6.36619772367581382433e-01  # 2 / pi
PIO2_1 = 1.57079632673412561417e00  # first 33 bits of pi/2
PIO2_2 = 6.07710050630396597660e-11  # next 33 bits
PIO2_2T = 2.02226624879595063154e-21  # pi/2 - PIO2_1 - PIO2_2
S1, S2, S3, S4, S5, S6 = (
    -1.66666666666666324348e-01,
    8.33333333332248946124e-03,
    -1.98412698298579493134e-04,
    2.75573137070700676789e-06,
    -2.50507602534068634195e-08,
    1.58969099521155010221e-10,
)
C1, C2, C3, C4, C5, C6 = (
    4.16666666666666019037e-02,
    -1.38888888888741095749e-03,
    2.48015872894767294178e-05,
    -2.75573143513906633035e-07,
    2.08757232129817482790e-09,
    -1.13596475577881948265e-11,
)


@njit(cache=True)
def poly_ok(q):
    """True when every entry of q is within +-TRIG_LIMIT (then :func:`cos_sin` is valid for all)."""
    for i in range(q.shape[0]):
        if not abs(q[i]) <= TRIG_LIMIT:
            return False
    return True


@njit(cache=True, inline="always", fastmath={"contract"})
def cos_sin(x):
    """(cos x, sin x) for |x| <= TRIG_LIMIT, within 1 ulp, without data-dependent branches."""
    fn = np.floor(x * INVPIO2 + 0.5)  # nearest multiple of pi/2
    t = x - fn * PIO2_1  # exact
    w = fn * PIO2_2
    r = t - w
    w = fn * PIO2_2T - ((t - r) - w)
    y0 = r - w  # x - fn pi/2 = y0 + y1, |y0| <= pi/4
    y1 = (r - y0) - w
    z = y0 * y0
    v = z * y0
    rs = S2 + z * (S3 + z * (S4 + z * (S5 + z * S6)))
    ks = y0 - ((z * (0.5 * y1 - v * rs) - y1) - v * S1)  # __kernel_sin(y0, y1)
    rc = z * (C1 + z * (C2 + z * (C3 + z * (C4 + z * (C5 + z * C6)))))
    hz = 0.5 * z
    wc = 1.0 - hz
    kc = wc + (((1.0 - wc) - hz) + (z * rc - y0 * y1))  # __kernel_cos(y0, y1)
    n = int(fn)
    odd = (n & 1) != 0  # quadrant n mod 4, by selects
    a = ks if odd else kc
    b = kc if odd else ks
    return (-a if (n + 1) & 2 else a), (-b if n & 2 else b)


@njit(cache=True, inline="always")
def cos_sin_any(x, poly):
    """:func:`cos_sin` when ``poly`` (from :func:`poly_ok`), else the C library."""
    if poly:
        return cos_sin(x)
    return np.cos(x), np.sin(x)
