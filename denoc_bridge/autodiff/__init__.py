"""Bridges from denoc_bridge's analytical derivatives to automatic-differentiation frameworks.

:mod:`denoc_bridge.autodiff.jax` (the ``autodiff`` extra: ``pip install "denoc-bridge[autodiff]"``)
wraps the forward dynamics as a JAX function whose reverse-mode derivative is the package's
O(n) matrix-free adjoint (:func:`denoc_bridge.forward_dynamics_vjp`).  This package imports no
framework itself, and nothing in denoc_bridge imports it (the top layer of ``ARCHITECTURE.md``).
"""
