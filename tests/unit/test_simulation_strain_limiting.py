"""Strain limiting (World.limit_strain): at the end of every frame, inextensible edges stretched past
the limit are brought back inside it on the stretched region only, the displacement becomes velocity,
and each pass conserves momentum. Bake Soft Body's Limit Stretch (on by default) uses it; the drop at
four resolutions is in test_simulation_substeps.py."""

from dataclasses import replace

import numpy as np
import pytest

from addon.simulation import SimulationError, World
from addon.simulation.scenes import (
    Body,
    SimulationSettings,
    build_softbody_world,
    icosphere,
    run_frames,
    triangle_edges,
)
from addon.simulation.substeps import AdaptiveStepper, SubstepLog

DT = 1 / 24


def _burst(limit: float | None, inverse_masses=None, seed: int = 1, compression: float = 0.5) -> World:
    """A weightless 162-vertex ball whose vertices fly outwards and apart: two substeps cannot hold
    its edges (they stretch 60-90%)."""
    vertices, triangles = icosphere(2, 0.5)
    edges = triangle_edges(triangles)
    world = World(vertices, inverse_masses=inverse_masses, gravity=(0.0, 0.0, 0.0))
    world.add_distance(edges[:, 0], edges[:, 1])
    rng = np.random.default_rng(seed)
    world.set_velocities(6.0 * vertices + 2.0 * rng.normal(size=vertices.shape))
    if limit is not None:
        world.limit_strain(limit, compression)
    return world


def _momentum(world: World) -> np.ndarray:
    return (world.velocities / world.inverse_masses[:, None]).sum(axis=0)


def _centre(world: World) -> np.ndarray:
    mass = 1.0 / world.inverse_masses
    return (world.positions * mass[:, None]).sum(axis=0) / mass.sum()


def test_strain_limiting_brings_every_edge_inside_the_limit():
    free = _burst(None)
    free.step(DT, substeps=2)
    assert free.max_stretch() > 0.5
    limited = _burst(0.08)
    limited.step(DT, substeps=2)
    passes, settled, _ = limited.last_strain_limiting
    assert settled and passes > 0
    assert limited.max_stretch() <= 0.08 + 1e-12
    i, j, rest = limited.distance_constraints
    lengths = np.linalg.norm(limited.positions[i] - limited.positions[j], axis=1)
    assert (lengths / rest).min() >= 0.5 - 1e-12  # and none shorter than half its rest length


def test_strain_limiting_conserves_momentum_and_the_centre_of_mass_path():
    """Unequal masses: each correction is split by inverse mass, so momentum is exact to rounding, and
    the centre of mass moves on exactly as without any constraint; the limiting also removes kinetic
    energy (the separating motion it stops), never adds it."""
    rng = np.random.default_rng(7)
    masses = rng.uniform(0.5, 2.0, 162)
    free, limited = _burst(None, masses), _burst(0.08, masses)
    momentum, centre = _momentum(limited), _centre(limited)
    limited.step(DT, substeps=2)
    free.step(DT, substeps=2)
    assert limited.last_strain_limiting[0] > 0
    np.testing.assert_allclose(_momentum(limited), momentum, atol=1e-11)
    total = (1.0 / masses).sum()
    np.testing.assert_allclose(_centre(limited), centre + momentum / total * DT, atol=1e-13)
    assert limited.kinetic_energy() < free.kinetic_energy()


def _squashed_jelly(shape_stiffness: float = 0.2):
    """A weightless 162-vertex jelly (edges, volume, whole-body shape matching), strain limited at 8%,
    squashed to 0.7 high and 1.2 wide, squashing further, drifting and spinning, and its positions."""
    vertices, triangles = icosphere(2, 0.5)
    edges = triangle_edges(triangles)
    world = World(vertices, gravity=(0.0, 0.0, 0.0))
    world.add_distance(edges[:, 0], edges[:, 1])
    world.add_volume(triangles)
    if shape_stiffness:
        world.add_shape_match(np.arange(len(vertices)), shape_stiffness)
    world.limit_strain(0.08, 0.25)
    squash = np.array([1.2, 1.2, 0.7])
    x = vertices * squash
    spin = np.cross([0.0, 0.0, 2.0], x)
    world.set_velocities(vertices * (squash - 1.0) * 3.0 + [0.5, -0.2, 0.1] + spin)
    return world, x


