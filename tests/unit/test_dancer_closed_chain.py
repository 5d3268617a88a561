"""The closed-chain weight shift's kinematics: the pelvis moves, both feet stay on their spots."""

import numpy as np
import pytest

pytest.importorskip("mujoco")

from addon.dancer.closed_chain import KNEE, KNEE_HAIR, ClosedChain, level_frame  # noqa: E402
from addon.dancer.model import build_body  # noqa: E402
from addon.dancer.sim import DancerSim  # noqa: E402
from addon.dancer.steps import position_pose  # noqa: E402


def _standing(position: str):
    """A dancer standing in ``position``, a closed chain on a model of its own, and each foot's spot."""
    body = build_body(1.65, 55.0, "female")
    sim = DancerSim(body)
    sim.set_angles(position_pose(position))
    sim.place()
    chain = ClosedChain(DancerSim(body))
    spots = {}
    for s in ("L", "R"):
        foot = sim.body_ids[f"foot.{s}"]
        spots[s] = (sim.data.xpos[foot].copy(), level_frame(sim.data.xmat[foot].reshape(3, 3)))
    return sim, chain, spots


@pytest.mark.parametrize("position", ["first_position", "second_position", "fifth_position"])
def test_both_feet_stay_on_their_spots_as_the_pelvis_goes_over_one(position):
    sim, chain, spots = _standing(position)
    start = sim.data.qpos[0:3].copy()
    level = np.array([1.0, 0.0, 0.0, 0.0])
    knees = [sim.index["shin.L_y"], sim.index["shin.R_y"]]
    # Over the middle of the left sole, a millimetre a tick as the balance moves it (two iterations
    # a tick, each from the last tick's angles; the first, from the straight knees, is 2 mm off).
    ankle, frame = spots["L"]
    way = ankle[:2] + 0.05 * frame[:2, 0] - start[:2]
    steps = int(np.linalg.norm(way) / 0.001)
    assert steps > 20
    for mm in range(steps + 1):
        xy = start[:2] + way * mm / steps
        pelvis = np.array([*xy, chain.pelvis_height(xy, np.eye(3), spots)])
        angles = chain.solve(sim.targets, pelvis, level, spots)
        assert chain.foot_error(spots) < (3e-3 if mm == 0 else 5e-4)
    # The pelvis went down as the legs tilted; the more stretched leg stays straight (a hair
    # bent), the other one gives.
    assert pelvis[2] < start[2]
    straight, bent = sorted(angles[knees])
    assert straight == pytest.approx(KNEE_HAIR, abs=0.01)
    assert bent > straight + 0.05
    # The foot frames are held flat: the ankles turned, the soles did not.
    d = chain.scratch.data
    for s in ("L", "R"):
        np.testing.assert_allclose(d.xmat[chain.foot[s]].reshape(3, 3)[:, 2], [0.0, 0.0, 1.0], atol=2e-3)


def test_the_roll_from_each_legs_height_stands_both_legs_straight():
    sim, chain, spots = _standing("first_position")
    # The right foot set down 6 mm nearer the pelvis than it stood (a landing a little off its place).
    spots["R"] = (spots["R"][0] + np.array([0.0, 0.0, 0.006]), spots["R"][1])
    xy = sim.data.qpos[0:2].copy()
    level = chain.leg_heights(xy, np.eye(3), spots)
    assert level["R"] - level["L"] == pytest.approx(0.006, abs=1e-4)
    # Level, the pelvis stands at the lower height and the right knee bends; rolled, each hip is as
    # high as its leg reaches: the right hip up, the left one down (by half the difference each).
    roll = chain.level_roll(level)
    assert roll < 0.0
    c, s = np.cos(roll), np.sin(roll)
    rolled = chain.leg_heights(xy, np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]]), spots)
    assert rolled["L"] == pytest.approx(rolled["R"], abs=2e-4)
    assert rolled["L"] == pytest.approx(0.5 * (level["L"] + level["R"]), abs=2e-4)
    pelvis = np.array([*xy, chain.pelvis_height(xy, np.eye(3), spots)])
    level_angles = chain.solve(sim.targets, pelvis, np.array([1.0, 0.0, 0.0, 0.0]), spots, iterations=20)
    chain.warm = {}
    quat = np.array([np.cos(0.5 * roll), np.sin(0.5 * roll), 0.0, 0.0])
    pelvis[2] = min(rolled.values())
    rolled_angles = chain.solve(sim.targets, pelvis, quat, spots, iterations=20)
    assert chain.foot_error(spots) < 5e-4
    knee = chain.index["R"][KNEE]
    assert level_angles[knee] > KNEE_HAIR + 0.1
    assert rolled_angles[knee] == pytest.approx(KNEE_HAIR, abs=0.01)
