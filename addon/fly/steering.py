"""A steering fly built on the evolved hover genome: its network plus a few constructed hidden
units that bank, yaw and (near the target) stiffen it, as one stroke network of layers
[22, 24, 24, 10] (``make genomes`` builds it from its recipe, deterministically).

Why constructed: evolving steering from the hover genome did not work in the time this box allows
(the hover network had only ever seen millimetre offsets; shown 5 cm it flew off, and climbing or
backing off hard tumbles it). The problem splits by the fly's left-right mirror symmetry:

* **In its vertical plane** (forward, up, pitch) the evolved hover network flies: it holds its
  place because it returns to its reference. It now sees the offset from the target scaled down
  (``position_gain``: 5 cm look like 5 mm, the offsets it was evolved on), shifted by its own rest
  offset (it hovers a few mm off its reference; measured, then moved onto the target by
  calibration flights), plus ``near_gain`` more within ``near_range`` of the target (a saturating
  unit per axis feeding its second layer), so it is stiff at the target and gentle far from it.
  Its weights from the mirror-odd inputs (sideways offset and velocity, roll, yaw, their rates) are
  zeroed: a symmetric fly never saw them, so they were never selected for anything.
* **Sideways**, a cascade sized on the fly's beat-averaged response to each stroke parameter (per
  unit of output: a left/right amplitude difference rolls the body ~640 rad/s against its strong
  roll damping; a mean-stroke difference yaws it ~16 rad/s): one unit banks the fly toward the
  target, driving the roll error ``roll + lateral_position * dx + lateral_velocity * vx`` to zero
  with the amplitude difference, and one holds the heading with the mean-stroke difference, so the
  target offsets keep their meaning in the body frame. Each unit passes through the second hidden
  layer unchanged and adds +/- its command to the two wings' outputs.

The units work in their tanh's near-linear range for the errors that matter and saturate for
large ones (a bank is bounded by the position and velocity inputs' own tanh).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from .errors import FlyError
from .model import FlyModel
from .network import STROKE_ASYMMETRIC_LAYERS, STROKE_SYMMETRIC_LAYERS, Network, embed_symmetric_stroke

# network inputs that change sign under the left-right mirror (x -> -x): sideways offset, roll and
# yaw angles, sideways velocity, roll and yaw rates (positions 0-2, rotation 3-5, velocity 6-8, spin 9-11)
MIRROR_ODD_INPUTS = (0, 4, 5, 6, 10, 11)
YAW_INPUT = 5
# stroke parameter index among each wing's outputs (right wing 0-4, left wing 5-9)
FREQUENCY, AMPLITUDE, MEAN_STROKE = 0, 1, 2
UNIT_SCALE = 0.5  # hidden units see half their error, so a 0.3 rad error is still 98% linear


@dataclass(frozen=True)
class SteeringGains:
    """Gains of the constructed steering (recorded in the genome's recipe). Commands are added to
    the outputs' pre-activations (about 1/2 of the parameter's range per unit)."""

    position_gain: float = 0.1  # the hover network's view of the target offset is scaled by this
    roll_gain: float = 0.1  # amplitude difference per rad of roll error
    lateral_position: float = 2.0  # rad of bank per metre of sideways offset
    lateral_velocity: float = 1.0  # rad of bank per m/s of sideways velocity
    yaw_gain: float = 2.0  # mean-stroke difference per rad of yaw
    near_gain: float = 0.0  # extra view of the target offset close to it (see steering_weights)
    near_range: float = 0.005  # m: beyond this offset the extra view saturates
    settle: float = 8.0  # s flown to measure the hover's rest offset (and each calibration)
    calibrations: int = 2  # flights that move the rest offset onto the target (see calibrate_rest)
    evaluation: float = 3.0  # s flown to each evaluation target (the recorded fitness)

    def settings(self) -> dict:
        return asdict(self)

    def check(self) -> None:
        values = list(asdict(self).values())
        if not all(np.isfinite(values)) or min(self.settle, self.evaluation) < 0.01 or self.calibrations < 0:
            raise FlyError(f"Steering build settings must be finite, flight times positive: {asdict(self)}")
        if not 0 < self.position_gain <= 1:
            raise FlyError(f"Steering position_gain must be in (0, 1], got {self.position_gain}")


def hover_rest(hover_weights: np.ndarray, model: FlyModel, settle: float) -> tuple[np.ndarray, np.ndarray]:
    """Where the hover network rests, from a ``settle`` s hover from its start: the mean position
    input (3,) (tanh(offset / position_scale); x is 0 by symmetry) and the mean of its whole input
    (17,), both over the second half of the flight."""
    from .simulate import network_controller, run_to_end
    from .stroke import simulate_stroke_steps

    hover_model = FlyModel.preset(model.size, control="stroke", aero=model.aero)
    control = network_controller(hover_weights, STROKE_SYMMETRIC_LAYERS, "tanh")
    seen: list[np.ndarray] = []

    def recording(inputs: np.ndarray) -> np.ndarray:
        seen.append(inputs[0].copy())
        return control(inputs)

    run_to_end(simulate_stroke_steps(recording, 1, settle, model=hover_model))
    inputs = np.array(seen[len(seen) // 2 :]).mean(axis=0)
    rest = inputs[:3].copy()
    rest[0] = 0.0
    return rest, inputs


def steering_weights(
    hover_weights: np.ndarray,
    rest: np.ndarray,
    gains: SteeringGains,
    model: FlyModel,
    rest_inputs: np.ndarray | None = None,
) -> np.ndarray:
    """The steering genome: the hover network on hidden units 0-19, then the bank, heading (and
    near-target) units. ``rest``: the position input the hover network rests at; ``rest_inputs``
    (17,): its whole mean input there (needed with ``near_gain``)."""
    embedded = Network(embed_symmetric_stroke(hover_weights), STROKE_ASYMMETRIC_LAYERS)
    first, second, last = (weight.copy() for weight in embedded.weights)
    bias_first, bias_second, bias_last = (bias[:, 0].copy() for bias in embedded.biases)
    # the hover network rests on the target: at zero offset it sees its own rest offset
    bias_first += first[:, 1:3] @ np.asarray(rest, dtype=np.float64)[1:3]
    first[:, 1:3] *= gains.position_gain
    first[:, list(MIRROR_ODD_INPUTS)] = 0.0

    hidden, inputs, outputs = first.shape[0], first.shape[1], last.shape[0]
    per_wing = outputs // 2
    p, v = model.position_scale, model.velocity_scale
    # each unit: (input index -> error per input unit, output index -> command per unit of error).
    # Roll error > 0 (banked too far toward +x): a stronger right wing rolls the fly back; yawed
    # left (+z): the right wing's stroke moves back and the left's forward.
    units: list[tuple[dict[int, float], dict[int, float]]] = [
        (
            {4: 1.0, 0: gains.lateral_position * p, 6: gains.lateral_velocity * v},
            {AMPLITUDE: gains.roll_gain, per_wing + AMPLITUDE: -gains.roll_gain},
        ),
        ({YAW_INPUT: 1.0}, {MEAN_STROKE: -gains.yaw_gain, per_wing + MEAN_STROKE: gains.yaw_gain}),
    ]
    near = gains.near_gain > 0
    if near:
        # close to the target the hover network sees the forward and height offsets near_gain more
        # strongly: a unit per axis, saturating beyond near_range, feeds the hover's second layer
        # what a larger first-layer position weight would (linearised where the hover rests), so
        # far targets are not pushed any harder than position_gain allows
        sharpness = p / gains.near_range
        units += [({1: sharpness}, {}), ({2: sharpness}, {})]
        hover = Network(hover_weights, STROKE_SYMMETRIC_LAYERS)
        resting = np.tanh(hover.weights[0] @ np.asarray(rest_inputs) + hover.biases[0][:, 0])
        response = hover.weights[1] @ ((1.0 - resting**2)[:, None] * hover.weights[0][:, 1:3])
    size = hidden + len(units)
    layer1 = np.zeros((size, inputs))
    layer1[:hidden] = first
    layer2 = np.zeros((size, size))
    layer2[:hidden, :hidden] = second
    layer3 = np.zeros((outputs, size))
    layer3[:, :hidden] = last
    for number, (sources, commands) in enumerate(units, hidden):
        for index, weight in sources.items():
            layer1[number, index] = UNIT_SCALE * weight
        layer2[number, number] = 1.0  # passed through the second hidden layer unchanged
        for index, weight in commands.items():
            layer3[index, number] = weight / UNIT_SCALE
    if near:
        for axis, number in enumerate((size - 2, size - 1)):
            layer2[number, number] = 0.0
            layer2[:hidden, number] = response[:, axis] * gains.near_gain / (UNIT_SCALE * sharpness)
    extra = np.zeros(len(units))
    return np.concatenate(
        [
            layer1.ravel(),
            np.concatenate([bias_first, extra]),
            layer2.ravel(),
            np.concatenate([bias_second, extra]),
            layer3.ravel(),
            bias_last,
        ]
    )


def steering_layers(gains: SteeringGains) -> tuple[int, ...]:
    hidden = 20 + 2 + (2 if gains.near_gain > 0 else 0)
    return (22, hidden, hidden, 10)


CALIBRATION_STARTS = np.array([[0.002, 0.0, 0.0], [-0.002, 0.0, 0.0], [0.0, 0.002, 0.0], [0.0, 0.0, -0.002]])


def fly_to_origin(
    weights: np.ndarray, gains: SteeringGains, model: FlyModel, starts: np.ndarray, seconds: float
):
    """The steering fly (one copy per start point) flown ``seconds`` toward a target at the origin."""
    from .simulate import simulate

    return simulate(
        np.tile(weights, (len(starts), 1)),
        seconds,
        layers=steering_layers(gains),
        activation="tanh",
        model=model,
        start=starts,
        target=np.zeros(3),
    )


def calibrate_rest(
    hover_weights: np.ndarray,
    rest: np.ndarray,
    gains: SteeringGains,
    model: FlyModel,
    rest_inputs: np.ndarray | None = None,
) -> np.ndarray:
    """One calibration flight: four steering flies start 2 mm from a target and fly ``settle`` s; the
    mean position input over the second half (where they actually rest) moves the rest offset so that
    the hover network's view, position_gain * input + rest, rests at zero offset."""
    weights = steering_weights(hover_weights, rest, gains, model, rest_inputs)
    flight = fly_to_origin(weights, gains, model, CALIBRATION_STARTS, gains.settle)
    half = flight.positions.shape[1] // 2
    seen = np.tanh(flight.positions[:, half:] / model.position_scale).mean(axis=(0, 1))
    calibrated = np.asarray(rest, dtype=np.float64).copy()
    calibrated[1:] += (gains.position_gain + gains.near_gain) * seen[1:]
    return calibrated


