"""Property-based tests of the optics, simulation, IK, dancer and fly cores, with a seeded generator.

Each public function gets random and hostile inputs (NaN, infinities, zero, tiny, huge, degenerate
shapes). Whatever it is given, it either raises its generator's domain error (a ProcAnimError) or
returns finite results that keep the function's invariant. Any other exception is a bug.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from addon.errors import ProcAnimError

TRIALS = 60
HOSTILE = (math.nan, math.inf, -math.inf, 0.0, -0.0, 1e-300, 1e-9, -1e-9, 1e9, -1e9, 1e300, -1e300)


class Values:
    """A seeded source of ordinary and hostile numbers; a third of the draws are hostile."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def number(self, low: float = -3.0, high: float = 3.0, hostile: float = 0.33) -> float:
        if self.rng.random() < hostile:
            return self.rng.choice(HOSTILE)
        return self.rng.uniform(low, high)

    def vector(self, size: int = 3, **kwargs) -> np.ndarray:
        if self.rng.random() < 0.2:  # one hostile component among ordinary ones
            vector = np.array([self.rng.uniform(-3.0, 3.0) for _ in range(size)])
            vector[self.rng.randrange(size)] = self.rng.choice(HOSTILE)
            return vector
        return np.array([self.number(hostile=0.05, **kwargs) for _ in range(size)])

    def integer(self, low: int, high: int) -> int:
        if self.rng.random() < 0.2:
            return self.rng.choice((0, -1, 1, 2**31 - 1, -(2**31), 10**9))
        return self.rng.randint(low, high)


def _domain_error_or(check, *args, **kwargs):
    """Call ``check``; a ProcAnimError is an accepted refusal, anything else propagates."""
    try:
        return check(*args, **kwargs)
    except ProcAnimError:
        return None


def _finite(*arrays) -> bool:
    return all(np.all(np.isfinite(np.asarray(a, dtype=np.float64))) for a in arrays)


# --------------------------------------------------------------------------- optics


@pytest.mark.parametrize("seed", range(3))
def test_ellipsoid_from_foci_keeps_the_focal_sum_on_its_surface(seed):
    from addon.optics import ellipsoid_from_foci

    values = Values(seed)
    built = 0
    for _ in range(TRIALS):
        f1, f2, minor = values.vector(), values.vector(), values.number(0.01, 5.0)
        ellipsoid = _domain_error_or(ellipsoid_from_foci, f1, f2, minor)
        if ellipsoid is None:
            continue
        built += 1
        assert _finite(ellipsoid.center, ellipsoid.rotation, ellipsoid.semi_axes)
        assert np.all(ellipsoid.semi_axes > 0)
        directions = np.random.default_rng(seed).normal(size=(16, 3))
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        points = ellipsoid.center + (directions * ellipsoid.semi_axes) @ ellipsoid.rotation.T
        sums = np.linalg.norm(points - f1, axis=1) + np.linalg.norm(points - f2, axis=1)
        np.testing.assert_allclose(sums, 2.0 * ellipsoid.semi_major, rtol=1e-6, atol=1e-9)
    assert built > TRIALS // 4  # the generator must reach the invariant, not only the refusals


@pytest.mark.parametrize("seed", range(3))
def test_reflect_keeps_length_and_flips_the_normal_component(seed):
    from addon.optics import reflect

    rng = np.random.default_rng(seed)
    directions = rng.normal(size=(200, 3))
    normals = rng.normal(size=(200, 3))
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    reflected = reflect(directions, normals)
    np.testing.assert_allclose(np.linalg.norm(reflected, axis=1), np.linalg.norm(directions, axis=1))
    np.testing.assert_allclose(
        np.sum(reflected * normals, axis=1), -np.sum(directions * normals, axis=1), atol=1e-12
    )