def test_the_coarse_level_pulls_a_squashed_jelly_to_the_limit_and_reverses_its_squash():
    """Strain limiting's coarse level (World._coarse_strain_step): one move towards the rest shape's
    best fit brings the worst edge to the limit, with the centre of mass where it was; the squash's
    growing velocity is reversed, keeping momentum, angular momentum and kinetic energy."""
    world, x = _squashed_jelly()
    i, j, rest = world.distance_constraints
    strain = np.linalg.norm(x[i] - x[j], axis=1) / rest - 1.0
    assert strain.max() > 0.15
    v = world.velocities.copy()
    before_x, before_v = x.copy(), v.copy()
    move = world._coarse_strain_step(x, v, strain, None)
    assert move is not None and np.allclose(x, before_x + move)
    after = np.linalg.norm(x[i] - x[j], axis=1) / rest - 1.0
    assert after.max() == pytest.approx(0.08, abs=0.01)
    assert np.allclose(x.mean(axis=0), before_x.mean(axis=0), atol=1e-12)
    assert np.allclose(v.sum(axis=0), before_v.sum(axis=0), atol=1e-9)
    assert np.allclose(np.cross(before_x, v).sum(axis=0), np.cross(before_x, before_v).sum(axis=0), atol=1e-9)
    assert np.einsum("ij,ij->", v, v) == pytest.approx(np.einsum("ij,ij->", before_v, before_v), rel=1e-12)
    height = np.ptp(before_x[:, 2])
    squashing = np.ptp(before_x[:, 2] + 1e-3 * before_v[:, 2]) - height
    unsquashing = np.ptp(before_x[:, 2] + 1e-3 * v[:, 2]) - height
    assert squashing < 0 < unsquashing


def test_the_coarse_level_is_left_out_where_the_passes_do_well_or_it_has_no_rest_shape():
    """Under twice the limit the passes take a few passes and the coarse level would only cost a stiff
    jelly its bounce; a jelly with volume alone is fitted to the shape its volume was added in, but a
    volume over part of the particles (another body beside it) gives no one shape to fit; a jelly whose
    edges or volume are compliant (or inflated) does not hold its energy, so nothing would cap the
    reversal."""
    world, x = _squashed_jelly()
    v = world.velocities.copy()
    i, j, rest = world.distance_constraints
    strain = np.linalg.norm(x[i] - x[j], axis=1) / rest - 1.0
    assert strain.max() > 2 * 0.08
    assert world._coarse_strain_step(x.copy(), v.copy(), np.minimum(strain, 0.159), None) is None
    shapeless, x = _squashed_jelly(shape_stiffness=0.0)
    assert shapeless._coarse_strain_step(x.copy(), v.copy(), strain, None) is not None
    vertices, triangles = icosphere(2, 0.5)
    beside = World(np.concatenate((vertices, vertices + [2.0, 0.0, 0.0])), gravity=(0.0, 0.0, 0.0))
    edges = triangle_edges(triangles)
    beside.add_distance(edges[:, 0], edges[:, 1])
    beside.add_volume(triangles)
    beside.limit_strain(0.08, 0.25)
    assert beside._coarse_rest_shape() is None
    inflated, x = _squashed_jelly()
    inflated._volumes[0]["pressure"] = 1.05
    assert inflated._coarse_strain_step(x, v.copy(), strain, None) is None


def test_a_pinned_particle_stays_and_an_edge_between_two_pins_is_left_alone():
    world = World(np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]]), gravity=(0.0, 0.0, 0.0))
    world.add_distance([0, 1], [1, 2])
    world.add_pin([0])
    world.set_velocities([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [60.0, 0.0, 0.0]])  # the far end flies off
    world.limit_strain(0.1)
    world.step(DT, substeps=1)
    x = world.positions
    assert x[0] == pytest.approx([0.0, 0.0, 0.0])
    assert world.max_stretch() <= 0.1 + 1e-12
    # Two pinned particles pulled apart by their pins: nothing to correct, no passes spent on them.
    pins = World(np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]), gravity=(0.0, 0.0, 0.0))
    pins.add_distance([0], [1])
    pins.add_pin([0])
    pins.add_pin([1], lambda t: [(1.0 + 10.0 * t, 0.0, 0.0)])
    pins.limit_strain(0.1)
    pins.step(DT, substeps=2)
    assert pins.max_stretch() > 0.3 and pins.last_strain_limiting[:2] == (0, True)


