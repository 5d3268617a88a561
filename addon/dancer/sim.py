"""MuJoCo simulation of the dancer with the paper's balance controllers acting on joint targets.

The muscles are MuJoCo position actuators: torque = kp (target - angle) - kv velocity, which is
eq. 1. Controllers never write torques; like the paper (eq. 2) they update target angles each
control tick (100 Hz):

* the COM strategy (eq. 6) turns the stance leg by an amount proportional to the COM error and
  velocity;
* the COP strategy (eqs. 7-9) first chooses where the COP should be to push the COM towards its
  target (an inverted pendulum: the COP goes behind the COM to accelerate it forward), then turns
  the stance leg until the measured COP is there.

"Turning the stance leg" is a lean: a small world rotation of the body above the stance feet,
distributed onto ankle (or toe) and hip hinges by projecting it on their world axes, ankles
with the opposite sign to the hips, so a weight shift changes ankle and hip angles equally and
the pelvis stays level (section 4.1).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from .. import quaternions
from .anthropometry import DancerError
from .model import DancerBody
from .support import hull_vertices

CONTROL_DT = 0.01
_sum = np.add.reduce  # what ndarray.sum calls, less its Python wrapper (several sums a tick)
CONTACT_BODIES = ("foot.L", "toe.L", "foot.R", "toe.R")
# On the balls of both feet a control tick is integrated in this many times as many steps: at the
# model's step the damped ankle and toe actuators and the balls' contacts went unstable together
# (more actuator damping made it worse, halving the step cured it), both feet hopped off the floor
# for 2 ticks in 7 as the heels rose and came down, and each landing slid the balls back.
FINE_STEPS = 2


@dataclass
class Measurement:
    """What the controllers see at one tick."""

    com: NDArray[np.float64]
    com_velocity: NDArray[np.float64]
    cop: NDArray[np.float64]
    hull: NDArray[np.float64]
    in_contact: NDArray[np.bool_]
    total_normal_force: float
    hull_vertices: list = field(default_factory=list)  # ``hull`` as (x, y) tuples, for plain-float use


def mujoco_unavailable() -> str | None:
    """Why MuJoCo cannot be loaded here (no wheel for this platform or Python, a broken install), or
    None when it can: the dancer's operators and panel say this instead of failing on the first bake."""
    try:
        import mujoco  # noqa: F401
    except (ImportError, OSError) as exc:  # OSError: a wheel whose shared library cannot load
        return (f"the MuJoCo physics engine cannot be loaded on this platform or Python ({exc}); "
                "every other ProcAnim generator works")
    return None


def _mujoco():
    reason = mujoco_unavailable()
    if reason is not None:
        raise DancerError(reason)
    import mujoco

    if mujoco.get_mju_user_warning() is None:
        # MuJoCo's default handler appends to MUJOCO_LOG.TXT in the working directory (a user's
        # home or project folder); a fall is detected from the state, so the text only needs keeping.
        mujoco.set_mju_user_warning(_remember_warning)
    return mujoco


MUJOCO_WARNINGS: list[str] = []


def _remember_warning(message: str) -> None:
    MUJOCO_WARNINGS.append(message)
    del MUJOCO_WARNINGS[:-20]


def _sum_as_numpy(values: list[float]) -> float:
    """``float(np.add.reduce(np.array(values)))`` in plain floats: numpy's pairwise summation (eight
    running sums, then the rest in order; at most a few dozen contacts, within its first block)."""
    count = len(values)
    if count < 8:
        total = 0.0
        for value in values:
            total += value
        return total
    if count > 128:
        return float(_sum(np.array(values)))
    r0, r1, r2, r3, r4, r5, r6, r7 = values[:8]
    full = count - count % 8
    for i in range(8, full, 8):
        r0 += values[i]
        r1 += values[i + 1]
        r2 += values[i + 2]
        r3 += values[i + 3]
        r4 += values[i + 4]
        r5 += values[i + 5]
        r6 += values[i + 6]
        r7 += values[i + 7]
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for value in values[full:]:
        total += value
    return total


