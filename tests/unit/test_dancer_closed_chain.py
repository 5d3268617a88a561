"""The closed-chain weight shift's kinematics: the pelvis moves, both feet stay on their spots."""

import numpy as np
import pytest

pytest.importorskip("mujoco")

from addon.dancer.closed_chain import KNEE_HAIR, ClosedChain, level_frame  # noqa: E402
from addon.dancer.model import build_body  # noqa: E402
from addon.dancer.sim import DancerSim  # noqa: E402
from addon.dancer.steps import position_pose  # noqa: E402


@pytest.mark.parametrize("position", ["first_position", "second_position", "fifth_position"])
def test_both_feet_stay_on_their_spots_as_the_pelvis_goes_over_one(position):
    body = build_body(1.65, 55.0, "female")
    sim = DancerSim(body)
    sim.set_angles(position_pose(position))
    sim.place()
    chain = ClosedChain(DancerSim(body))
    spots = {}
    for s in ("L", "R"):
        foot = sim.body_ids[f"foot.{s}"]
        spots[s] = (sim.data.xpos[foot].copy(), level_frame(sim.data.xmat[foot].reshape(3, 3)))
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