def test_free_fall_is_untouched_and_the_ground_holds_during_the_passes():
    """A falling ball's edges do not stretch: strain limiting changes nothing (bit for bit) before it
    lands; after landing no vertex is left under the ground (the passes hold it)."""
    vertices, triangles = icosphere(3, 0.5)
    edges = triangle_edges(triangles)
    worlds = []
    for limit in (None, 0.08):
        world = World(vertices + [0.0, 0.0, 1.3])
        world.add_distance(edges[:, 0], edges[:, 1])
        world.add_ground(0.0, friction=0.5)
        world.particle_radius = 0.02
        if limit:
            world.limit_strain(limit, 0.5)
        worlds.append(world)
    for _ in range(8):  # still in the air
        for world in worlds:
            world.step(DT, substeps=4)
    np.testing.assert_array_equal(worlds[0].positions, worlds[1].positions)
    limited = worlds[1]
    for _ in range(10):
        limited.step(DT, substeps=4)
        assert limited.max_stretch() <= 0.08 + 1e-12
        assert limited.positions[:, 2].min() >= 0.02 - 1e-12
    assert limited.positions[:, 2].min() == pytest.approx(0.02)


def test_strain_limiting_is_left_to_the_substeps_with_contacts_between_bodies_only():
    """Contacts between bodies undo the limiting on the next frame's substeps (tried: two balls sank
    into each other): such worlds keep their stretch by substeps. Self collision limits (its pairs
    pushed apart after the limiting, see test_simulation_self_collision), and so do volume and shape
    matching (their energy held, see below)."""
    vertices, triangles = icosphere(1, 0.5)
    edges = triangle_edges(triangles)

    def world():
        w = World(vertices)
        w.add_distance(edges[:, 0], edges[:, 1])
        w.limit_strain(0.08)
        return w

    assert world().strain_limiting
    with_volume = world()
    with_volume.add_volume(triangles)
    with_shape = world()
    with_shape.add_shape_match(np.arange(len(vertices)), 0.2)
    with_self = world()
    with_self.add_self_collision(np.arange(len(vertices)), 0.05)
    two_bodies = world()  # its halves labelled as two colliding bodies
    two_bodies.add_particle_collisions(0.02, groups=np.arange(len(vertices)) % 2)
    one_body = world()  # one label: nothing to collide with, the limiting stays
    one_body.add_particle_collisions(0.02, groups=np.zeros(len(vertices), np.int64))
    assert not two_bodies.strain_limiting
    assert two_bodies.strain_limiting_blockers() == ["several bodies colliding"]
    assert all(w.strain_limiting for w in (with_volume, with_shape, one_body, with_self))
    off = world()
    off.limit_strain(0.0)
    assert not off.strain_limiting


def _limited_jelly(subdivisions: int, hold_energy: bool, monkeypatch, frames: int = 40, coarse: bool = True):
    """Kinetic plus potential energy (unit masses) per frame of a jelly (rigid edges and volume, shape
    matching 0.2: Bake Soft Body's full defaults, Limit Stretch on) dropped from 1.3 m,
    the energy it started with, and the bake's substep log. ``coarse=False``: without the strain
    limiting's coarse level (World._coarse_strain_step)."""
    if not hold_energy:
        monkeypatch.setattr(World, "_hold_energy", lambda self, x, v: None)
    if not coarse:
        monkeypatch.setattr(World, "_coarse_strain_step", lambda self, *args: None)
    vertices, triangles = icosphere(subdivisions, 0.5)
    body = Body("jelly", vertices + [0.0, 0.0, 1.3], triangle_edges(triangles), triangles)
    settings = SimulationSettings(frames, auto_substeps=True, shape_stiffness=0.2, limit_stretch=True)
    world, _, notes = build_softbody_world([body], [], settings)
    assert world.strain_limiting and not notes

    def energy():
        v = world.velocities
        return 0.5 * float(np.einsum("ij,ij->", v, v)) + 9.81 * float(world.positions[:, 2].sum())

    start, energies, centre = energy(), [], []
    log = SubstepLog()
    for _, positions in run_frames(world, settings, 1, log):
        energies.append(energy())
        centre.append(positions[:, 2].mean())
    monkeypatch.undo()
    return np.array(energies), start, np.array(centre), log


