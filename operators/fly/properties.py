"""Operator properties of training and baking (the sidebar panel reuses them) and their choices."""

from __future__ import annotations

from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty

from .constants import (
    DEFAULT_OUTPUT,
    PATH_OPTIONS,
)

FITNESS_ITEMS = (
    (
        "FINAL_HEIGHT_MINUS_DRIFT",
        "Height minus Drift",
        "Final height minus a fifth of the mean sideways deviation (the paper's best fitness)",
    ),
    (
        "UPRIGHT_HEIGHT_MINUS_DRIFT",
        "Upright Height minus Drift",
        "Final height minus twice the sideways drift and a penalty for a tilted or tumbling body",
    ),
    (
        "LEVEL_HEIGHT_MINUS_DRIFT",
        "Level Height minus Drift",
        "Like Upright, with climbing capped, a heavier tilt penalty, a steep one past about 57 degrees and "
        "one for sinking below the start (a level body)",
    ),
    ("FINAL_HEIGHT", "Final Height", "Height at the end of the flight"),
    ("MEAN_HEIGHT", "Mean Height", "Average height over the flight (the paper's first try)"),
    (
        "HOLD_LEVEL",
        "Hold Level",
        "Hover in place with a steady body: drift, altitude error, tilt spread and tilt swing, each "
        "against its limit (2 cm, 5 cm, 0.1 rad, 0.3 rad); for the wing-beat generator",
    ),
    (
        "TOWARD_TARGET",
        "Toward Target",
        "Minus the mean distance to a random target point per generation (a steerable fly)",
    ),
)
MUTATION_ITEMS = (
    ("PERTURB", "Perturb", "Add Gaussian noise to the mutated genes (learns faster)"),
    ("RESET", "Reset", "Replace mutated genes by new random values (as in the paper)"),
)
ACTIVATION_ITEMS = (
    ("TANH", "tanh", "Hyperbolic tangent, as in the paper"),
    ("SIGMOID", "Sigmoid", "Logistic function"),
    ("RELU", "ReLU", "Rectified linear unit"),
)
CONTROL_ITEMS = (
    (
        "DIRECT",
        "Wing Angles (paper)",
        "The network sets the next wing angles of the paper's 2 cm cartoon fly",
    ),
    (
        "STROKE",
        "Wing-Beat Generator",
        "The network sets each wing's beat (frequency, amplitude, mean stroke, pitch, rotation timing) "
        "of a real-size fruit fly beating 150-250 times a second; use Quasi-steady aerodynamics",
    ),
)
AERO_ITEMS = (
    ("DRAG", "Drag (paper)", "F = 1/2 rho v|v| C_D A with projected area and cosine C_D"),
    ("QUASI_STEADY", "Quasi-steady", "Lift and drag with the Dickinson 1999 coefficients"),
)


class FlyTrainingProperties:
    """Training settings shared by the sidebar group and the train operator (same names)."""

    population: IntProperty(
        name="Population", description="Flies per generation", default=100, min=4, max=5000, soft_max=500
    )
    generations: IntProperty(
        name="Generations", description="Generations to train", default=30, min=1, max=100_000, soft_max=2000
    )
    fitness: EnumProperty(
        name="Fitness",
        description="What a good flight is",
        items=FITNESS_ITEMS,
        default="FINAL_HEIGHT_MINUS_DRIFT",
    )
    train_duration: FloatProperty(
        name="Flight Time",
        description="Simulated seconds per training flight",
        default=2.0,
        min=0.05,
        max=60.0,
        unit="TIME_ABSOLUTE",
    )
    crossover: FloatProperty(
        name="Crossover",
        description="Probability that a child's gene comes from its first parent",
        default=0.5,
        min=0.0,
        max=1.0,
        subtype="FACTOR",
    )
    mutation_rate: FloatProperty(
        name="Mutation Rate",
        description="Probability that a child's gene mutates",
        default=0.05,
        min=0.0,
        max=1.0,
        subtype="FACTOR",
    )
    mutation: EnumProperty(
        name="Mutation", description="How a mutated gene changes", items=MUTATION_ITEMS, default="PERTURB"
    )
    mutation_sigma: FloatProperty(
        name="Mutation Sigma",
        description="Standard deviation of mutation noise",
        default=0.3,
        min=1e-4,
        soft_max=3.0,
    )
    sigma: FloatProperty(
        name="Initial Sigma",
        description="Standard deviation of the random first genomes",
        default=1.0,
        min=1e-4,
        soft_max=5.0,
    )
    seed: IntProperty(
        name="Seed", description="Random seed; the same seed gives the same training", default=0, min=0
    )
    activation: EnumProperty(
        name="Activation", description="Neuron non-linearity", items=ACTIVATION_ITEMS, default="TANH"
    )
    aero: EnumProperty(name="Aerodynamics", description="Wing force model", items=AERO_ITEMS, default="DRAG")
    control: EnumProperty(
        name="Control",
        description="What the network sets every 10 ms",
        items=CONTROL_ITEMS,
        default="DIRECT",
    )
    asymmetric: BoolProperty(
        name="Asymmetric Wings",
        description="Control each wing separately (18 inputs, 6 outputs) instead of "
        "mirrored wings (15 inputs, 3 outputs)",
        default=False,
    )
    checkpoints: BoolProperty(
        name="Checkpoints",
        description="Save the best genome to <output>_checkpoints/ each time the best fitness passes the "
        "threshold, then raise the threshold by the step",
        default=False,
    )
    checkpoint_threshold: FloatProperty(
        name="Threshold", description="Best fitness that triggers the first checkpoint", default=0.5
    )
    checkpoint_delta: FloatProperty(
        name="Step", description="How much the threshold rises after each checkpoint", default=0.1, min=1e-4
    )
    resume: BoolProperty(
        name="Resume",
        description="Continue from the population saved by the last training "
        "next to the output genome, possibly with other settings",
        default=False,
    )
    output_path: StringProperty(
        name="Save To",
        description="Where the trained genome is written (.npz); "
        "// is next to the .blend, or the temporary folder when unsaved",
        default=DEFAULT_OUTPUT,
        subtype="FILE_PATH",
        options=PATH_OPTIONS,
    )


class FlyBakeProperties:
    """Bake settings shared by the sidebar group and the bake operator."""

    duration: FloatProperty(
        name="Duration",
        description="Seconds of flight to bake",
        default=30.0,
        min=0.05,
        max=3600.0,
        soft_max=120.0,
        unit="TIME_ABSOLUTE",
    )
    genome_path: StringProperty(
        name="Genome",
        description="Genome file (.npz) to fly; empty uses the trained or the shipped hovering genome",
        default="",
        subtype="FILE_PATH",
        options=PATH_OPTIONS,
    )
    target: StringProperty(
        name="Target",
        description="Object the fly steers toward (its animated position "
        "is sampled every frame); empty flies freely",
        default="",
    )
    wing_key_interval: FloatProperty(
        name="Wing Key Step",
        description="Milliseconds between wing keys (wing beats are faster than frames, so wings get "
        "sub-frame keys); 0 is automatic: 2 ms for the paper's slow beat, and for a fruit fly beating "
        "at 200 Hz as often as Blender keeps keys apart (0.01 frame: 0.6 ms at 24 fps, 8 keys a beat)",
        default=0.0,
        min=0.0,
        max=100.0,
    )
    follow_camera: BoolProperty(
        name="Follow Camera", description="Add a camera and light that follow the fly", default=False
    )
