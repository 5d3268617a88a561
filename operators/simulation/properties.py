"""Operator properties shared by the simulation bakes, and their translation into domain settings."""

# No "from __future__ import annotations": the panel reuses these property annotations as objects.
import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty

from ...addon.simulation.scenes import SimulationSettings

SOLVER_ITEMS = (
    ("GAUSS_SEIDEL", "Gauss-Seidel", "Constraints one after another: stiffer, converges faster"),
    ("JACOBI", "Jacobi", "Constraints averaged: order-independent and softer (squishier)"),
)
RIGID_CONTACT_ITEMS = (
    (
        "FIT",
        "Body Fit",
        "Each body moves to best meet all its contacts at once: heaps stand steeper, but bodies do not roll "
        "and lose their spin",
    ),
    (
        "SEQUENTIAL",
        "Sequential",
        "Contacts solved one after another: bodies roll, topple and keep their spin, piles come to rest "
        "sooner, Rolling Resistance applies; about 1.3x the time",
    ),
)
CACHE_ITEMS = (
    ("PC2", "PC2 File", "Write a PC2 point cache beside the .blend, played by a Mesh Cache modifier"),
    ("SHAPE_KEYS", "Shape Keys", "Store every frame as a shape key inside the .blend (larger file)"),
)
CACHE_MODIFIER = "ProcAnim Cache"
SHAPE_KEY_PREFIX = "ProcAnim "
DEFAULT_CACHE_DIRECTORY = "procanim_cache"
DEFAULT_ANCHORS = ("Rope Start", "Rope End")


# --------------------------------------------------------------------------- shared properties


class _SolverProperties:
    frame_count: IntProperty(
        name="Frames",
        description="How many frames to simulate, starting at the scene's start frame",
        default=72,
        min=1,
        max=10000,
    )
    substeps: IntProperty(
        name="Substeps",
        description=(
            "Small time steps per frame (with Auto Substeps: rigid piles use at least this many, soft bodies "
            "ignore it); more substeps make constraints stiffer and collisions safer"
        ),
        default=20,
        min=1,
        max=500,
    )
    iterations: IntProperty(
        name="Iterations",
        description="Constraint projections per substep (many substeps with one iteration is usually best)",
        default=1,
        min=1,
        max=50,
    )
    solver: EnumProperty(
        name="Solver", description="How constraints are projected", items=SOLVER_ITEMS, default="GAUSS_SEIDEL"
    )
    stretch_compliance: FloatProperty(
        name="Stretch Compliance",
        description="Softness of edges and rope links (XPBD compliance, m/N); 0 keeps them at rest length",
        default=0.0,
        min=0.0,
        soft_max=0.01,
        precision=5,
        step=0.01,
    )
    damping: FloatProperty(
        name="Damping",
        description="Fraction of velocity lost per second (air drag); 0 swings forever",
        default=0.1,
        min=0.0,
        max=0.99,
    )
    friction: FloatProperty(
        name="Friction",
        description=(
            "Coulomb friction against the ground, colliders and other bodies (0 = ice); for rigid piles, "
            "the friction of bodies already sliding (dynamic)"
        ),
        default=0.5,
        min=0.0,
        soft_max=2.0,
    )
    particle_radius: FloatProperty(
        name="Particle Radius",
        description="Collision thickness of every particle (vertex) against colliders and other bodies",
        default=0.02,
        min=0.001,
        soft_max=0.5,
        unit="LENGTH",
    )
    use_ground: BoolProperty(
        name="Ground", description="Collide with an infinite horizontal ground plane", default=True
    )
    ground_height: FloatProperty(
        name="Ground Height", description="Height (z) of the ground plane", default=0.0, unit="LENGTH"
    )


class _AutoSubstepProperties(_SolverProperties):
    auto_substeps: BoolProperty(
        name="Auto Substeps",
        description=(
            "Choose substeps per frame from the mesh's edge length, the speed and the frame rate: few while "
            "falling or resting, more on impact (a frame whose edges stretch too far is redone), never "
            "letting a vertex move further than its particle radius in one substep. Off uses Substeps"
        ),
        default=True,
    )
    max_stretch: FloatProperty(
        name="Max Stretch",
        description=(
            "Edge stretch (fraction of rest length) allowed: with Auto Substeps a frame stretched further is "
            "redone; soft bodies with Limit Stretch pull longer edges back to it"
        ),
        default=0.08,
        min=0.005,
        max=1.0,
        subtype="FACTOR",
    )


