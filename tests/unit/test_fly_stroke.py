"""The wing-beat pattern generator (stroke control mode), its quasi-steady aerodynamics and the
wings' inertia at fruit-fly scale."""

import numpy as np
import pytest

from addon import quaternions
from addon.fly import FlyModel, load_genome, save_genome, simulate
from addon.fly.errors import FlyError
from addon.fly.genome import Genome, genome_record
from addon.fly.network import STROKE_ASYMMETRIC_LAYERS, STROKE_SYMMETRIC_LAYERS, genome_size
from addon.fly.simulate import dickinson_coefficients, loads, run_to_end, wing_frames
from addon.fly.stroke import (
    hover_parameters,
    mean_beat_force,
    outputs_from_parameters,
    parameter_ranges,
    parameters_from_outputs,
    simulate_stroke_steps,
    stroke_angles,
)

FLY = FlyModel.fruit_fly()
WEIGHT = FLY.total_mass * FLY.gravity


def _constant(model, parameters):
    outputs = outputs_from_parameters(model, np.asarray(parameters, dtype=np.float64))

    def control(inputs):
        return np.tile(outputs.reshape(-1), (inputs.shape[0], model.wings if outputs.ndim == 1 else 1))

    return control


def test_fruit_fly_preset_has_real_scale():
    assert 0.9e-6 <= FLY.total_mass <= 1.2e-6  # about 1 mg
    assert FLY.wing_span == pytest.approx(0.0025)
    assert FLY.wing_area() == pytest.approx(2.0e-6, rel=0.05)  # 2.0 mm^2 per wing
    assert FLY.frequency_range[0] <= 200 and FLY.frequency_range[1] >= 230
    assert FLY.control == "stroke" and FLY.aero == "quasi_steady"
    # the paper's cartoon fly is still the plain model and still a preset
    assert FlyModel.preset("cartoon") == FlyModel()
    assert FlyModel().control == "direct" and FlyModel().aero == "drag"


def test_stroke_is_periodic_and_within_its_limits():
    rng = np.random.default_rng(3)
    parameters = parameters_from_outputs(FLY, rng.uniform(-1, 1, (50, 5)))
    phase = rng.uniform(0, 2 * np.pi, 50)
    angles = stroke_angles(FLY, phase, parameters)
    np.testing.assert_allclose(stroke_angles(FLY, phase + 2 * np.pi, parameters), angles, atol=1e-12)
    sweep, pitch, deviation = angles[:, 1], angles[:, 2], angles[:, 0]
    half = 0.5 * parameters[:, 1]
    assert np.all(np.abs(sweep - parameters[:, 2]) <= half + 1e-12)
    assert np.all(np.abs(deviation) <= FLY.stroke_deviation + 1e-12)
    # the wing pitches between its mid-stroke angle of attack and its mirror, through vertical
    assert np.all(pitch >= parameters[:, 3] - 1e-12) and np.all(pitch <= np.pi - parameters[:, 3] + 1e-12)
    # outputs beyond [-1, 1] (or NaN) never leave the parameter ranges
    ranges = parameter_ranges(FLY)
    wild = parameters_from_outputs(FLY, np.array([[-7.0, 9.0, np.nan, 1.0, -1.0]]))[0]
    assert np.all(wild >= ranges[:, 0]) and np.all(wild <= ranges[:, 1])


def test_mid_stroke_pitch_is_the_angle_of_attack_on_both_half_strokes():
    parameters = np.array([220.0, 2.4, 0.1, 0.7, 0.0])
    forward = stroke_angles(FLY, np.array(1.5 * np.pi), parameters)  # sweep rising through its mean
    backward = stroke_angles(FLY, np.array(0.5 * np.pi), parameters)
    assert forward[1] == pytest.approx(0.1) and backward[1] == pytest.approx(0.1)
    assert forward[2] == pytest.approx(0.7) and backward[2] == pytest.approx(np.pi - 0.7)


def test_simulated_wings_beat_at_the_set_frequency():
    parameters = hover_parameters(FLY)
    flight = run_to_end(simulate_stroke_steps(_constant(FLY, parameters), 1, duration=0.1, model=FLY))
    sweep = flight.wing_angles[0, :, 0, 1] - parameters[2]
    crossings = np.count_nonzero((sweep[:-1] < 0) & (sweep[1:] >= 0))
    assert crossings == pytest.approx(220 * 0.1, abs=1)
    assert np.ptp(sweep) == pytest.approx(parameters[1], rel=0.01)
    assert np.isclose(flight.times[1], FLY.time_step)


@pytest.mark.parametrize("frequency", [150.0, 220.0, 250.0])
def test_mean_lift_over_a_beat_is_converged_at_the_default_step(frequency):
    parameters = hover_parameters(FLY)
    parameters[0] = frequency
    step = FLY.time_step  # 0.2 ms
    lift = mean_beat_force(FLY, parameters, step)[2]
    finer = mean_beat_force(FLY, parameters, step / 2)[2]
    assert abs(lift - finer) < 0.02 * abs(finer)
    assert finer > 0.3 * WEIGHT  # a real lift, not a vanishing one


