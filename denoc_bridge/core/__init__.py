"""The compiled core: the recursions of :mod:`denoc_bridge.kernels` in Cython, compiled when the
package is built (issue 48).

``tree`` (``tree.pyx`` and the ``.pxi`` files it includes, one per recursion pass) holds the
tree's single-state forward and inverse dynamics: the same model table ``kt`` and work array
layout as the numba kernels (:mod:`denoc_bridge.kernels.tables`, mirrored in ``tables.pxd``),
the same entries, arguments and status codes, so that both run on ``model._kt`` and
``model.thread_work()`` in one process.
"""