EVALUATION_TARGETS = 6
EVALUATION_REACH = 0.05  # m per axis, as the steering training drew its targets


def evaluation_offsets(seed: int) -> np.ndarray:
    """(6, 3) target offsets drawn from the recipe's seed (not the test's six targets)."""
    rng = np.random.default_rng([seed, 7])
    return rng.uniform(-EVALUATION_REACH, EVALUATION_REACH, (EVALUATION_TARGETS, 3))


def build_steering(
    hover_weights: np.ndarray, gains: SteeringGains, seed: int, model: FlyModel | None = None
) -> tuple[np.ndarray, float]:
    """The steering genome's weights from the hover genome's, and its fitness: ``toward_target``
    (minus the mean distance over the second half of the flight, m) averaged over six targets drawn
    from ``seed``, each flown ``evaluation`` s. Deterministic: the same inputs give the same bits."""
    from .fitness import toward_target

    gains.check()
    model = model or FlyModel.fruit_fly(asymmetric=True)
    rest, rest_inputs = hover_rest(hover_weights, model, gains.settle)
    for _ in range(gains.calibrations):
        rest = calibrate_rest(hover_weights, rest, gains, model, rest_inputs)
    weights = steering_weights(hover_weights, rest, gains, model, rest_inputs)
    flight = fly_to_origin(weights, gains, model, -evaluation_offsets(seed), gains.evaluation)
    return weights, float(toward_target(flight).mean())