class _RigidPileProperties(_AutoSubstepProperties):
    static_friction: FloatProperty(
        name="Static Friction",
        description=(
            "Friction a resting body must overcome to start sliding (Friction is the one while it slides). "
            "A box stays on a slope up to arctan(Static Friction): 27 degrees at 0.5, 31 at 0.6, 39 at 0.8"
        ),
        default=0.6,
        min=0.0,
        max=5.0,
        soft_max=2.0,
    )
    pour_interval: IntProperty(
        name="Pour Interval",
        description=(
            "Frames between drops: the selected bodies wait where they are and fall one after another, "
            "lowest first, each once nothing is in its way (0 drops them all at once)"
        ),
        default=0,
        min=0,
        max=1000,
    )
    pour_drop: FloatProperty(
        name="Pour Drop",
        description=(
            "With a Pour Interval: each body is let go this far above what lies beneath it (the heap or the "
            "floor), as from a funnel raised as the heap grows, instead of falling from where it waits (0). "
            "A low drop heaps bodies at the slope their friction holds; a long fall spreads them flatter"
        ),
        default=0.0,
        min=0.0,
        max=100.0,
        soft_max=2.0,
        unit="LENGTH",
    )
    rigid_contacts: EnumProperty(
        name="Contacts", description="How contacts between the bodies are solved", items=RIGID_CONTACT_ITEMS,
        default="FIT",
    )  # fmt: skip
    rolling_resistance: FloatProperty(
        name="Rolling Resistance",
        description=(
            "How hard rolling is (Sequential contacts only): a torque of this times the contact's load times "
            "the radius the body rolls on there against rolling (a wheel's or a ball's radius; a box's edge "
            "is as round as its collision particles), so a rolling wheel slows at this times g / 2 and a "
            "ball at this times g / 1.4 (0 rolls freely; tyres on road about 0.01, a ball on grass about 0.1)"
        ),
        default=0.0,
        min=0.0,
        max=1.0,
        soft_max=0.3,
    )


class _SoftBodyProperties(_AutoSubstepProperties):
    limit_stretch: BoolProperty(
        name="Limit Stretch",
        description=(
            "At the end of every frame pull edges stretched past Max Stretch back (strain limiting, like "
            "Cloth's max stretch), so Auto Substeps needs only the substeps the motion needs: 2-7x faster "
            "on meshes of 642 to 10,242 vertices. Meshes baked alone only: with several meshes at once it "
            "stays off and the substeps keep the stretch"
        ),
        default=True,
    )
    use_volume: BoolProperty(
        name="Keep Volume",
        description="Keep the volume of closed meshes (a pressure constraint): jelly instead of cloth",
        default=True,
    )
    pressure: FloatProperty(
        name="Pressure",
        description="Target volume as a multiple of the rest volume (above 1 inflates)",
        default=1.0,
        min=0.1,
        max=5.0,
    )
    shape_stiffness: FloatProperty(
        name="Shape Stiffness",
        description="Pull towards the rest shape by shape matching (0 = off, 1 = rigid)",
        default=0.2,
        min=0.0,
        max=1.0,
    )
    self_collision: BoolProperty(
        name="Self Collision",
        description=(
            "Vertices of each mesh push each other apart (spheres of 0.6 edge lengths), so a folding or "
            "crumpling mesh never passes through itself; costs extra time"
        ),
        default=False,
    )
    shape_regions: BoolProperty(
        name="Local Clusters",
        description="One shape-matching cluster per vertex and its neighbours (wobbly), not one per mesh",
        default=False,
    )
    cache_mode: EnumProperty(
        name="Cache", description="Where the baked motion is stored", items=CACHE_ITEMS, default="PC2"
    )
    cache_directory: StringProperty(
        name="Cache Folder",
        description="Folder for PC2 caches; empty uses the preferences' cache folder (//procanim_cache)",
        default="",
        subtype="DIR_PATH",
    )


class _RopeProperties(_SolverProperties):
    links: IntProperty(
        name="Links", description="Number of rope segments (one bone each)", default=20, min=2, max=200
    )
    slack: FloatProperty(
        name="Slack",
        description="Rope length as a multiple of the distance between its two ends",
        default=1.25,
        min=1.0,
        max=5.0,
    )
    thickness: FloatProperty(
        name="Thickness", description="Radius of the rope's tube mesh", default=0.02, min=0.001, unit="LENGTH"
    )
    pin_end: BoolProperty(
        name="Pin Both Ends",
        description="Hold the rope at both anchors; off leaves the far end free to swing",
        default=True,
    )


def simulation_settings(op, context: bpy.types.Context, **overrides) -> SimulationSettings:
    """The domain settings from an operator's properties and the scene's frame rate."""
    render = context.scene.render
    values = {
        "frame_count": op.frame_count,
        "fps": render.fps / render.fps_base,
        "substeps": op.substeps,
        "iterations": op.iterations,
        "solver": op.solver.lower(),
        "stretch_compliance": op.stretch_compliance,
        "damping": op.damping,
        "friction": op.friction,
        "particle_radius": op.particle_radius,
        "use_ground": op.use_ground,
        "ground_height": op.ground_height,
    }
    if hasattr(op, "auto_substeps"):
        values.update(auto_substeps=op.auto_substeps, max_stretch=op.max_stretch)
    if hasattr(op, "limit_stretch"):
        values.update(limit_stretch=op.limit_stretch)
    if hasattr(op, "static_friction"):
        values.update(
            static_friction=op.static_friction,
            pour_interval=op.pour_interval,
            pour_drop=op.pour_drop,
            rigid_contacts=op.rigid_contacts.lower(),
            # Greyed out in the sidebar with Body Fit contacts, which cannot roll.
            rolling_resistance=op.rolling_resistance if op.rigid_contacts == "SEQUENTIAL" else 0.0,
        )
    values.update(overrides)
    return SimulationSettings(**values)