def test_hover_stroke_lifts_about_the_weight():
    # 220 Hz, 150 degrees, 40 degrees at mid-stroke: Drosophila's maximum is about 1.36 weights
    lift = mean_beat_force(FLY, hover_parameters(FLY), 1e-5)[2]
    assert 1.0 * WEIGHT < lift < 2.0 * WEIGHT
    # all-zero network outputs sit near hover (the ranges are centred on it)
    centre = mean_beat_force(FLY, parameters_from_outputs(FLY, np.zeros(5)), 1e-5)[2]
    assert 0.8 * WEIGHT < centre < 1.2 * WEIGHT


@pytest.mark.parametrize("alpha", [5.0, 15.0, 30.0, 45.0, 60.0, 80.0])
def test_translating_wing_has_the_dickinson_1999_coefficients(alpha):
    model = FlyModel.fruit_fly(gravity=0.0, body_drag=0.0)
    speed = 1.3
    angles = np.array([[[0.0, 0.0, np.radians(alpha)]]])
    centres, normals, chords = wing_frames(model, angles)
    force, _ = loads(
        model,
        np.array([[0.0, speed, 0.0]]),  # the body flies forward, wings at rest relative to it
        np.eye(3)[None],
        np.zeros((1, 3)),
        centres,
        normals,
        np.zeros_like(centres),
        rotation=(chords, np.zeros((1, 2))),
    )
    dynamic = 0.5 * model.air_density * speed**2 * 2 * model.wing_area()
    lift, drag = dickinson_coefficients(np.array(alpha))
    assert force[0, 2] / dynamic == pytest.approx(lift, rel=1e-9)
    assert -force[0, 1] / dynamic == pytest.approx(drag, rel=1e-9)


def test_dickinson_fits_match_the_published_values():
    # Dickinson, Lehmann & Sane 1999 fits (physics notes 3.1): C_L peaks near 45 degrees at 1.8
    alphas = np.array([0.0, 20.0, 45.0, 90.0])
    lift, drag = dickinson_coefficients(alphas)
    np.testing.assert_allclose(lift, [0.03, 1.14, 1.80, 0.10], atol=0.01)
    np.testing.assert_allclose(drag, [0.39, 0.59, 1.70, 3.46], atol=0.01)
    fine = np.linspace(0, 90, 9001)
    assert fine[np.argmax(dickinson_coefficients(fine)[0])] == pytest.approx(45.6, abs=0.1)


def test_advanced_rotation_adds_lift_and_delayed_rotation_takes_it_away():
    # Dickinson 1999: flipping the wing before stroke reversal raises lift (rotational circulation)
    base = hover_parameters(FLY)
    lifts = {}
    for name, timing in (("advanced", 0.3), ("symmetric", 0.0), ("delayed", -0.3)):
        parameters = base.copy()
        parameters[4] = timing
        lifts[name] = mean_beat_force(FLY, parameters, 1e-5)[2]
    assert lifts["advanced"] > 1.05 * lifts["symmetric"] > 1.05 * lifts["delayed"]
    no_rotation = FlyModel.fruit_fly(rotational_lift=False)
    assert mean_beat_force(no_rotation, base, 1e-5)[2] != pytest.approx(lifts["symmetric"], rel=1e-3)


def test_wing_inertia_makes_a_still_body_recoil_and_keeps_the_centre_of_mass():
    # no air, no gravity: only the wings' own mass can move the body
    model = FlyModel.fruit_fly(air_density=1e-300, gravity=0.0)
    parameters = hover_parameters(model)
    parameters[2] = 0.3  # stroke centred forward: the wings swing through the same arc each beat
    flight = run_to_end(
        simulate_stroke_steps(
            _constant(model, parameters), 1, duration=0.02, model=model, start_parameters=parameters
        )
    )
    moved = np.abs(flight.positions[0] - flight.positions[0, 0]).max()
    assert moved > 1e-6  # a micrometre-scale recoil of a still body
    assert np.abs(flight.rotations[0, :, 1]).max() > 1e-4  # and it pitches
    # the recoil mirrors the wings: body + wing centre of mass stays put (to the body's small turn)
    from addon.fly.stroke import strip_masses

    masses = strip_masses(model)
    rotations = flight.rotations[0]
    centre_of_mass = []
    for index in range(0, len(flight.times), 5):
        angles = flight.wing_angles[0, index, :1]
        centres = wing_frames(model, angles[None])[0][0]
        rotation = quaternions.to_matrix(rotations[index])
        wings = (masses[:, None] * (centres @ rotation.T)).sum(axis=0)
        centre_of_mass.append(flight.positions[0, index] + wings / model.total_mass)
    # the wings start with momentum (they pitch at stroke reversal), so the centre of mass moves
    # at a constant velocity: what remains after a straight-line fit is a small fraction of the recoil
    centre_of_mass = np.array(centre_of_mass)
    times = flight.times[::5]
    trend = np.polynomial.polynomial.polyfit(times, centre_of_mass, 1)
    residual = centre_of_mass - np.polynomial.polynomial.polyval(times, trend).T
    body = flight.positions[0, ::5]
    body_residual = (
        body - np.polynomial.polynomial.polyval(times, np.polynomial.polynomial.polyfit(times, body, 1)).T
    )
    assert np.abs(body_residual).max() > 1e-6
    assert np.abs(residual).max() < 0.05 * np.abs(body_residual).max()
    # and without wing mass the same stroke moves nothing
    massless = FlyModel.fruit_fly(air_density=1e-300, gravity=0.0, wing_mass=0.0)
    still = run_to_end(
        simulate_stroke_steps(_constant(massless, parameters), 1, duration=0.02, model=massless)
    )
    assert np.abs(still.positions).max() < 1e-20  # only the 1e-300 air's push


