"""Rigid bodies keep their spin in flight (with the default body-by-body fit: a known failure), and with
sequential rigid contacts (``enable_rigid_contacts(sequential=True)``, Müller et al. 2020) a drum rolls
on, rolling resistance slows it as a wheel's does, and Coulomb friction holds a box on a slope below
arctan(mu_s) and lets it slide with mu_d above."""

import numpy as np
import pytest

from addon.simulation import SimulationError, World
from addon.simulation.heaps import CUBE_CORNERS, CUBE_TRIANGLES
from addon.simulation.scenes import Body, SimulationSettings, build_rigid_world, surface_samples_with_normals

G = 9.81
RADIUS = 0.5  # the drum's
FPS = 24


def _angular_velocity(world):
    r = world.positions - world.positions.mean(axis=0)
    momentum = np.cross(r, world.velocities).sum(axis=0)
    inertia = np.einsum("ij,ij->", r, r) * np.eye(3) - r.T @ r
    return np.linalg.solve(inertia, momentum)


@pytest.mark.parametrize("sequential", [
    pytest.param(False, id="body_fit", marks=pytest.mark.xfail(strict=True, reason=(
        "known: the default (body-by-body fit) path keeps Müller's warm-started rotation, which lags a "
        "ninth of each substep's turn; giving it the exact rotation keeps the spin, but then the 50-cube "
        "pour at friction 0.5 flings a cube 9.4 m (notes/issue-19b.md, session 4 lead's review)"))),
    pytest.param(True, id="sequential"),
])
def test_a_cube_spinning_in_the_air_keeps_its_spin(sequential):
    points, normals = surface_samples_with_normals(CUBE_CORNERS * 0.3, CUBE_TRIANGLES, 0.1)
    world = World(points + [0.0, 0.0, 5.0], gravity=(0.0, 0.0, 0.0))
    world.add_shape_match(np.arange(len(points)))
    world.add_particle_collisions(0.05, groups=np.zeros(len(points), np.int64))
    world.enable_rigid_contacts(normals, sequential=sequential)
    omega = np.array([1.0, 2.0, 0.5])
    world.set_velocities(np.cross(omega, world.positions - world.positions.mean(axis=0)))
    for _ in range(FPS):
        world.step(1.0 / FPS, substeps=20)
    # A free cube's angular velocity is constant (its inertia is isotropic); it used to be gone in a
    # second (each substep's shape match lagged a ninth of the turn behind).
    assert _angular_velocity(world) == pytest.approx(omega, rel=0.05)


def _drum(friction, rolling_resistance=0.0, seconds=1.0):
    """A drum (two rings of 160 samples, radius 0.5 m) rolling at 1 m/s on the ground: its centre's x
    per frame."""
    count = 160
    angles = np.arange(count) * 2.0 * np.pi / count
    ring = np.stack((RADIUS * np.cos(angles), np.zeros(count), RADIUS * np.sin(angles)), axis=1)
    points = np.concatenate([ring + [0.0, y, 0.0] for y in (-0.15, 0.15)])
    radius = np.pi * RADIUS / count  # samples a diameter apart
    centre = np.array([0.0, 0.0, RADIUS + radius])
    normals = points.copy()
    normals[:, 1] = 0.0
    normals /= np.linalg.norm(normals, axis=1)[:, None]
    world = World(points + centre)
    world.add_shape_match(np.arange(len(points)))
    world.add_particle_collisions(radius, groups=np.zeros(len(points), np.int64), friction=friction)
    world.enable_rigid_contacts(normals, sequential=True)
    world.add_ground(0.0, friction)
    if rolling_resistance:
        world.set_rolling_resistance(rolling_resistance)
    spin = np.array([0.0, 1.0 / (RADIUS + radius), 0.0])
    world.set_velocities([1.0, 0.0, 0.0] + np.cross(spin, points))
    xs = []
    for _ in range(round(seconds * FPS)):
        world.step(1.0 / FPS, substeps=20)
        xs.append(world.positions.mean(axis=0)[0])
    return np.array(xs), world


def test_a_drum_rolls_on_over_frictionless_and_rough_ground():
    # Frictionless: nothing slows it, and its spin only loses what its 160-gon's corners landing one
    # after another cost (the old per-body contact fit stopped it within a frame).
    xs, world = _drum(0.0)
    assert (xs[-1] - xs[-2]) * FPS == pytest.approx(1.0, abs=0.01)
    assert _angular_velocity(world)[1] * (RADIUS + np.pi * RADIUS / 160) > 0.94
    # Friction 0.5: it rolls without slipping and loses only what landing on each next sample of its
    # 160-gon costs (a few percent in a second; it stopped within a frame before).
    xs, world = _drum(0.5)
    assert (xs[-1] - xs[-2]) * FPS > 0.94
    assert _angular_velocity(world)[1] * RADIUS == pytest.approx((xs[-1] - xs[-2]) * FPS, rel=0.03)