def test_a_limited_jelly_never_ends_a_frame_with_more_energy_than_it_was_dropped_with(monkeypatch):
    """With strain limiting a jelly's impact takes tens of substeps instead of hundreds, and its squash,
    held by rigid volume and edges at few substeps, can throw it higher than it fell: this 2,562-vertex
    one rose to 1.66 m with 79% more energy than it was dropped with (on its second landing). The
    energy it may end a frame with is held to what it had when last relaxed. The coarse level, which
    reverses the squash's growth instead of stopping it, does not pump this drop even without the
    hold; the hold stays for what it does not catch."""
    pumped, start, _, _ = _limited_jelly(4, False, monkeypatch, coarse=False)
    assert pumped.max() > start * 1.01  # the pump this guards against
    coarse, start, _, _ = _limited_jelly(4, False, monkeypatch)
    assert coarse.max() <= start * (1 + 1e-6)
    held, start, centre, log = _limited_jelly(4, True, monkeypatch)
    assert held.max() <= start * (1 + 1e-6)
    landed = int(np.argmin(centre[:20]))
    assert centre[landed] < 0.5 and centre[landed:].max() < 1.3  # it landed and bounced, lower
    assert log.strain_passes > 0 and max(log.per_frame) < log.estimate / 2  # the limiting held it


def _bounce(centre: np.ndarray) -> float:
    """The centre's highest point after the first landing (its lowest point in the first 20 frames)."""
    landed = int(np.argmin(centre[:20]))
    return float(centre[landed:].max())


@pytest.mark.parametrize("subdivisions", [3, 4])
def test_the_coarse_level_keeps_the_default_jellys_bounce_and_its_gain(subdivisions, monkeypatch):
    """The coarse level's pull undoes most of the squash on the ground, and with it the elastic energy
    the squash held; given back as a rebound (World._return_squash_energy), the default jelly bounces
    about as high as without the coarse level (642 / 2,562 vertices: 1.10 / 1.10 m against 1.18 / 1.12;
    0.74 / 0.80 without the rebound) at fewer substeps and with no frame redone (without it: 357 / 443
    substeps, 2 frames redone; with it 236 / 244), and never above the energy it was dropped with."""
    _, _, free_centre, free_log = _limited_jelly(subdivisions, True, monkeypatch, coarse=False)
    energies, start, centre, log = _limited_jelly(subdivisions, True, monkeypatch)
    assert _bounce(centre) >= 0.9 * _bounce(free_centre)
    assert centre.min() < 0.5  # it landed
    assert energies.max() <= start * (1 + 1e-6)
    assert log.redone == 0 < free_log.redone
    assert log.spent < 0.8 * free_log.spent


def test_holding_energy_changes_nothing_where_no_frame_gains_energy(monkeypatch):
    """The 2,562-vertex jelly's first landing (the bench's 30 frames) never ends a frame above its
    budget: bit-identical with and without the energy hold."""
    plain, _, plain_centre, plain_log = _limited_jelly(4, False, monkeypatch, frames=30)
    held, start, centre, log = _limited_jelly(4, True, monkeypatch, frames=30)
    np.testing.assert_array_equal(held, plain)
    np.testing.assert_array_equal(centre, plain_centre)
    assert log.per_frame == plain_log.per_frame
    assert held.max() <= start


def test_the_energy_budget_goes_back_with_a_restored_snapshot():
    vertices, triangles = icosphere(2, 0.5)
    world = World(vertices + [0.0, 0.0, 1.0])
    edges = triangle_edges(triangles)
    world.add_distance(edges[:, 0], edges[:, 1])
    world.add_volume(triangles)
    world.add_ground(0.0)
    world.limit_strain(0.08, 0.25)
    state = world.snapshot()
    world.step(DT, substeps=4)
    assert world._energy_budget is not None
    world.restore(state)
    assert world._energy_budget is None
    moved = world.snapshot()
    world.step(DT, substeps=4)
    budget = world._energy_budget
    world.step(DT, substeps=4)
    world.restore(moved)
    world.step(DT, substeps=4)
    assert world._energy_budget == budget


def test_invalid_strain_limits_are_rejected():
    world = World(np.zeros((2, 3)))
    for stretch, compression, passes in ((-0.1, 0.0, 10), (np.nan, 0.0, 10), (0.1, 1.0, 10), (0.1, 0.0, 0)):
        with pytest.raises(SimulationError):
            world.limit_strain(stretch, compression, passes)


