"""The generated dancer body follows the anthropometric tables and compiles in MuJoCo."""

import numpy as np
import pytest

from addon.dancer import DancerError, build_body
from addon.dancer.anthropometry import (
    LENGTHS,
    PLAGENHOEF_FEMALE,
    TOE_MASS_SHARE,
    WINTER_MALE,
    total_mass_fraction,
)
from addon.dancer.sim import DancerSim


@pytest.mark.parametrize("table", [WINTER_MALE, PLAGENHOEF_FEMALE])
def test_tables_cover_the_whole_body(table):
    assert total_mass_fraction(table) == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize(("sex", "height", "mass"), [("female", 1.65, 55.0), ("male", 1.82, 78.0)])
def test_segment_masses_sum_to_the_body_mass_and_follow_the_table(sex, height, mass):
    body = build_body(height, mass, sex)
    table = PLAGENHOEF_FEMALE if sex == "female" else WINTER_MALE
    assert sum(b.mass for b in body.bodies) == pytest.approx(mass, rel=1e-12)
    thigh = body.body("thigh.L")
    assert thigh.mass == pytest.approx(table["thigh"].mass * mass)
    assert body.body("shin.R").mass == pytest.approx(table["shank"].mass * mass)
    foot_and_toe = body.body("foot.L").mass + body.body("toe.L").mass
    assert foot_and_toe == pytest.approx(table["foot"].mass * mass)
    assert body.body("toe.L").mass == pytest.approx(TOE_MASS_SHARE * table["foot"].mass * mass)
    forearm_hand = body.body("forearm.R").mass
    assert forearm_hand == pytest.approx((table["forearm"].mass + table["hand"].mass) * mass)
    # COM along the thigh at the table's fraction of its length from the hip.
    thigh_length = LENGTHS["thigh"] * height
    assert thigh.origin[2] - thigh.com[2] == pytest.approx(table["thigh"].com_from_proximal * thigh_length)
    # Transverse moment of inertia I = m (Rg L)^2.
    gyration = table["thigh"].radius_of_gyration * thigh_length
    assert thigh.inertia[0] == pytest.approx(thigh.mass * gyration**2)


def test_compiled_model_has_the_same_masses_and_com():
    body = build_body(1.70, 60.0, "female")
    sim = DancerSim(body)
    m = sim.model
    assert m.body_mass.sum() == pytest.approx(60.0, rel=1e-5)
    sim.set_angles({})
    sim.place()
    # Eq. 3 from the segment COMs equals MuJoCo's whole-body COM.
    from addon.dancer.support import center_of_mass

    com = center_of_mass(m.body_mass[1:], sim.data.xipos[1:])
    np.testing.assert_allclose(com, sim.data.subtree_com[sim.root], atol=1e-9)
    # Standing straight, the COM sits a little above half the height (Winter: about 0.55 H).
    assert 0.53 * 1.70 < com[2] < 0.58 * 1.70


def test_taller_dancer_is_scaled():
    short, tall = build_body(1.5, 50.0), build_body(1.8, 50.0)
    assert tall.body("shin.L").origin[2] / short.body("shin.L").origin[2] == pytest.approx(1.8 / 1.5)


@pytest.mark.parametrize(
    ("kwargs", "word"),
    [({"height": 0.3}, "height"), ({"mass": float("nan")}, "mass"), ({"sex": "robot"}, "sex")],
)
def test_bad_body_parameters_are_named(kwargs, word):
    with pytest.raises(DancerError, match=word):
        build_body(**kwargs)