@pytest.mark.parametrize("coefficient", [0.1, 0.2])
def test_rolling_resistance_slows_a_rolling_drum_at_c_g_over_two(coefficient):
    """A ring (I = M R^2) under a torque c M g R against its rolling slows at c g / 2."""
    xs, _ = _drum(0.5, coefficient)
    speeds = np.diff(xs) * FPS
    times = (np.arange(len(speeds)) + 1.5) / FPS
    rolling = speeds > 0.05
    deceleration = -np.polyfit(times[rolling], speeds[rolling], 1)[0]
    assert deceleration == pytest.approx(coefficient * G / 2.0, rel=0.1)
    assert speeds.min() > -0.01  # it stops; it is never turned back


def test_rolling_resistance_needs_sequential_rigid_contacts_and_a_coefficient_of_at_least_zero():
    world = World(np.eye(3))
    with pytest.raises(SimulationError, match="sequential rigid contacts"):
        world.set_rolling_resistance(0.1)
    world.add_shape_match(np.arange(3))
    world.enable_rigid_contacts(sequential=False)
    with pytest.raises(SimulationError, match="sequential rigid contacts"):
        world.set_rolling_resistance(0.1)
    world.enable_rigid_contacts(sequential=True)
    with pytest.raises(SimulationError, match="rolling resistance"):
        world.set_rolling_resistance(-0.1)


def _box_on_a_slope(degrees, friction, static_friction=None, speed=0.0, seconds=1.0):
    """How far a 0.3 m box standing on the ground slides in ``seconds`` with gravity tilted by
    ``degrees`` (a slope that steep), started at ``speed`` down it (as test_simulation_piles, with
    sequential contacts)."""
    settings = SimulationSettings(
        frame_count=round(FPS * seconds), auto_substeps=True, min_substeps=20, friction=friction,
        static_friction=static_friction, sleep_speed=0.0, particle_radius=0.05,
    )  # fmt: skip
    corners = CUBE_CORNERS * 0.3 + [0.0, 0.0, 0.15]
    world, _, _ = build_rigid_world([Body("box", corners, triangles=CUBE_TRIANGLES)], [], settings)
    world.enable_rigid_contacts(sequential=True)
    tilt = np.radians(degrees)
    world.gravity = G * np.array([np.sin(tilt), 0.0, -np.cos(tilt)])
    world.set_velocities([speed, 0.0, 0.0])
    start = world.positions.mean(axis=0)
    for _ in range(settings.frame_count):
        world.step(1.0 / FPS, substeps=20)
    return float(world.positions.mean(axis=0)[0] - start[0])


def _coulomb(degrees, friction, speed, seconds=1.0):
    tilt = np.radians(degrees)
    acceleration = G * (np.sin(tilt) - friction * np.cos(tilt))
    if acceleration >= 0:
        return speed * seconds + 0.5 * acceleration * seconds**2
    stop = min(seconds, speed / -acceleration)
    return speed * stop + 0.5 * acceleration * stop**2


def test_static_and_dynamic_friction_follow_coulomb_with_sequential_contacts():
    # tan(25 deg) = 0.47: held by static 0.6 (it slid 0.68 m when static friction was per contact).
    assert abs(_box_on_a_slope(25.0, 0.3, 0.6)) < 0.002
    # Sliding: g (sin - 0.3 cos) from rest, from 1 m/s down the slope, and to a stop on flat ground.
    assert _box_on_a_slope(25.0, 0.3) == pytest.approx(_coulomb(25.0, 0.3, 0.0), rel=0.05)
    assert _box_on_a_slope(25.0, 0.3, 0.6, speed=1.0) == pytest.approx(_coulomb(25.0, 0.3, 1.0), rel=0.05)
    assert _box_on_a_slope(0.0, 0.3, speed=1.0) == pytest.approx(_coulomb(0.0, 0.3, 1.0), rel=0.05)


