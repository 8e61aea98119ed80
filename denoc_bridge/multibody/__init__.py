"""What a robot is: joints, kinematic modules, the model, its work buffers and the
descriptions of its constraints (mimic couplings, loop closures).

Nothing here runs an algorithm; every layer above reads these objects and never modifies them.
"""