def test_symmetric_stroke_never_rolls_yaws_or_slips():
    flight = run_to_end(
        simulate_stroke_steps(_constant(FLY, hover_parameters(FLY)), 1, duration=0.05, model=FLY)
    )
    np.testing.assert_array_equal(flight.positions[0, :, 0], 0.0)
    np.testing.assert_array_equal(flight.rotations[0, :, 2:], 0.0)


def test_asymmetric_strokes_turn_the_fly():
    model = FlyModel.fruit_fly(asymmetric=True)
    right, left = hover_parameters(model), hover_parameters(model)
    right[1] += 0.3  # the right wing strokes wider: more lift on the right
    flight = run_to_end(
        simulate_stroke_steps(_constant(model, np.stack([right, left])), 1, duration=0.05, model=model)
    )
    w, x, y, z = flight.rotations[0, -1]
    roll = np.arctan2(2 * (w * y + x * z), 1 - 2 * (x * x + y * y))  # about the body's forward axis
    assert abs(roll) > 0.05
    assert abs(flight.positions[0, -1, 0]) > 1e-5  # and it slips sideways


def test_stroke_genome_file_flies_in_its_own_mode_with_no_other_argument(tmp_path):
    rng = np.random.default_rng(0)
    genome = Genome(
        rng.normal(0, 0.3, genome_size(STROKE_SYMMETRIC_LAYERS)),
        STROKE_SYMMETRIC_LAYERS,
        aero="quasi_steady",
        size="fruit_fly",
    )
    path = save_genome(genome, tmp_path / "g.npz", fitness=-0.5, seed=4, settings={"population": 8})
    loaded = load_genome(path)
    assert (loaded.control, loaded.size, loaded.aero, loaded.asymmetric) == (
        "stroke",
        "fruit_fly",
        "quasi_steady",
        False,
    )
    record = genome_record(path)
    assert record["seed"] == 4 and record["settings"] == {"population": 8} and record["fitness"] == -0.5
    flight = simulate([loaded], duration=0.03)
    assert flight.times[1] == pytest.approx(FLY.time_step)
    assert len(flight.times) == 151
    # the same genome saved twice gives the same bytes
    again = save_genome(genome, tmp_path / "h.npz", fitness=-0.5, seed=4, settings={"population": 8})
    assert path.read_bytes() == again.read_bytes()


def test_stroke_mode_rejects_a_mismatched_model():
    genome = np.zeros(genome_size(STROKE_ASYMMETRIC_LAYERS))
    with pytest.raises(FlyError, match="do not fit"):
        simulate(genome, duration=0.01, model=FlyModel.fruit_fly())
    with pytest.raises(FlyError, match="control mode"):
        FlyModel(control="flutter")


def test_a_symmetric_stroke_genome_embeds_into_an_asymmetric_one_that_flies_the_same():
    from addon.fly.network import embed_symmetric_stroke

    rng = np.random.default_rng(1)
    symmetric = Genome(
        rng.normal(0, 0.3, genome_size(STROKE_SYMMETRIC_LAYERS)),
        STROKE_SYMMETRIC_LAYERS,
        aero="quasi_steady",
        size="fruit_fly",
    )
    embedded = Genome(
        embed_symmetric_stroke(symmetric.weights),
        STROKE_ASYMMETRIC_LAYERS,
        aero="quasi_steady",
        size="fruit_fly",
    )
    one = simulate([symmetric], duration=0.05)
    two = simulate([embedded], duration=0.05)
    np.testing.assert_allclose(two.positions, one.positions, atol=1e-12)
    np.testing.assert_allclose(two.wing_angles[..., 0, :], two.wing_angles[..., 1, :], atol=1e-12)