def test_a_box_on_a_steep_rough_slope_holds_below_arctan_mu_and_slides_as_coulomb_says_above():
    """At mu 0.8 (arctan: 38.7 deg) a box stays on its face: held at 38 deg, at 40 deg it slides with
    g (sin - mu cos) (0.147 m in 1 s). When friction acted at the face patch's depth its torque tipped
    the box onto its leading edge, and riding on it the box slid 0.40 m at 38 deg and 0.70 m at 40."""
    assert abs(_box_on_a_slope(38.0, 0.8)) < 0.002
    assert _box_on_a_slope(40.0, 0.8) == pytest.approx(_coulomb(40.0, 0.8, 0.0), rel=0.1)


def test_a_cube_spinning_flat_on_the_floor_stops_as_coulomb_friction_over_its_face_says():
    """Friction acts against turning about the contact normal too (spread over the face it stands on):
    a 0.3 m cube spun about the vertical decelerates at ``mu g r / k^2`` (``r`` the mean distance of the
    touching samples from the face's centre, ``k^2`` its inertia about the vertical over its mass: a
    solid cube's, a^2 / 6, not its surface samples', 5/3 as much: by them it would stop at 0.15 s, it
    stops at 0.08 s). A plank knocked into a spin kept turning for seconds when friction acted
    at the patch's centre only. Measured over the first frame, while it still turns (its stopping frame
    is a whole 0.042 s frame off either way): 43 rad/s^2 against Coulomb's 49.5; 77 when the face's
    friction acted at its depth and its tipping turn rocked the cube."""
    friction, spin = 0.5, 4.0
    settings = SimulationSettings(auto_substeps=True, min_substeps=20, friction=friction, sleep_speed=0.0,
                                  particle_radius=0.05, rigid_contacts="sequential")  # fmt: skip
    corners = CUBE_CORNERS * 0.3 + [0.0, 0.0, 0.15]
    world, _, _ = build_rigid_world([Body("box", corners, triangles=CUBE_TRIANGLES)], [], settings)
    for _ in range(6):  # settle onto the floor
        world.step(1.0 / FPS, substeps=20)
    r = world.positions - world.positions.mean(axis=0)
    world.set_velocities(np.cross([0.0, 0.0, spin], r))
    bottom = r[:, 2] < r[:, 2].min() + 1e-6
    lever = np.linalg.norm(r[bottom, :2], axis=1).mean()
    rates = []
    for _ in range(FPS):
        world.step(1.0 / FPS, substeps=20)
        rates.append(_angular_velocity(world)[2])
    assert rates[0] > 0.25 * spin  # still turning after the first frame
    assert (spin - rates[0]) * FPS == pytest.approx(friction * G * lever / (0.3**2 / 6.0), rel=0.25)
    assert abs(rates[-1]) < 0.01  # and stays stopped


def test_rigid_pile_settings_choose_the_contact_solver_and_carry_rolling_resistance():
    corners = CUBE_CORNERS * 0.3 + [0.0, 0.0, 0.15]
    box = [Body("box", corners, triangles=CUBE_TRIANGLES)]
    world, _, _ = build_rigid_world(box, [], SimulationSettings())
    with pytest.raises(SimulationError, match="sequential rigid contacts"):
        world.set_rolling_resistance(0.1)  # the body fit is the default
    settings = SimulationSettings(rigid_contacts="sequential", rolling_resistance=0.2)
    world, _, _ = build_rigid_world(box, [], settings)
    assert world._rolling_resistance == 0.2
    with pytest.raises(SimulationError, match="rolling resistance needs sequential"):
        SimulationSettings(rolling_resistance=0.2)
    with pytest.raises(SimulationError, match="rigid contacts must be one of"):
        SimulationSettings(rigid_contacts="exact")


def _box_on_a_box(degrees, friction):
    """How far a 0.3 m cube resting on a 2 m x 2 m x 0.3 m box (held by a ground of friction 2) slides
    over it in 1 s with gravity tilted by ``degrees``, friction ``friction`` between the two."""
    settings = SimulationSettings(
        frame_count=FPS, auto_substeps=True, min_substeps=20, friction=friction, sleep_speed=0.0,
        particle_radius=0.05, rigid_contacts="sequential",
    )  # fmt: skip
    plate = CUBE_CORNERS * [2.0, 2.0, 0.3] + [0.0, 0.0, 0.15]
    cube = CUBE_CORNERS * 0.3 + [0.0, 0.0, 0.55]
    bodies = [Body("plate", plate, triangles=CUBE_TRIANGLES), Body("cube", cube, triangles=CUBE_TRIANGLES)]
    world, _, offsets = build_rigid_world(bodies, [], settings)
    world.add_ground(0.0, 2.0, 2.0)
    for _ in range(6):  # settle
        world.step(1.0 / FPS, substeps=20)
    tilt = np.radians(degrees)
    world.gravity = G * np.array([np.sin(tilt), 0.0, -np.cos(tilt)])

    def apart():
        return world.positions[offsets[1] :].mean(axis=0) - world.positions[: offsets[1]].mean(axis=0)

    start = apart()
    for _ in range(FPS):
        world.step(1.0 / FPS, substeps=20)
    return float(apart()[0] - start[0])


