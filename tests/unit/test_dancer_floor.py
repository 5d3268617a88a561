"""The feet on the floor: standing still in a position, the feet stay where they stand.

MuJoCo's contacts are soft, in their friction directions too: under a steady sideways load a foot below
its friction limit still creeps. Standing, the splayed or split legs push their feet sideways, so the feet
creep and in the split positions twist, turning the dancer on the floor: in 3 s at 1.65 m each ankle moves
0.9 mm in first, 2.6 in second, 1.8-2.6 in third, 4.3-5.2 in fourth and 2.7-3.8 in fifth, and the pelvis
turns 0.75, 1.75 and 1.19 degrees in third, fourth and fifth (perform's position-scoped aims make up for
it in steps: SQUEEZE_AT, BACK_FOOT_COMPLIANCE, ACROSS_COMPLIANCE, CLOSE_ON_THE_PLACE).

MuJoCo's noslip solver (``<option noslip_iterations="5"/>``) removes the creep at its source: 0.1 mm and
0.04-0.11 degrees in the same 3 s, and the back foot's change from fourth into fifth lands 0.11 cm off
fifth's places with the aims off (1.0 without noslip). It is not the model's yet because the controller
relies on the creep elsewhere: a change into second lands its foot 3-3.5 cm in from its place (the chain
plans the pelvis 2.7 cm above where the sagging supporting leg holds it, and the landing foot swings in as
it rises), and the creep walks it onto the place in the next 5 s; with noslip it stays there, and 98 of
488 tests of test_dancer_perform fail (feet off their places, 36 or more falls).
"""

import numpy as np
import pytest

from addon.dancer import POSITIONS, perform

STANDING = 3.0  # seconds
FEET = ("foot.L", "foot.R", "toe.L", "toe.R")


def _yaw(quat):
    w, x, y, z = quat
    return np.degrees(np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z)))


@pytest.mark.xfail(strict=True, reason=(
    "MuJoCo's soft friction lets the loaded feet creep: in 3 s each ankle moves 0.9-5.2 mm and the pelvis "
    "turns up to 1.75 degrees (fourth); noslip_iterations=5 makes it 0.1 mm and 0.11 degrees but the "
    "changes into second then land 3-3.5 cm off their places (see the module's docstring)"))
@pytest.mark.parametrize("position", POSITIONS)
def test_standing_in_a_position_the_feet_stay_where_they_stand(position):
    show = perform((position,), durations={"position": STANDING})
    assert not show.fell
    assert show.times[-1] >= STANDING - 0.01
    for body in FEET:
        moved = show.joint_positions[body][-1, :2] - show.joint_positions[body][0, :2]
        assert np.linalg.norm(moved) < 0.0005, body
    turned = _yaw(show.rotations["hips"][-1]) - _yaw(show.rotations["hips"][0])
    assert abs(turned) < 0.3