@pytest.mark.parametrize("seed", range(2))
def test_fresnel_reflector_is_finite_or_refused(seed):
    from addon.optics import fresnel_reflector

    values = Values(100 + seed)
    for _ in range(TRIALS // 2):
        arguments = {
            "f1": values.vector(),
            "f2": values.vector(),
            "plane_point": values.vector(),
            "plane_normal": values.vector(),
            "radius": values.number(0.05, 2.0),
            "zones": values.integer(1, 12),
            "segments": values.integer(8, 48),
            "zone_steps": values.integer(1, 3),
        }
        mesh = _domain_error_or(fresnel_reflector, **arguments)
        if mesh is None:
            continue
        vertices, faces = np.asarray(mesh.vertices), np.asarray(mesh.faces)
        assert _finite(vertices), arguments
        assert faces.min() >= 0 and faces.max() < len(vertices)


# --------------------------------------------------------------------------- IK


def _random_chain(values: Values):
    from addon.kinematics import Chain

    count = values.rng.randint(1, 5)
    offsets = [values.vector() if values.rng.random() < 0.1 else values.rng.uniform(0.2, 1.0) * np.array(
        [0.0, 0.0, 1.0]) for _ in range(count)]
    return Chain(np.array(offsets))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("solver", ["ccd", "fabrik"])
def test_ik_solvers_return_unit_rotations_whose_tip_error_is_reported(seed, solver):
    from addon.kinematics import forward_kinematics, solve_ccd, solve_fabrik

    solve = solve_ccd if solver == "ccd" else solve_fabrik
    values = Values(200 + seed)
    solved = 0
    for _ in range(TRIALS // 2):
        chain = _domain_error_or(_random_chain, values)
        if chain is None:
            continue
        target = values.vector()
        result = _domain_error_or(solve, chain, target, tolerance=1e-4, max_iterations=50)
        if result is None:
            continue
        solved += 1
        assert _finite(result.rotations, result.positions, result.error)
        np.testing.assert_allclose(np.linalg.norm(result.rotations, axis=-1), 1.0, atol=1e-9)
        positions = forward_kinematics(chain, result.rotations)
        np.testing.assert_allclose(positions, result.positions, atol=1e-9)
        assert result.error == pytest.approx(float(np.linalg.norm(positions[-1] - target)), abs=1e-9)
        if result.converged:
            assert result.error <= 1e-4 + 1e-12
    assert solved > 0


# --------------------------------------------------------------------------- simulation


@pytest.mark.parametrize("seed", range(3))
def test_world_steps_stay_finite_or_are_refused(seed):
    from addon.simulation import World

    values = Values(300 + seed)
    for _ in range(TRIALS // 2):
        count = values.rng.randint(1, 6)
        positions = np.array([values.vector() for _ in range(count)])
        world = _domain_error_or(World, positions, damping=values.rng.choice((0.0, 0.1, 0.5)))
        if world is None:
            continue
        if count > 1:
            pairs = np.array([(k, k + 1) for k in range(count - 1)])
            compliance = values.number(0.0, 1e-3)
            if _domain_error_or(world.add_distance, pairs[:, 0], pairs[:, 1], compliance=compliance) is None:
                pass
        if values.rng.random() < 0.5:
            _domain_error_or(world.add_ground, values.number(-2.0, 0.0), values.number(0.0, 1.0))
        dt = values.number(1e-3, 0.1)
        substeps = values.integer(1, 8)
        if not (1 <= substeps <= 50):  # huge substep counts are refused by the operators' size checks
            substeps = 4
        _domain_error_or(world.step, dt, substeps=substeps)
        assert _finite(world.positions, world.velocities)


def test_a_free_particle_falls_as_its_integrator_says():
    from addon.simulation import World

    values = Values(399)
    for _ in range(20):
        start = np.array([values.rng.uniform(-5, 5) for _ in range(3)])
        world = World(start[None, :])
        dt, substeps = values.rng.uniform(0.005, 0.05), values.rng.randint(1, 20)
        world.step(dt, substeps=substeps)
        drop = start[2] - world.positions[0, 2]
        # Semi-implicit Euler over n substeps of dt / n: g dt^2 (n + 1) / (2 n), half of g dt^2 as n grows.
        assert drop == pytest.approx(9.81 * dt * dt * (substeps + 1) / (2 * substeps), rel=1e-9)
        np.testing.assert_allclose(world.positions[0, :2], start[:2])


# --------------------------------------------------------------------------- dancer


@pytest.mark.parametrize("seed", range(2))
def test_dancer_body_masses_add_up_or_are_refused(seed):
    from addon.dancer import build_body

    values = Values(400 + seed)
    for _ in range(TRIALS // 2):
        height, mass = values.number(1.0, 2.4), values.number(20.0, 160.0)
        sex = values.rng.choice(("female", "male", "", "x" * 50))
        body = _domain_error_or(build_body, height, mass, sex)
        if body is None:
            continue
        masses = np.array([spec.mass for spec in body.bodies])
        assert _finite(masses) and np.all(masses > 0)
        assert masses.sum() == pytest.approx(mass, rel=0.02)


GARBAGE_TEXT = ("", " ", ",,,", "((((", "retire,,releve", "first_position:nan", "x" * 10_000, "\x00", "é漢\n")


@pytest.mark.parametrize("text", GARBAGE_TEXT)
def test_dancer_sequence_text_is_parsed_or_refused(text):
    from addon.dancer import parse_sequence_text

    steps = _domain_error_or(parse_sequence_text, text)
    if steps is not None:
        for _, seconds in steps:
            assert seconds is None or (math.isfinite(seconds) and seconds > 0)


# --------------------------------------------------------------------------- fly


@pytest.mark.parametrize("seed", range(2))
def test_fly_flights_stay_finite_for_any_weights(seed):
    from addon.fly import SYMMETRIC_LAYERS, genome_size, simulate

    values = Values(500 + seed)
    size = genome_size(SYMMETRIC_LAYERS)
    for _ in range(6):
        scale = values.rng.choice((0.0, 1e-6, 1.0, 10.0, 1e6))
        weights = np.random.default_rng(values.rng.randrange(10**6)).normal(scale=scale, size=size)
        if values.rng.random() < 0.3:
            weights[values.rng.randrange(size)] = values.rng.choice((math.nan, math.inf))
        duration = values.number(0.01, 0.2, hostile=0.2)
        flight = _domain_error_or(simulate, weights, duration=duration)
        if flight is None:
            continue
        assert _finite(flight.positions, flight.rotations)


def test_training_size_check_refuses_absurd_runs_and_passes_the_demo():
    from addon.fly.training import TrainingConfig
    from addon.limits import TooMuchWorkError

    TrainingConfig(population=40, generations=5, duration=1.0).check_size()  # make demo's training
    TrainingConfig().check_size(time_limit=4 * 3600.0)  # the defaults, from the sidebar or the CLI
    for population, generations in ((2**31 - 1, 30), (100, 10**9), (5000, 100_000)):
        with pytest.raises(TooMuchWorkError, match="would (take|need) about"):
            TrainingConfig(population=population, generations=generations).check_size()


@pytest.mark.parametrize("kind", ["", "../../etc/passwd", "x" * 10_000, "juggling/../fly", "a b", "\x00"])
def test_a_preset_kind_is_a_name_never_a_path(kind, tmp_path):
    from addon.errors import PresetError
    from addon.presets import load_presets, load_user_presets, remove_user_preset

    for call in (lambda: load_presets(kind), lambda: load_user_presets(kind, tmp_path),
                 lambda: remove_user_preset(kind, "x", tmp_path)):
        with pytest.raises(PresetError, match="unknown preset kind"):
            call()