def test_substeps_with_strain_limiting_follow_what_the_limiting_costs():
    """Fewer substeps while the limiting cost under half the frame's substeps (in edge projections),
    the same up to twice, more above; a redone frame keeps its substeps."""
    vertices, triangles = icosphere(1, 0.5)
    edges = triangle_edges(triangles)
    world = World(vertices)
    world.add_distance(edges[:, 0], edges[:, 1])
    world.limit_strain(0.08)
    stepper = AdaptiveStepper(world, DT, max_stretch=0.08, minimum=2, maximum=500, log=SubstepLog())
    substep = 10 * world.stiff_edge_count  # ten substeps' edge projections
    for work, expected in ((0, 6), (substep // 2, 6), (substep, 10), (2 * substep, 10), (3 * substep, 13)):
        world.last_strain_limiting = (1, True, work)
        assert stepper._next_limited(10, redone=False) == expected, work
    assert stepper._next_limited(10, redone=True) == 10


def test_the_bake_budget_expects_few_substeps_when_strain_is_limited():
    """A cloth-like 40,962-vertex ball, 30 frames (about 10 s through Bake Soft Body with Limit Stretch,
    bench_softbody_scale.py) is not refused by a script's 50 s limit; by substeps alone it would be."""
    from addon.limits import TooMuchWorkError
    from addon.simulation.budget import check_bake_size, substeps_estimate
    from addon.simulation.scenes import SimulationSettings

    settings = SimulationSettings(frame_count=30, auto_substeps=True, limit_stretch=True)
    assert substeps_estimate(settings, strain_limited=True) < substeps_estimate(settings)
    check_bake_size("ball", settings, 40_962, 122_880, time_limit=50.0, strain_limited=True)
    with pytest.raises(TooMuchWorkError, match="would take about"):
        check_bake_size("ball", settings, 40_962, 122_880, time_limit=50.0)


def test_a_bake_that_asked_for_limit_stretch_says_when_it_is_off_and_why():
    """Bake Soft Body's Limit Stretch is on by default, Self Collision off: the report must say when
    the limiting did not run, not leave the user to think it did. A jelly (volume and shape matching,
    the defaults) limits, with compression held to 25% instead of a cloth's 50%."""
    vertices, triangles = icosphere(1, 0.5)
    ball = Body("Ball", vertices + [0.0, 0.0, 1.0], triangles=triangles)
    cloth_like = SimulationSettings(limit_stretch=True, use_volume=False, shape_stiffness=0.0)
    world, _, notes = build_softbody_world([ball], [], cloth_like)
    assert world.strain_limiting and world.compression_limit == 0.5
    assert not [note for note in notes if "Limit Stretch" in note]
    jelly = replace(cloth_like, use_volume=True, shape_stiffness=0.2)
    world, _, notes = build_softbody_world([ball], [], jelly)
    assert world.strain_limiting and world.compression_limit == 0.25
    assert not [note for note in notes if "Limit Stretch" in note]
    world, _, notes = build_softbody_world([ball], [], replace(cloth_like, self_collision=True))
    assert world.strain_limiting and not [note for note in notes if "Limit Stretch" in note]
    apart = Body("Other", vertices + [2.0, 0.0, 1.0], triangles=triangles)
    world, _, notes = build_softbody_world([ball, apart], [], cloth_like)
    assert not world.strain_limiting
    assert "Limit Stretch is off with several bodies colliding: the substeps keep the stretch" in notes


def test_only_rigid_jellies_hold_their_energy():
    """A compliant edge or volume stores elastic energy the edge strains do not show (the demo's
    Jelly preset has compliant edges): the hold would take every rebound for a pump, so it is off."""
    vertices, triangles = icosphere(1, 0.5)
    edges = triangle_edges(triangles)

    def jelly(edge_compliance=0.0, volume_compliance=0.0):
        world = World(vertices)
        world.add_distance(edges[:, 0], edges[:, 1], compliance=edge_compliance)
        world.add_volume(triangles, compliance=volume_compliance)
        world.limit_strain(0.08, 0.25)
        return world

    assert jelly()._holds_energy()
    assert not jelly(edge_compliance=5e-5)._holds_energy()
    assert not jelly(volume_compliance=1e-6)._holds_energy()
    pinned = jelly()
    pinned.add_pin([0], lambda t: np.array([[0.0, 0.0, t]]))
    assert not pinned._holds_energy()
