"""Position-based particle simulation (Verlet + XPBD + shape matching) and PC2 point caches.

Public scripting API (names kept stable)::

    from addon.simulation import World
    world = World(positions, inverse_masses=None, gravity=(0, 0, -9.81))
    world.add_distance(i, j, rest=None, compliance=0.0)
    world.add_pin(i); world.add_ground(height=0.0, friction=0.5)
    world.add_shape_match(indices, stiffness=1.0); world.add_volume(triangles, pressure=1.0)
    world.step(dt, substeps=10, iterations=1); world.positions
"""

from .colliders import BoxCollider, MeshCollider, SphereCollider
from .errors import PC2Error, SimulationDivergedError, SimulationError
from .pc2 import read_pc2, write_pc2
from .world import SOLVERS, World

__all__ = [
    "SOLVERS",
    "BoxCollider",
    "MeshCollider",
    "PC2Error",
    "SimulationDivergedError",
    "SimulationError",
    "SphereCollider",
    "World",
    "read_pc2",
    "write_pc2",
]
