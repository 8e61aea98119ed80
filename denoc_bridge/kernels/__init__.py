"""Private compiled kernels (numba ``@njit(cache=True)``), grouped by recursion pass.

Kernels take flat arrays only (no objects, no default arguments).  The public,
validated API lives in :mod:`denoc_bridge.algorithms`; the readable
explicit-matrix formulation that the kernels are tested against lives in
:mod:`denoc_bridge.algorithms.reference`.  The spatial convention is the one of
:mod:`denoc_bridge.spatial`.
"""

from denoc_bridge.kernels import cache as _cache
from denoc_bridge.kernels import inlining as _inlining
from denoc_bridge.kernels import notice as _notice

_cache.install()  # before any kernel's dispatcher asks numba where its cache is (kernels.cache)
_inlining.install()  # numba's inliner copies a callee once per call, not once per block
_notice.install()  # one line on stderr if a kernel compiles in this process (kernels.notice)