def test_a_cube_slides_on_another_box_as_coulomb_says_with_sequential_contacts():
    """Friction between two bodies, not only on the ground: a patch that static friction held in the
    position pass used to get dynamic friction in the velocity pass on top, and the cube stayed put at
    25 deg with mu 0.3 (1 cm in 1 s)."""
    assert _box_on_a_box(25.0, 0.3) == pytest.approx(_coulomb(25.0, 0.3, 0.0), rel=0.05)
    assert abs(_box_on_a_box(10.0, 0.3)) < 0.01  # tan(10 deg) = 0.18: held


@pytest.mark.parametrize("degrees, friction", [(24.0, 0.5), (37.0, 0.8)])
def test_a_cube_on_a_box_stays_put_below_arctan_mu(degrees, friction):
    """Static friction between bodies holds a cube on a box tilted less than arctan(mu) (26.6 deg at
    0.5, 38.7 at 0.8), as on the ground. With shock propagation the box is immovable to the cube's
    contacts; friction used to hold the cube to where gravity alone took the box each substep, not
    where the ground held it, and the cube crept down at g sin(theta) h (h the substep): 8.3 mm in
    1 s at (24 deg, 0.5), 12.3 at (37, 0.8). Measured now: under a micrometre."""
    assert abs(_box_on_a_box(degrees, friction)) < 0.002


def _cube_tipped_past_its_edge(degrees, rolling_resistance, seconds=2.0):
    """Where a 0.3 m cube's centre is ``seconds`` after it was let go standing on an edge on the ground,
    turned ``degrees`` past balance (its centre beyond the edge), at friction 0.3 with sequential
    contacts and ``rolling_resistance``: (height, how far it moved the way it leaned)."""
    tilt = np.radians(45.0 - degrees)
    turn = np.array([[np.cos(tilt), 0.0, np.sin(tilt)], [0.0, 1.0, 0.0], [-np.sin(tilt), 0.0, np.cos(tilt)]])
    corners = CUBE_CORNERS * 0.3 @ turn.T
    corners[:, 2] += 0.05 + 0.001 - corners[:, 2].min()  # a particle radius over the ground
    edge = corners[np.argsort(corners[:, 2])[:2], 0].mean()
    lean = np.sign(corners[:, 0].mean() - edge)
    settings = SimulationSettings(
        frame_count=round(FPS * seconds), auto_substeps=True, min_substeps=20, friction=0.3, sleep_speed=0.0,
        particle_radius=0.05, rigid_contacts="sequential", rolling_resistance=rolling_resistance,
    )  # fmt: skip
    world, _, _ = build_rigid_world([Body("cube", corners, triangles=CUBE_TRIANGLES)], [], settings)
    start = world.positions.mean(axis=0)
    for _ in range(settings.frame_count):
        world.step(1.0 / FPS, substeps=20)
    centre = world.positions.mean(axis=0)
    return float(centre[2]), float(lean * (centre[0] - start[0]))


# What Add Rigid Pile (Pour) sets at friction 0.3 and 0.5 (heaps.pour_rolling_resistance); with the lever
# from the cube's centre (0.26 m on its edge) 0.18 and 0.3 held it on its edge (0.26 m high after 2 s).
@pytest.mark.parametrize("rolling_resistance", [0.0, 0.18, 0.3])
def test_a_cube_tipped_past_balance_on_its_edge_falls_onto_its_face(rolling_resistance):
    """A cube on an edge with its centre 5 degrees beyond it falls onto its face (its centre a half edge
    and a particle radius high: 0.2 m) whatever resists rolling: rolling resistance slows a body that
    rolls, it cannot hold up one that gravity tips over. Held on their edges, cubes of a pour lean
    against each other and stand steep: at friction 0.3 (Rolling Resistance 0.18) 11-12 of 50 cubes
    ended tilted more than 20 degrees, and the heap at 22-34 deg (arctan 0.3: 16.7;
    test_simulation_heap_pour.py). On its edge the cube rolls on its samples' radius, not on its lever
    from the centre (rigid_contacts._rolling_levers)."""
    height, across = _cube_tipped_past_its_edge(5.0, rolling_resistance)
    assert height == pytest.approx(0.2, abs=0.005)
    assert across > 0.0  # it fell the way it leaned