def lean_for_shift(shift_xy: NDArray[np.float64], height: float) -> NDArray[np.float64]:
    """World rotation (about x, y) of a body pivoting ``height`` below its COM moving it by ``shift_xy``."""
    return np.array([-shift_xy[1], shift_xy[0]]) / height


@lru_cache(maxsize=4)
def _compiled(mjcf: str):
    # Compiling the XML costs as much as seconds of simulation; runs of one body share it
    # (the model is never modified, every run gets its own MjData).
    return _mujoco().MjModel.from_xml_string(mjcf)


class DancerSim:
    """One MuJoCo model + data with the index bookkeeping the controllers need."""

    def __init__(self, body: DancerBody):
        mj = _mujoco()
        self.mj = mj
        self.body = body
        self.model = _compiled(body.mjcf)
        self.data = mj.MjData(self.model)
        m = self.model
        self.joint_names = body.joints
        self.index = {name: i for i, name in enumerate(body.joints)}
        self.jid = np.array([m.joint(name).id for name in body.joints])
        self.qadr = m.jnt_qposadr[self.jid]
        self.dadr = m.jnt_dofadr[self.jid]
        self.root = m.body("hips").id
        self.chest = m.body("chest").id
        self.floor = m.geom("floor").id
        self.body_ids = {spec.name: m.body(spec.name).id for spec in body.bodies}
        contact_body = np.full(m.ngeom, -1)
        for k, name in enumerate(CONTACT_BODIES):
            contact_body[m.geom_bodyid == self.body_ids[name]] = k
        self.contact_body = contact_body
        # Which foot part (CONTACT_BODIES index; one past them for none) each pair of touching geoms
        # belongs to: the geom that is not the floor's. One lookup a tick instead of a compare, a
        # select and a gather.
        pair = np.arange(m.ngeom)
        owner = contact_body[np.where(pair[:, None] == self.floor, pair[None, :], pair[:, None])]
        self.contact_owner = np.where(owner >= 0, owner, len(CONTACT_BODIES))
        self.contact_owner_rows = self.contact_owner.tolist()
        self.pyramid_cones = m.opt.cone == 0
        self.steps_per_tick = max(1, int(round(CONTROL_DT / m.opt.timestep)))
        self.targets = np.zeros(len(body.joints))
        self.rest_com_height = 0.0
        self._fine = None  # the model with a shorter step, for :meth:`apply`'s fine ticks
        # Things the controllers derive from the (never modified) model, kept for the next tick.
        self.memo: dict = {}

    # -- posing --------------------------------------------------------------------------------

    def set_angles(self, angles: dict[str, float]) -> None:
        q = self.data.qpos
        q[self.qadr] = 0.0
        for name, value in angles.items():
            q[self.qadr[self.index[name]]] = value

    def flatten_feet(self, feet: tuple[str, ...] = ("L", "R")) -> None:
        """Turn the ankles until each foot's sole is level (so the pose stands flat)."""
        mj, m, d = self.mj, self.model, self.data
        for _ in range(6):
            mj.mj_kinematics(m, d)
            for side in feet:
                up = d.xmat[self.body_ids[f"foot.{side}"]].reshape(3, 3)[:, 2]
                # np.cross's products and differences in floats (its per-call overhead dwarfs them).
                (ux, uy, uz), (vx, vy, vz) = up.tolist(), (0.0, 0.0, 1.0)
                tilt = np.array([uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx])
                for axis in ("y", "x"):
                    j = self.index[f"foot.{side}_{axis}"]
                    d.qpos[self.qadr[j]] += float(tilt @ d.xaxis[self.jid[j]])

    def place(self, lean: tuple[float, float] = (0.0, 0.0), feet: tuple[str, ...] = ("L", "R")) -> None:
        """Tilt the whole body by ``lean`` (about x, y), flatten the feet, stand them on the floor."""
        mj, m, d = self.mj, self.model, self.data
        angle = float(np.hypot(*lean))
        d.qpos[3:7] = quaternions.from_axis_angle((lean[0], lean[1], 0.0), angle)
        d.qpos[0:3] = [0.0, 0.0, 1.0]
        self.flatten_feet(feet)
        mj.mj_kinematics(m, d)
        foot_geoms = self.contact_body >= 0
        lowest = d.geom_xpos[foot_geoms, 2].min()
        ankles = np.array([d.xpos[self.body_ids[f"foot.{side}"]] for side in feet])
        d.qpos[0:2] -= ankles[:, :2].mean(axis=0)
        d.qpos[2] += self.body.contact_radius - lowest - 0.0005
        d.qvel[:] = 0.0
        mj.mj_forward(m, d)
        self.targets = d.qpos[self.qadr].copy()
        self.rest_com_height = float(d.subtree_com[self.root, 2])

    # -- sensing -------------------------------------------------------------------------------

    def measure(self) -> Measurement:
        mj, m, d = self.mj, self.model, self.data
        mj.mj_subtreeVel(m, d)
        com = d.subtree_com[self.root].copy()
        vel = d.subtree_linvel[self.root].copy()
        n = d.ncon
        if n == 0:
            return Measurement(com, vel, np.array([com[0], com[1], 0.0]), np.zeros((0, 2)),
                               np.zeros(len(CONTACT_BODIES), dtype=bool), 0.0)
        contact = d.contact  # each attribute access builds a wrapper: take it once
        # A dozen contacts a tick: plain Python floats, in the same operations and order as the array
        # form this replaced (numpy's overhead on each of its dozen small operations was most of the
        # cost), so the same bits.
        forces = self.normal_forces(n)
        owners = self.contact_owner_rows
        touching = [False] * (len(CONTACT_BODIES) + 1)  # the last: contacts of no foot
        pushed, points = [], []
        for (g0, g1), force, point in zip(contact.geom[:n].tolist(), forces, contact.pos[:n].tolist(),
                                          strict=True):
            if force > 1e-6:
                touching[owners[g0][g1]] = True
                pushed.append(force)
                points.append(point)
        in_contact = np.array(touching[:-1])
        total = _sum_as_numpy(pushed)
        if total <= 1e-6:
            return Measurement(com, vel, np.array([com[0], com[1], 0.0]), np.zeros((0, 2)), in_contact, 0.0)
        # numpy's sum over the contacts (axis 0) adds the rows in order.
        (px, py, _), force = points[0], pushed[0]
        cop_x, cop_y = force * px, force * py
        for force, (px, py, _) in zip(pushed[1:], points[1:], strict=True):
            cop_x += force * px
            cop_y += force * py
        cop = np.array([cop_x / total, cop_y / total, 0.0])
        vertices = hull_vertices([(px, py) for px, py, _ in points])
        if vertices is None:
            hull = np.unique(np.array(points)[:, :2], axis=0)
            vertices = list(map(tuple, hull.tolist()))
        else:
            hull = np.array(vertices, dtype=np.float64)
        return Measurement(com, vel, cop, hull, in_contact, total, vertices)

    def normal_forces(self, n: int) -> list[float]:
        """Normal force of each of the first ``n`` contacts, straight from the solver's forces.

        With pyramidal friction cones (condim 3) a contact has four pyramid-edge forces whose
        sum is the normal force (what ``mj_contactForce`` decodes, without its per-contact call).
        """
        d = self.data
        # The model has only condim-3 contacts and no other constraints, so the solver lists
        # each contact's four edge forces one after another: check the layout, then reshape.
        if d.nefc == 4 * n and self.pyramid_cones:
            # In plain floats, added in order as numpy's sum over a row of four does: the same bits.
            return [((e0 + e1) + e2) + e3 for e0, e1, e2, e3 in d.efc_force[: 4 * n].reshape(n, 4).tolist()]
        forces = []
        wrench = np.zeros(6)
        for i in range(n):
            self.mj.mj_contactForce(self.model, d, i, wrench)
            forces.append(float(wrench[0]))
        return forces

    def fallen(self, meas: Measurement, com_height: float | None = None) -> bool:
        """NaN in the state, the COM sunk below 80% of ``com_height`` (the standing height unless
        a pose such as a grand plie is meant to lower it), or the chest tipped beyond 45 degrees."""
        d = self.data
        # One NaN or inf anywhere makes the sums non-finite: two sums check everything (Python's sum of
        # the float lists, cheaper than numpy's reductions on some thirty numbers).
        if not math.isfinite(sum(d.qpos.tolist()) + sum(d.qvel.tolist())):
            return True
        if meas.com[2] < 0.8 * (self.rest_com_height if com_height is None else com_height):
            return True
        return bool(d.xmat[self.chest, 8] < 0.7)

    # -- acting --------------------------------------------------------------------------------

    def apply(self, targets: NDArray[np.float64], fine: bool = False) -> None:
        """Drive the muscles to ``targets`` for one control tick; ``fine`` in :data:`FINE_STEPS` times
        as many, shorter steps."""
        self.data.ctrl[:] = targets
        if fine:
            if self._fine is None:
                # Its own copy of the (shared, never modified) model with the shorter step.
                self._fine = copy.copy(self.model)
                self._fine.opt.timestep = self.model.opt.timestep / FINE_STEPS
            self.mj.mj_step(self._fine, self.data, nstep=FINE_STEPS * self.steps_per_tick)
        else:
            self.mj.mj_step(self.model, self.data, nstep=self.steps_per_tick)

    def lean_weights(self, weights: dict[str, float]) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
        """Joint indices and weights for :meth:`lean_offsets`, resolved once per phase."""
        index = np.array([self.index[name] for name in weights], dtype=np.intp)
        return index, np.array(list(weights.values()), dtype=np.float64)

    def lean_offsets(self, lean: NDArray[np.float64], weights) -> NDArray[np.float64]:
        """Target changes that rotate the body above the stance by ``lean``; weights sign the joints.

        ``weights`` is a {joint: weight} dict or the pair from :meth:`lean_weights`. A positive
        weight belongs to a joint whose child is on the upper body side (hips), a negative one to a
        joint whose child is on the floor side (ankles, toes).
        """
        index, w = self.lean_weights(weights) if isinstance(weights, dict) else weights
        offsets = np.zeros(len(self.joint_names))
        # Plain floats for the handful of joints, the same products and sums as the array form.
        x, y = float(lean[0]), float(lean[1])
        # take(): the same rows as fancy indexing, without its general machinery (a fifth of the cost).
        rows = self.data.xaxis.take(self.jid.take(index), axis=0).tolist()
        offsets[index] = [weight * (x * axis[0] + y * axis[1])
                          for weight, axis in zip(w.tolist(), rows, strict=True)]
        return offsets

    def lean_terms(self, weights: dict[str, float]) -> list[tuple[int, int, float]]:
        """(joint index, joint id, weight) per joint of ``weights``, for :meth:`add_leans`."""
        return [(self.index[name], int(self.jid[self.index[name]]), float(w)) for name, w in weights.items()]

    def add_leans(self, offsets: NDArray[np.float64],
                  leans: list[tuple[float, float, list[tuple[int, int, float]]]]) -> None:
        """``offsets += lean_offsets((x, y), terms)`` for each ``(x, y, terms)`` in turn (the same
        products and sums, joint by joint): two or three leans of a joint or two, every control
        tick, where numpy's per-call overhead is most of the cost."""
        rows = self.data.xaxis.take([jid for _, _, terms in leans for _, jid, _ in terms], axis=0).tolist()
        k = 0
        for x, y, terms in leans:
            for index, _, w in terms:
                axis = rows[k]
                offsets[index] += w * (x * axis[0] + y * axis[1])
                k += 1

    def body_quaternions(self) -> NDArray[np.float64]:
        return self.data.xquat.copy()


def bone_rotations(sim: DancerSim, quats: NDArray[np.float64]):
    """Per body: (T, 4) rotations relative to the parent body (world for the root), and rest origins."""
    rotations: dict[str, NDArray[np.float64]] = {}
    rest: dict[str, NDArray[np.float64]] = {}
    for spec in sim.body.bodies:
        bid = sim.body_ids[spec.name]
        q = quats[:, bid]
        if spec.parent is not None:
            q = quaternions.multiply(quaternions.conjugate(quats[:, sim.body_ids[spec.parent]]), q)
        # One hemisphere throughout, so interpolated keys never take the long way round.
        q = quaternions.continuous(q, axis=0)
        rotations[spec.name] = q
        rest[spec.name] = np.array(spec.origin)
    return rotations, rest
