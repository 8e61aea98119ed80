"""Tree algorithms on the module graph (each assumes a tree :class:`~denoc_bridge.Model`;
:mod:`denoc_bridge.dynamics` decides, for the public functions, whether constraints apply).

* :mod:`.dynamics`: the recursive O(n) algorithms (compiled kernels) behind the public API;
* :mod:`.kinematics`: forward kinematics, centre of mass, energies;
* :mod:`.configuration`: neutral and random configurations and the joint manifolds' operations;
* :mod:`.reference`: the explicit DeNOC matrices and the readable module-level
  formulation that the recursive algorithms are tested against.
"""
