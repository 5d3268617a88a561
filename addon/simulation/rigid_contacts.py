"""Rigid-body contacts between shape-matched bodies and with the ground, as a part of :class:`.world.World`.

Two solvers (``World.enable_rigid_contacts``): the default fits each body's motion to all its contacts
at once (``_fit_rigid_contacts``, a least-squares rigid motion per body); ``sequential`` gathers the
contacts (``_gather_rigid_contacts``) and solves them one after another (``_sweep_rigid_contacts``, Müller
et al. 2020) with static friction per contact patch, then removes the contacts' normal speed and applies
dynamic friction and rolling resistance after each substep (``_rigid_velocity_pass``).

:class:`RigidContacts` is a mixin of :class:`.world.World`: its methods work on the world's particles,
clusters (shape matching), ground and pair search.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..geometry.rotation import quaternion_to_matrix
from ..geometry.small_systems import solve_spd_batch
from .errors import SimulationError

_TINY = 1e-12
# A surface sample whose mean normal is this long lies inside one face (a cube's edge: 0.71).
_FACE = 0.95
# A contact whose normal is within 45 degrees of the vertical supports the body above it.
_SUPPORT = 0.7
# Contacts are gathered this many particle radii before they touch (see RigidContacts._solve_rigid_contacts).
_CONTACT_MARGIN = 0.5
# Per projection: Gauss-Seidel sweeps over the contacts' normal corrections (with 2 a box sliding on the
# ground carried only 89% of its weight, so its friction fell short), then static friction per contact
# patch; then once more (one sweep, and friction up to what is left of mu_s times the load) after the
# friction's own push has tilted the bodies. Measured on a 0.3 m box with mu_s 0.6 (arctan: 31 deg):
# it holds at 25 deg, creeps 3-9 mm/s at 29-34 deg, slides at 37 and up.
_NORMAL_SWEEPS = (3, 1)
# Sweeps of the velocity pass over the contacts' normal speeds: at least twice, so a body pushed into the
# ground by an impact above it is stopped there again. With a solid's inertia (a cube's: 3/5 of its
# surface samples') two left a box sliding on its face sinking at 0.4 mm/s and rocking, and lifting it
# back out counted as load: it slid 5.1% short of Coulomb's distance in 1 s at mu 0.3 on 25 degrees;
# 4-6 sweeps: 2.4-2.7% short, as with the samples' inertia (the rest is damping); 3: a box held by
# static friction crept 9 mm in 1 s.
_VELOCITY_SWEEPS = 4
# A contact patch is a face's (friction at the bodies' centres' level, _contact_patches) where its contacts
# spread (rms) more than this many particle radii both ways across its normal.
_FACE_EXTENT = 0.5
# Contact patches with more contacts than this are reduced to the ones that span them (_patch_corners).
_PATCH_CONTACTS = 16
# Bodies meeting faster than this (m/s) collide: both take their share, the lower one is pushed too.
_IMPACT_SPEED = 1.0


def _friction_shrink(
    slip: NDArray[np.float64], depth: NDArray[np.float64], dynamic: float, static: float
) -> NDArray[np.float64]:
    """The fraction of each contact's tangential slip ``slip`` (lengths) that friction cancels this
    substep: all of it while it is under ``static * depth`` (the contact sticks), otherwise
    ``dynamic * depth`` of it (it slides, Macklin et al. 2014, section 6.1)."""
    sliding = np.minimum(1.0, dynamic * depth / np.maximum(slip, _TINY))
    return np.where(slip <= static * depth, 1.0, sliding)


def _body_batches(
    first: NDArray[np.int64], second: NDArray[np.int64], nobody: int
) -> list[NDArray[np.int64]]:
    """Split contacts (in priority order) between bodies ``first`` and ``second`` into batches in which
    no body appears twice (``nobody``: an immovable side, which may). Each round takes every contact
    that comes first among the remaining ones of both its bodies, so each body's contacts are solved
    in their order."""
    remaining = np.arange(len(first))
    batches = []
    slots = np.empty(nobody + 1, np.int64)
    while len(remaining):
        a, b = first[remaining], second[remaining]
        slots.fill(len(first))
        rank = np.arange(len(remaining))
        np.minimum.at(slots, b, rank)
        np.minimum.at(slots, a, rank)
        slots[nobody] = -1
        chosen = ((slots[a] == rank) | (a == nobody)) & ((slots[b] == rank) | (b == nobody))
        batches.append(remaining[chosen])
        remaining = remaining[~chosen]
    return batches


def _patch_corners(patch: NDArray, points: NDArray, normal: NDArray, depth: NDArray) -> NDArray[np.int64]:
    """Indices of the contacts that span each contact patch (contacts with the same ``patch`` label):
    its deepest one and the outermost ones in eight directions across the patch's mean normal (a
    square patch: its corners and edge ends), at most nine per patch. A rigid body held at those is
    held at every point between them."""
    labels, group = np.unique(patch, return_inverse=True)
    mean = np.stack([np.bincount(group, normal[:, k], minlength=len(labels)) for k in range(3)], axis=1)
    mean /= np.maximum(np.linalg.norm(mean, axis=1), _TINY)[:, None]
    # Two directions across each patch's normal.
    helper = np.where(np.abs(mean[:, :1]) < 0.9, [[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]])
    across = np.cross(mean, helper)
    across /= np.maximum(np.linalg.norm(across, axis=1), _TINY)[:, None]
    other = np.cross(mean, across)
    u = np.einsum("ij,ij->i", points, across[group])
    v = np.einsum("ij,ij->i", points, other[group])
    # Patches of a cube's face or less are kept whole.
    chosen = [np.flatnonzero(np.bincount(group)[group] <= _PATCH_CONTACTS)]
    for score in (depth, u, -u, v, -v, u + v, -u - v, u - v, v - u):
        order = np.lexsort((score, group))
        last = np.ones(len(order), bool)
        last[:-1] = group[order][1:] != group[order][:-1]
        chosen.append(order[last])
    return np.unique(np.concatenate(chosen))


def _cross_rows(
    a: NDArray[np.float64],
    b: NDArray[np.float64],
    out: NDArray[np.float64] | None = None,
    scratch: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """Row-wise ``a x b`` for ``(m, 3)`` arrays (np.cross spends more on axis bookkeeping than on
    the arithmetic at the sizes a solver step sees); ``out`` ``(m, 3)`` and ``scratch`` ``(m,)``
    reuse buffers."""
    out = np.empty_like(a) if out is None else out
    scratch = np.empty(len(a)) if scratch is None else scratch
    ax, ay, az = a[:, 0], a[:, 1], a[:, 2]
    bx, by, bz = b[:, 0], b[:, 1], b[:, 2]
    for column, (first, second, third, fourth) in enumerate(
        ((ay, bz, az, by), (az, bx, ax, bz), (ax, by, ay, bx))
    ):
        np.multiply(first, second, out=out[:, column])
        np.multiply(third, fourth, out=scratch)
        out[:, column] -= scratch
    return out


class RigidContacts:
    """Rigid-body contacts (mixin of :class:`.world.World`; see the module's docstring)."""

    # The current substep's length (s), for telling impacts from resting contacts; 0 outside a step.
    _substep_length = 0.0
    # Rigid bodies' rolling resistance coefficient (set_rolling_resistance).
    _rolling_resistance = 0.0
    # (inverse masses, world inverse inertias) of the bodies a contact solve works on, compact-indexed.
    _body_frame: tuple = ()

    def enable_rigid_contacts(
        self,
        normals: ArrayLike | None = None,
        sequential: bool | None = None,
        solid_inertia: ArrayLike | None = None,
    ) -> None:
        """Resolve contacts of shape-matched bodies (disjoint clusters of stiffness 1) as rigid-body
        contacts: a contact's correction is sized by the body's mass and inertia at the contact point
        (Müller et al. 2020, "Detailed rigid body simulation with extended position based dynamics")
        and averaged over the body's contacts, so the shape match that follows moves the contact point
        out by exactly its depth. Without this, a body's particle-level corrections are diluted by the
        shape match over all its particles: stacks sink into each other, settle slowly, and the overlap
        left behind turns into a violent push a few substeps later.

        ``normals`` ``(N, 3)``: the outward surface normal at each particle in the rest pose (particles
        sampled on the bodies' surfaces). Two touching bodies then push along their surfaces' normals,
        not along the line between two particles, so flat faces slide over each other instead of
        interlocking like egg crates.

        ``sequential`` (default off; None keeps the current choice): solve the contacts one after
        another (Müller et al. 2020; ``_sweep_rigid_contacts``), with static friction per contact patch,
        dynamic friction (sliding and twisting) and no bounce in a velocity pass, rolling resistance
        (``set_rolling_resistance``) and exact rigid rotations in the shape match: bodies roll, topple
        and keep their spin, which the body-by-body fit (``_fit_rigid_contacts``) does not let them (a
        drum stops within a frame; with Müller's warm-started rotation a spinning body loses its spin
        within a second). Not the default: without rolling resistance 50 poured cubes heap flatter with
        it (7.8 deg at friction 0.5, seed 1, against 31.4 with the fit; the heap test wants 26.6 +- 5);
        with rolling resistance 0.3 (what Add Rigid Pile's pour sets at friction 0.5), 22.4 (seeds 2, 3:
        22.5, 23.6; the heap test wants their median).

        ``solid_inertia`` ``(bodies, 3, 3)``: per unit mass, each body's inertia about the centroid of
        its particles in the rest pose as the solid its surface encloses (``scenes.solid_inertia``);
        a row of NaN (an open surface; None: every body) keeps the inertia of its particles. Sequential
        contacts turn bodies by it: the particles lie on the surface, and as a shell a cube's inertia
        is 5/3 of the solid's. The fit keeps the particles' inertia."""
        clusters = self._clusters
        if clusters is None or np.any(clusters["share"] > 1) or np.any(clusters["stiffness"] < 1.0):
            raise SimulationError("rigid contacts need rigid shape-matched bodies (disjoint, stiffness 1)")
        members, starts, mass = clusters["members"], clusters["starts"], clusters["mass"]
        rest = clusters["rest"]
        second = np.add.reduceat(mass[:, None, None] * rest[:, :, None] * rest[:, None, :], starts)
        inertia = np.einsum("kii->k", second)[:, None, None] * np.eye(3) - second
        body = np.full(len(self._x), -1, np.int64)
        body[members] = clusters["cluster"]
        keep_sequential = self._rigid is not None and self._rigid["sequential"]
        solid = inertia.copy()
        if solid_inertia is not None:
            per_mass = np.array(solid_inertia, dtype=np.float64)
            if per_mass.shape != inertia.shape:
                raise SimulationError(f"solid inertia must be one 3 x 3 tensor per body ({len(inertia)})")
            enclosed = np.all(np.isfinite(per_mass), axis=(1, 2))
            solid[enclosed] = per_mass[enclosed] * clusters["total"][enclosed, None, None]
        elif self._rigid is not None:  # the bodies there were (shape matches added since: their particles')
            kept = self._rigid["solid_inertia"][: len(solid)]
            solid[: len(kept)] = kept
        if normals is None:
            normals = self._rigid["normals"] if self._rigid is not None else np.zeros_like(self._x)
        normals = np.array(normals, dtype=np.float64)
        if normals.shape != self._x.shape or not np.all(np.isfinite(normals)):
            raise SimulationError(f"rigid contacts need {len(self._x)} finite surface normals")
        self._rigid = {
            "normals": normals,
            "body": body,
            "mass3": np.repeat(mass, 3).reshape(-1, 3),
            "inverse_total": 1.0 / clusters["total"],
            "inertia": inertia,
            "inverse_inertia": np.linalg.pinv(inertia),  # pinv: a flat or 2-particle body has an I of rank 2
            "solid_inertia": solid,
            "solid_inverse_inertia": np.linalg.pinv(solid),
            "sequential": bool(sequential) if sequential is not None else keep_sequential,
        }

    def _effective_inverse_masses(self, p, particles, directions, centroids, inverse_inertia) -> NDArray:
        """How far each particle's contact point moves along its direction per unit correction: its
        own inverse mass, or for a particle of an awake rigid body ``1/M + (r x e) . I^-1 (r x e)``."""
        w = self._w[particles]
        body = self._rigid["body"][particles]
        rigid = np.flatnonzero((body >= 0) & (w > 0))
        result = w.copy()
        if len(rigid):
            owner = body[rigid]
            arm = _cross_rows(p[particles[rigid]] - centroids[owner], directions[rigid])
            turn = np.einsum("kij,kj->ki", inverse_inertia[owner], arm)
            result[rigid] = self._rigid["inverse_total"][owner] + np.einsum("ij,ij->i", arm, turn)
        return result

    def _contact_normals(
        self, i, j, delta, length, reach, turn, delta_before=None
    ) -> tuple[NDArray, NDArray]:
        """Normals (pushing ``i`` away from ``j``) and depths of touching particle pairs: along the
        bodies' surface normals where the two surfaces face each other, else between the centres.
        ``turn`` ``(bodies, 3, 3)``: the bodies' rotations. ``delta_before``: the pairs' ``delta`` at
        the substep's start; a pair on the outer side of a face then is pushed back out along it even
        if it has passed the other's centre since (a fast thin body would be pushed on through)."""
        rigid = self._rigid
        body_i, body_j = rigid["body"][i], rigid["body"][j]
        surface_i = np.einsum("kij,kj->ki", turn[np.maximum(body_i, 0)], rigid["normals"][i])
        surface_j = np.einsum("kij,kj->ki", turn[np.maximum(body_j, 0)], rigid["normals"][j])
        surface_i *= (body_i >= 0)[:, None]
        surface_j *= (body_j >= 0)[:, None]
        flat_i = np.sqrt(np.einsum("ij,ij->i", surface_i, surface_i))
        flat_j = np.sqrt(np.einsum("ij,ij->i", surface_j, surface_j))
        # Where one side is a face (not an edge or a corner), its normal decides: a corner or an edge
        # on a face is pushed along the face's normal, face on face along their mean. Edges and
        # corners meeting each other have no surface normal to trust: they touch as spheres.
        unit_i = surface_i / np.maximum(flat_i, _TINY)[:, None]
        unit_j = surface_j / np.maximum(flat_j, _TINY)[:, None]
        face_i, face_j = flat_i > _FACE, flat_j > _FACE
        facing = unit_j * face_j[:, None] - unit_i * face_i[:, None]
        size = np.sqrt(np.einsum("ij,ij->i", facing, facing))
        facing /= np.maximum(size, _TINY)[:, None]
        apart = np.einsum("ij,ij->i", delta, facing)
        outside = apart > 0
        if delta_before is not None:
            outside |= np.einsum("ij,ij->i", delta_before, facing) > 0
        # A usable normal, with i on the outer side of it.
        use = (face_i | face_j) & (size > 0.5) & outside
        normal = np.where(use[:, None], facing, delta / np.maximum(length, _TINY)[:, None])
        depth = reach - np.where(use, apart, length)
        return normal, depth

    def _solve_rigid_contacts(self, p, pairs, start, free) -> None:
        """The ground and the particle pairs as rigid-body contacts (``enable_rigid_contacts``): solved
        one after another with ``sequential`` (see ``_sweep_rigid_contacts``), else fitted body by body
        (``_fit_rigid_contacts``)."""
        if not self._rigid["sequential"]:
            self._fit_rigid_contacts(p, pairs, start, free)
            return
        turn = quaternion_to_matrix(self._clusters["quaternions"])
        contacts = self._gather_rigid_contacts(p, pairs, start, free, turn)
        if contacts is not None:
            self._sweep_rigid_contacts(p, start, contacts, turn)

    def _fit_rigid_contacts(self, p, pairs, start, free) -> None:
        """The ground first, then the pairs (seeing the ground's corrections): a body resting on one
        that rests on the ground is held in the same substep, not one substep later."""
        turn = quaternion_to_matrix(self._clusters["quaternions"])
        # einsum, not matmul: stacked 3 x 3 matmuls go through OpenBLAS, whose threads cost more.
        inverse_inertia = np.einsum("kij,kjl,kml->kim", turn, self._rigid["inverse_inertia"], turn)
        frames = (turn, inverse_inertia)  # the rotations change only in shape matching: shared by both
        self._project_rigid_contacts(p, None, start, free, frames)
        self._project_rigid_contacts(p, pairs, start, None, frames)

    def _project_rigid_contacts(self, p, pairs, start, free, frames) -> None:
        """Particle pairs and the ground as rigid-body contacts (``enable_rigid_contacts``), Jacobi over
        each body's contacts, with static and dynamic friction on the slip during this substep.

        An overlap that was already there when the substep began (left by a crowded stack or an
        impact the solver could not undo at once) is pushed out without becoming velocity: the body's
        share of it moves its start position too, so no contact launches a body (no restitution)."""
        firsts, seconds, corrections, existing, normals, impacts = [], [], [], [], [], []
        if pairs is not None and len(pairs):
            i, j = pairs[:, 0], pairs[:, 1]
            delta = p[i] - p[j]
            length = np.sqrt(np.einsum("ij,ij->i", delta, delta))
            reach = 2.0 * self.particle_radius
            hit = length < self._pair_reach()
            if np.any(hit):
                i, j, delta, length = i[hit], j[hit], delta[hit], length[hit]
                normal, depth = self._contact_normals(i, j, delta, length, reach, frames[0])
                touching = depth > 0
                i, j, normal, depth = i[touching], j[touching], normal[touching], depth[touching]
                slip = (p[i] - start[i]) - (p[j] - start[j])
                closing = -np.einsum("ij,ij->i", slip, normal)
                slip -= normal * (-closing)[:, None]
                amount = np.sqrt(np.einsum("ij,ij->i", slip, slip))
                static = self.particle_static_friction
                shrink = _friction_shrink(amount, depth, self.particle_friction, static)
                impacts.append(closing > _IMPACT_SPEED * self._substep_length)
                firsts.append(i)
                seconds.append(j)
                corrections.append(normal * depth[:, None] - slip * shrink[:, None])
                before = reach - np.einsum("ij,ij->i", start[i] - start[j], normal)
                existing.append(normal * np.clip(before, 0.0, depth)[:, None])
                normals.append(normal)
        if self._ground is not None and free is not None:
            height, friction, static = self._ground
            floor = height + self.particle_radius
            below = np.flatnonzero((p[:, 2] < floor) & free)
            if len(below):
                depth = floor - p[below, 2]
                correction = np.zeros((len(below), 3))
                correction[:, 2] = depth
                slip = p[below, :2] - start[below, :2]
                amount = np.sqrt(np.einsum("ij,ij->i", slip, slip))
                correction[:, :2] = -slip * _friction_shrink(amount, depth, friction, static)[:, None]
                firsts.append(below)
                seconds.append(np.full(len(below), -1, np.int64))
                corrections.append(correction)
                overlap = np.zeros((len(below), 3))
                overlap[:, 2] = np.clip(floor - start[below, 2], 0.0, depth)
                existing.append(overlap)
                normals.append(np.tile([0.0, 0.0, 1.0], (len(below), 1)))
                impacts.append(np.zeros(len(below), bool))
        if not firsts:
            return
        a, b, correction = np.concatenate(firsts), np.concatenate(seconds), np.concatenate(corrections)
        existing = np.concatenate(existing)
        magnitude = np.sqrt(np.einsum("ij,ij->i", correction, correction))
        direction = correction / np.maximum(magnitude, _TINY)[:, None]
        clusters, rigid = self._clusters, self._rigid
        members, starts = clusters["members"], clusters["starts"]
        centroids = np.add.reduceat(p[members] * rigid["mass3"], starts) / clusters["total"][:, None]
        turn, inverse_inertia = frames
        # Each side's share of a contact's correction, by how easily it moves there (a sleeping or
        # pinned side: none).
        weight_a = self._effective_inverse_masses(p, a, direction, centroids, inverse_inertia)
        paired = np.flatnonzero(b >= 0)
        weight_b = np.zeros(len(a))
        weight_b[paired] = self._effective_inverse_masses(
            p, b[paired], direction[paired], centroids, inverse_inertia
        )
        # Shock propagation: where one body rests on another (a contact normal near the vertical, not
        # an impact), the lower one takes none of the correction, as if it were immovable. A stack
        # then holds in one pass from the ground up instead of sinking into itself and springing back
        # every substep (the lower body still carries the upper one's friction and sideways pushes).
        gravity = self.gravity / max(float(np.linalg.norm(self.gravity)), _TINY)
        lift = np.where(np.concatenate(impacts), 0.0, np.concatenate(normals) @ -gravity)
        weight_a[lift < -_SUPPORT] = 0.0
        weight_b[lift > _SUPPORT] = 0.0
        total = weight_a + weight_b
        share = np.where(total > 0, 1.0 / np.where(total > 0, total, 1.0), 0.0)
        particles = np.concatenate((a, b[paired]))
        sides = np.concatenate((weight_a * share, -(weight_b * share)[paired]))
        rows = np.concatenate((np.arange(len(a)), paired))
        targets = correction[rows] * sides[:, None]
        overlaps = existing[rows] * sides[:, None]
        moving = sides != 0
        particles, targets, overlaps = particles[moving], targets[moving], overlaps[moving]
        if len(particles) == 0:
            return
        # Every body moves rigidly to best meet all its contact points' targets at once (least squares
        # over its contacts; with one contact, the mass-weighted smallest motion that meets it: the
        # rigid-body response). Contacts sharing a face then push it out by their full depth, where
        # averaging single-contact responses would leave most of it in (their turns cancel out).
        # Only the bodies touched here are solved for and moved (a compact index over them).
        touched = np.flatnonzero(np.bincount(rigid["body"][particles], minlength=len(clusters["total"])))
        compact = np.zeros(len(clusters["total"]), np.int64)
        compact[touched] = np.arange(len(touched))
        body = compact[rigid["body"][particles]]
        centroids = centroids[touched]
        arm = p[particles] - centroids[body]
        count = len(touched)
        skew = np.zeros((len(arm), 3, 3))
        skew[:, 0, 1], skew[:, 0, 2], skew[:, 1, 2] = -arm[:, 2], arm[:, 1], -arm[:, 0]
        skew[:, 1, 0], skew[:, 2, 0], skew[:, 2, 1] = arm[:, 2], -arm[:, 1], arm[:, 0]
        # Rows of one contact point: displacement = t + theta x r = [I, -[r]x] (t, theta).
        rows_of = np.concatenate((np.broadcast_to(np.eye(3), skew.shape), -skew), axis=2)  # (K, 3, 6)
        normal = np.einsum("kia,kib->kab", rows_of, rows_of).reshape(-1, 36)
        # Per-body sums as one bincount over (body, entry) slots, not one per entry.
        matrix = np.bincount(
            (body[:, None] * 36 + np.arange(36)).reshape(-1), weights=normal.reshape(-1), minlength=count * 36
        ).reshape(count, 6, 6)
        regular = np.zeros((count, 6, 6))
        regular[:, :3, :3] = np.eye(3) * clusters["total"][touched, None, None]
        turned = turn[touched]
        regular[:, 3:, 3:] = np.einsum("kij,kjl,kml->kim", turned, rigid["inertia"][touched], turned)
        # A tiny mass-weighted regulariser picks the least-effort motion where contacts leave freedom.
        matrix += 1e-6 * regular + 1e-12 * np.eye(6)
        # Right-hand sides: the contact targets and, second column, the overlaps already there.
        right = np.einsum("kia,kic->kac", rows_of, np.stack((targets, overlaps), axis=2))  # (K, 6, 2)
        stacked = np.bincount(
            (body[:, None] * 12 + np.arange(12)).reshape(-1), weights=right.reshape(-1), minlength=count * 12
        ).reshape(count, 6, 2)
        motion = solve_spd_batch(matrix, stacked)
        moved = members[np.isin(clusters["cluster"], touched)]
        owner = compact[rigid["body"][moved]]
        relative = p[moved] - centroids[owner]
        for column, target in ((0, p), (1, start)):
            translation, rotation = motion[:, :3, column], motion[:, 3:, column]
            target[moved] += translation[owner] + _cross_rows(rotation[owner], relative)

    def _gather_rigid_contacts(self, p, pairs, start, free, turn) -> dict | None:
        """The touching contacts at ``p``: particle ``first`` pushed along ``normal`` away from particle
        ``second`` (-1: the ground) by ``depth``; ``slip`` the contact points' relative motion this
        substep, ``before`` the overlap at the substep's start, per contact friction coefficients."""
        parts: list[tuple] = []
        # Contacts this close are solved too: the corrections before them may push them in.
        margin = _CONTACT_MARGIN * self.particle_radius
        if pairs is not None and len(pairs):
            i, j = pairs[:, 0], pairs[:, 1]
            delta = p[i] - p[j]
            length = np.sqrt(np.einsum("ij,ij->i", delta, delta))
            hit = length < self._pair_reach()
            if np.any(hit):
                i, j, delta, length = i[hit], j[hit], delta[hit], length[hit]
                reach = 2.0 * self.particle_radius
                normal, depth = self._contact_normals(i, j, delta, length, reach, turn, start[i] - start[j])
                touching = np.flatnonzero(depth > -margin)
                # A face sample over another face's lattice touches up to four of its samples with the
                # same depth along the same normal: one contact per sample and other body is enough
                # (the deepest), and fewer contacts per body mean fewer batches.
                other = self._rigid["body"][j[touching]]
                order = touching[np.lexsort((-depth[touching], other, i[touching]))]
                key = i[order] * (len(self._clusters["total"]) + 1) + self._rigid["body"][j[order]]
                first = np.ones(len(order), bool)
                first[1:] = key[1:] != key[:-1]
                touching = order[first]
                i, j, normal, depth = i[touching], j[touching], normal[touching], depth[touching]
                slip = (p[i] - start[i]) - (p[j] - start[j])
                closing = -np.einsum("ij,ij->i", slip, normal)
                before = reach - np.einsum("ij,ij->i", start[i] - start[j], normal)
                impact = closing > _IMPACT_SPEED * self._substep_length
                count = len(i)
                static = np.full(count, self.particle_static_friction)
                dynamic = np.full(count, self.particle_friction)
                parts.append((i, j, normal, depth, slip, before, impact, static, dynamic))
        if self._ground is not None and free is not None:
            height, dynamic, static = self._ground
            floor = height + self.particle_radius
            below = np.flatnonzero((p[:, 2] < floor + margin) & free)
            if len(below):
                count = len(below)
                normal = np.zeros((count, 3))
                normal[:, 2] = 1.0
                parts.append(
                    (
                        below,
                        np.full(count, -1, np.int64),
                        normal,
                        floor - p[below, 2],
                        p[below] - start[below],
                        floor - start[below, 2],
                        np.zeros(count, bool),
                        np.full(count, static),
                        np.full(count, dynamic),
                    )
                )
        if not parts:
            return None
        names = ("first", "second", "normal", "depth", "slip", "before", "impact", "static", "dynamic")
        # Ground contacts first (pairs on a body resting on the ground then see it held), deepest first.
        parts.reverse()
        return {name: np.concatenate([part[k] for part in parts]) for k, name in enumerate(names)}

    def _sweep_rigid_contacts(self, p, start, contacts, turn) -> None:
        """Solve ``contacts`` (``_gather_rigid_contacts``) one after another in batches of distinct bodies,
        then move every touched body rigidly by what it received (and its start by the part that pushed
        out an overlap already there)."""
        clusters, rigid = self._clusters, self._rigid
        first, second, normal = contacts["first"], contacts["second"], contacts["normal"]
        body = rigid["body"]
        w = self._w
        paired = second >= 0
        other = np.where(paired, second, 0)
        body_a = np.where((w[first] > 0) & (body[first] >= 0), body[first], -1)
        body_b = np.where(paired & (w[other] > 0) & (body[other] >= 0), body[other], -1)
        # The bodies as they are, before shock propagation makes the lower one immovable: friction
        # reads their real motion (see _contact_patches).
        real_a, real_b = body_a.copy(), body_b.copy()
        # Shock propagation: where one body rests on another (a contact normal near the vertical, not
        # an impact), the lower one takes none of the correction, as if it were immovable. A stack
        # then holds in one pass from the ground up instead of sinking into itself and springing back
        # every substep.
        gravity = self.gravity / max(float(np.linalg.norm(self.gravity)), _TINY)
        lift = np.where(contacts["impact"], 0.0, normal @ -gravity)
        body_a[lift < -_SUPPORT] = -1
        body_b[lift > _SUPPORT] = -1
        keep = (body_a >= 0) | (body_b >= 0)
        if not np.any(keep):
            return
        # A few contacts per touching pair of bodies span its patch: a face lying on the ground would
        # otherwise be solved sample by sample, one batch each (a 40 cm plank: 300 batches).
        patch = (body[first] + 1) * (len(clusters["total"]) + 2) + np.where(paired, body[other], -1) + 1
        spanning = np.zeros(len(keep), bool)
        spanning[_patch_corners(patch, p[first], normal, contacts["depth"])] = True
        keep &= spanning
        if not np.all(keep):
            contacts = {name: values[keep] for name, values in contacts.items()}
            first, second, normal = contacts["first"], contacts["second"], contacts["normal"]
            body_a, body_b = body_a[keep], body_b[keep]
            real_a, real_b = real_a[keep], real_b[keep]
        total = len(clusters["total"])
        touched = np.flatnonzero(np.bincount(np.concatenate((body_a, body_b)) + 1, minlength=total + 1)[1:])
        count = len(touched)
        # Compact body indices; row ``count`` is "nobody" (immovable: zero inverse mass and inertia).
        compact = np.full(total + 1, count, np.int64)
        compact[touched] = np.arange(count)
        side_a, side_b = compact[body_a], compact[body_b]
        actual_a, actual_b = compact[real_a], compact[real_b]
        members, starts = clusters["members"], clusters["starts"]
        centroids = np.zeros((count + 1, 3))
        centroids[:count] = (
            np.add.reduceat(p[members] * rigid["mass3"], starts)[touched] / clusters["total"][touched, None]
        )
        inverse_mass = np.zeros(count + 1)
        inverse_mass[:count] = rigid["inverse_total"][touched]
        turned = turn[touched]
        inverse_inertia = np.zeros((count + 1, 3, 3))
        # einsum, not matmul: stacked 3 x 3 matmuls go through OpenBLAS, whose threads cost more.
        inverse_inertia[:count] = np.einsum(
            "kij,kjl,kml->kim", turned, rigid["solid_inverse_inertia"][touched], turned
        )
        # Arms to where the surfaces touch, a particle radius from each centre (a rolling wheel's
        # samples' centres move there; the touching point does not), from the real bodies' centroids
        # (an immovable side's arm only serves to read its motion at the contact).
        arm_a = p[first] - self.particle_radius * normal - centroids[actual_a]
        arm_b = p[np.where(second >= 0, second, first)] + self.particle_radius * normal - centroids[actual_b]
        # The rolling lever of each contact's sides (see _resist_rolling).
        roll_a = self._rolling_levers(first, arm_a, normal)
        roll_b = self._rolling_levers(np.where(second >= 0, second, first), arm_b, normal)
        roll_b[second < 0] = np.inf  # the ground is flat
        # Order: ground contacts first, then deepest first; then batches of distinct bodies.
        order = np.lexsort((-contacts["depth"], second >= 0))
        batches = _body_batches(side_a[order], side_b[order], count)
        order = order[np.concatenate(batches)]
        bounds = np.cumsum([0] + [len(b) for b in batches])
        side_a, side_b, normal = side_a[order], side_b[order], normal[order]
        actual_a, actual_b = actual_a[order], actual_b[order]
        arm_a, arm_b = arm_a[order], arm_b[order]
        # Two surfaces of radii Ra and Rb roll on each other as one of Ra Rb / (Ra + Rb) on flat ground
        # (Hertz's effective radius): a cube's edge on another's face about as its edge on the floor.
        roll_a, roll_b = roll_a[order], roll_b[order]
        flat = np.isinf(roll_b)
        roll_b = np.where(flat, 1.0, roll_b)
        roll = np.where(flat, roll_a, roll_a * roll_b / np.maximum(roll_a + roll_b, _TINY))
        depth, slip, before = contacts["depth"][order], contacts["slip"][order], contacts["before"][order]
        static, dynamic = contacts["static"][order], contacts["dynamic"][order]
        # Per contact and side, as 6-vectors over a body's (translation, small turn): how a body's motion
        # moves the contact point along the normal (n, r x n), and how a unit normal impulse moves the
        # body (n / M, I^-1 (r x n)); the generalized inverse mass is the sum of their products.
        lever_a, lever_b = _cross_rows(arm_a, normal), _cross_rows(arm_b, normal)
        turn_a = np.einsum("kij,kj->ki", inverse_inertia[side_a], lever_a)
        turn_b = np.einsum("kij,kj->ki", inverse_inertia[side_b], lever_b)
        reach_a, reach_b = np.hstack((normal, lever_a)), np.hstack((normal, lever_b))
        push_a = np.hstack((inverse_mass[side_a, None] * normal, turn_a))
        push_b = np.hstack((inverse_mass[side_b, None] * normal, turn_b))
        weight = np.einsum("ij,ij->i", reach_a, push_a) + np.einsum("ij,ij->i", reach_b, push_b)
        ease = 1.0 / np.maximum(weight, _TINY)
        # Each body's translation and small turn so far (views: move, spin), and its start's.
        motion = np.zeros((count + 1, 6))
        move, spin = motion[:, :3], motion[:, 3:]
        start_motion = np.zeros((count + 1, 6))
        pushed = np.zeros(len(depth))
        self._body_frame = (inverse_mass, inverse_inertia)
        for round_, sweeps in enumerate(_NORMAL_SWEEPS):
            for sweep in range(sweeps):
                for k in range(len(batches)):
                    s = slice(bounds[k], bounds[k + 1])
                    a, b = side_a[s], side_b[s]
                    closer = np.einsum("ij,ij->i", motion[a], reach_a[s])
                    closer -= np.einsum("ij,ij->i", motion[b], reach_b[s])
                    now = depth[s] - closer
                    # Projected Gauss-Seidel: a contact may take back what it pushed, never pull.
                    lam = np.maximum(now * ease[s], -pushed[s])
                    pushed[s] += lam
                    motion[a] += lam[:, None] * push_a[s]
                    motion[b] -= lam[:, None] * push_b[s]
                    if sweep or round_:
                        continue
                    # The part of the push that undoes an overlap already there at the start moves the
                    # start too.
                    existing = np.maximum(lam, 0.0) * np.clip(before[s], 0.0, np.maximum(now, 0.0))
                    existing /= np.maximum(now, _TINY)
                    start_motion[a] += existing[:, None] * push_a[s]
                    start_motion[b] -= existing[:, None] * push_b[s]
            if round_ == 0:
                patches = self._contact_patches(
                    pushed, (side_a, side_b), (actual_a, actual_b), (arm_a, arm_b), normal, slip,
                    (static, dynamic), count, roll,
                )  # fmt: skip
                held = np.zeros(len(patches["load"]))
            else:  # the same patches, carrying what the sweeps since have pushed
                active, group = patches["members"]
                patches["load"] = np.bincount(group, pushed[active], minlength=len(held))
            # Static friction on the patches' slip this substep, all rounds together at most mu_s times
            # the normal load (sliding ones: dynamic friction, in the velocity pass).
            limit = patches["static"] * patches["load"] - held
            held += self._patch_friction(patches, move, spin, patches["slip"], limit, True)
        patches["stuck"] = held > 0  # static friction held the patch (see _rigid_velocity_pass)
        moved_particles = members[np.isin(clusters["cluster"], touched)]
        owner = compact[body[moved_particles]]
        relative = p[moved_particles] - centroids[owner]
        p[moved_particles] += move[owner] + _cross_rows(spin[owner], relative)
        start[moved_particles] += start_motion[owner, :3] + _cross_rows(start_motion[owner, 3:], relative)
        # For the velocity pass after this substep (the last projection's contacts count).
        rigid["solved"] = {
            "touched": touched,
            "bounds": bounds,
            "sides": (side_a, side_b),
            "reach": (reach_a, reach_b),
            "push": (push_a, push_b),
            "ease": ease,
            "pushed": pushed,
            "patches": patches,
            "inverse_mass": inverse_mass,
            "inverse_inertia": inverse_inertia,
        }

    def _tangent_response(self, a, b, ra, rb, tangent) -> tuple[NDArray, NDArray, NDArray]:
        """For unit impulses along ``tangent`` at arms ``ra`` / ``rb`` of compact bodies ``a`` / ``b``:
        each side's turn and how far the two points move apart along it (the generalized inverse mass)."""
        inverse_mass, inverse_inertia = self._body_frame
        twist_a = np.einsum("kij,kj->ki", inverse_inertia[a], _cross_rows(ra, tangent))
        twist_b = np.einsum("kij,kj->ki", inverse_inertia[b], _cross_rows(rb, tangent))
        resistance = (
            inverse_mass[a]
            + inverse_mass[b]
            + np.einsum("ij,ij->i", _cross_rows(ra, tangent), twist_a)
            + np.einsum("ij,ij->i", _cross_rows(rb, tangent), twist_b)
        )
        return twist_a, twist_b, np.maximum(resistance, _TINY)

    def _contact_patches(self, pushed, sides, actual, arms, normal, slip, friction, count, roll) -> dict:
        """The contact patches of the pushed contacts: one per touching pair of real bodies (``actual``;
        or body and ground) and the sides (``sides``) that move in it, at its contacts' mean point and
        normal weighted by how hard each pushed (``load``: the sum), with the mean ``slip`` and the
        (static, dynamic) ``friction`` coefficients.

        Where shock propagation makes the lower body immovable to the upper one's contacts (its side
        is "nobody"), the patch still reads the lower body's real motion: friction holds the upper
        body to where the lower one really went this substep (after the ground held it), not to where
        gravity alone moved it. Read as "nobody", a cube on a box tilted below arctan(mu) crept down
        at g sin(theta) h (8.3 mm/s at 24 deg and mu 0.5 with 20+ substeps); keyed by "nobody", all
        the bodies an upper one rests on were one patch with its ground contacts."""
        side_a, side_b = sides
        actual_a, actual_b = actual
        arm_a, arm_b = arms
        active = np.flatnonzero(pushed > 0)
        # One patch per real pair and per which of its sides move (a pair's impact moves both).
        key = (actual_a[active] * (count + 1) + actual_b[active]) * 4
        key += 2 * (side_a[active] == count) + (side_b[active] == count)
        keys, patch = np.unique(key, return_inverse=True)
        lam = pushed[active]
        load = np.bincount(patch, weights=lam, minlength=len(keys))

        def mean(values):
            weights = lam[:, None] * values[active]
            sums = [np.bincount(patch, weights=weights[:, k], minlength=len(keys)) for k in range(3)]
            return np.stack(sums, axis=1) / np.maximum(load, _TINY)[:, None]

        n = mean(normal)
        n /= np.maximum(np.sqrt(np.einsum("ij,ij->i", n, n)), _TINY)[:, None]
        centre = mean(arm_a)
        # How far the contacts lie from the patch's point across its normal (load-weighted): the lever
        # of friction against the bodies' turning about the normal (a uniform disc of radius R: 2R/3).
        off = arm_a[active] - centre[patch]
        off -= n[patch] * np.einsum("ij,ij->i", off, n[patch])[:, None]
        spread = np.bincount(patch, lam * np.sqrt(np.einsum("ij,ij->i", off, off)), minlength=len(keys))
        spread = spread / np.maximum(load, _TINY)
        # Friction across a face patch acts at the bodies' centres' level: in the plane through each
        # centre across the patch's normal. At the patch's depth its torque tips a sliding box onto
        # its leading edge, which the normal sweeps before it cannot take back; riding on that edge a
        # 0.3 m cube on a 40 deg slope with mu 0.8 slid 0.70 m in 1 s (Coulomb: 0.147). On a face the
        # load would shift forward within the patch and cancel that torque; on an edge or a corner
        # (a patch without extent both ways across its normal) it cannot, and the torque stays.
        moment = np.einsum("i,ij,ik->ijk", lam, off, off)
        moment = np.stack(
            [np.bincount(patch, moment[:, j, k], minlength=len(keys)) for j in range(3) for k in range(3)]
        )
        moment = moment.T.reshape(-1, 3, 3) / np.maximum(load, _TINY)[:, None, None]
        across = np.sqrt(np.maximum(np.linalg.eigvalsh(moment)[:, 1], 0.0))  # the patch's narrower extent
        face = across > _FACE_EXTENT * self.particle_radius
        patch_arms = (centre, mean(arm_b))
        friction_arms = tuple(
            np.where(face[:, None], arm - n * np.einsum("ij,ij->i", arm, n)[:, None], arm)
            for arm in patch_arms
        )
        pair, fixed = keys // 4, keys % 4
        a, b = pair // (count + 1), pair % (count + 1)
        # The sides that move: an immovable one is "nobody" (no mass, no inertia).
        moving = (np.where(fixed >= 2, count, a), np.where(fixed % 2 == 1, count, b))
        static, dynamic = np.zeros(len(keys)), np.zeros(len(keys))
        static[patch], dynamic[patch] = friction[0][active], friction[1][active]
        # Batches of distinct real bodies: a patch reads the lower body's motion, so none may change it
        # alongside. (Solved from the ground up, by the contacts' height, friction held no better, and
        # a 1 cm plank dropped from 5 m at 20 substeps passed into the one below it.)
        batches = _body_batches(a, b, count)
        return {
            "sides": (a, b),
            "moving": moving,
            "arms": patch_arms,
            "friction_arms": friction_arms,
            "spread": spread,
            # The radius the patch rolls on (_rolling_levers), load-weighted over its contacts.
            "roll_lever": np.bincount(patch, lam * roll[active], minlength=len(keys))
            / np.maximum(load, _TINY),
            "normal": n,
            "slip": mean(slip),
            "load": load,
            "static": static,
            "dynamic": dynamic,
            "batches": batches,
            "members": (active, patch),
        }

    def _patch_friction(self, patches, linear, angular, drift, limit, sticking) -> NDArray[np.float64]:
        """Friction per contact patch (``_contact_patches``), batch by batch: each patch's relative
        motion (``drift`` plus what the bodies' ``linear`` and ``angular`` moves or velocities give at
        its point) along the patch is cancelled by an impulse on its moving sides, if that needs at
        most ``limit`` when ``sticking`` (static friction: all or nothing), else by at most ``limit``
        (dynamic). Returns the friction impulse each patch took.

        Per patch, not per contact: a single contact's own push turns its body and slides that point
        sideways (a cube's corner by half as far as it lifts it), which the patch's other contacts undo."""
        inverse_mass = self._body_frame[0]
        a, b = patches["sides"]
        move_a, move_b = patches["moving"]
        ra, rb = patches["friction_arms"]
        n = patches["normal"]
        applied = np.zeros(len(a))
        for batch in patches["batches"]:
            pa, pb, qa, qb, pn = a[batch], b[batch], ra[batch], rb[batch], n[batch]
            ma, mb = move_a[batch], move_b[batch]
            apart = drift[batch] + linear[pa] + _cross_rows(angular[pa], qa)
            apart -= linear[pb] + _cross_rows(angular[pb], qb)
            apart -= pn * np.einsum("ij,ij->i", apart, pn)[:, None]
            length = np.sqrt(np.einsum("ij,ij->i", apart, apart))
            tangent = apart / np.maximum(length, _TINY)[:, None]
            twist_a, twist_b, resistance = self._tangent_response(ma, mb, qa, qb, tangent)
            stop = length / resistance
            if sticking:
                grip = np.where(stop <= limit[batch], stop, 0.0)
            else:
                grip = np.minimum(stop, limit[batch])
            linear[ma] -= (inverse_mass[ma] * grip)[:, None] * tangent
            linear[mb] += (inverse_mass[mb] * grip)[:, None] * tangent
            angular[ma] -= grip[:, None] * twist_a
            angular[mb] += grip[:, None] * twist_b
            applied[batch] = grip
        return applied

    def set_rolling_resistance(self, coefficient: float) -> None:
        """Rigid bodies resist rolling on what they touch with a torque ``coefficient * N * R`` (``N``
        the normal force of a contact patch, ``R`` the radius the surfaces roll on there,
        ``_rolling_levers``: a wheel's or a ball's from its centre of mass to the patch, a box edge's
        the particle radius), as a wheel's or a ball's rolling resistance: a ring rolling on flat
        ground slows at ``coefficient * g / 2``, a solid ball at ``coefficient * g / 1.4``. It only
        slows the rolling (never turns a body back), and leaves spinning about the contact normal to
        friction."""
        if self._rigid is None or not self._rigid["sequential"]:
            raise SimulationError(
                "rolling resistance needs sequential rigid contacts (enable_rigid_contacts(sequential=True))"
            )
        if not (np.isfinite(coefficient) and coefficient >= 0):
            raise SimulationError(f"rolling resistance must be a number >= 0, got {coefficient}")
        self._rolling_resistance = float(coefficient)

    def _rolling_levers(self, particles, arms, normal) -> NDArray[np.float64]:
        """Per contact, the radius the body rolls on there: where its sample lies on a face (a smooth
        surface: a drum's rim), its lever from its centroid to the contact across the normal; on an
        edge or a corner, the particle radius (how round the samples make it)."""
        lever = np.abs(np.einsum("ij,ij->i", arms, normal))
        rest = self._rigid["normals"][particles]
        smooth = np.sqrt(np.einsum("ij,ij->i", rest, rest)) > _FACE
        return np.where(smooth, lever, self.particle_radius)

    def _resist_rolling(self, patches, angular, h) -> None:
        """Per contact patch, an angular impulse against the bodies' relative rolling (their relative
        turning rate across the patch normal) of at most ``c N R h``, at most what stops it, ``R`` the
        radius the surfaces roll on there (``_rolling_levers``).

        Held at rest, such a torque is one gravity must beat to tip a body over: with ``R`` the lever
        from a cube's centre (0.26 m on an edge), a cube 5 degrees past balance on its edge stood there
        at c 0.18 and 0.3, and cubes of a pour leaned on each other (11-12 of 50 tilted > 20 deg at
        mu 0.3). On its edge a cube rolls on the particles' radius: it falls."""
        inverse_inertia = self._body_frame[1]
        a, b = patches["sides"]
        move_a, move_b = patches["moving"]
        n = patches["normal"]
        # N h = load / h: the patch's normal impulse over the substep; times c R: the angular impulse.
        limit = self._rolling_resistance * patches["load"] / h * patches["roll_lever"]
        for batch in patches["batches"]:
            pa, pb, ma, mb, pn = a[batch], b[batch], move_a[batch], move_b[batch], n[batch]
            rolling = angular[pa] - angular[pb]
            rolling -= pn * np.einsum("ij,ij->i", rolling, pn)[:, None]
            rate = np.sqrt(np.einsum("ij,ij->i", rolling, rolling))
            axis = rolling / np.maximum(rate, _TINY)[:, None]
            turn_a = np.einsum("kij,kj->ki", inverse_inertia[ma], axis)
            turn_b = np.einsum("kij,kj->ki", inverse_inertia[mb], axis)
            ease = np.einsum("ij,ij->i", turn_a + turn_b, axis)
            impulse = np.minimum(limit[batch], rate / np.maximum(ease, _TINY))
            angular[ma] -= impulse[:, None] * turn_a
            angular[mb] += impulse[:, None] * turn_b

    def _resist_twisting(self, patches, angular, limit) -> None:
        """Per contact patch, an angular impulse against the bodies' relative turning about the patch
        normal (friction spread over the patch: a plank spinning flat on the floor) of at most
        ``limit``, at most what stops it."""
        inverse_inertia = self._body_frame[1]
        a, b = patches["sides"]
        move_a, move_b = patches["moving"]
        n = patches["normal"]
        for batch in patches["batches"]:
            pa, pb, ma, mb, pn = a[batch], b[batch], move_a[batch], move_b[batch], n[batch]
            rate = np.einsum("ij,ij->i", angular[pa] - angular[pb], pn)
            turn_a = np.einsum("kij,kj->ki", inverse_inertia[ma], pn)
            turn_b = np.einsum("kij,kj->ki", inverse_inertia[mb], pn)
            ease = np.einsum("ij,ij->i", turn_a + turn_b, pn)
            impulse = np.sign(rate) * np.minimum(limit[batch], np.abs(rate) / np.maximum(ease, _TINY))
            angular[ma] -= impulse[:, None] * turn_a
            angular[mb] += impulse[:, None] * turn_b

    def _rigid_velocity_pass(self, p, v, h) -> None:
        """After a substep's velocities are derived (Müller et al. 2020, section 3.6), per contact the
        last projection pushed: the bodies' relative normal speed there is removed (no restitution: a
        contact pushed out neither bounces nor rocks the body), and the tangential one slowed by
        dynamic friction, ``mu_d`` times the normal force over the substep, never past stopping."""
        solved = self._rigid.pop("solved", None)
        if solved is None:
            return
        clusters, rigid = self._clusters, self._rigid
        touched = solved["touched"]
        count = len(touched)
        members, cluster = clusters["members"], clusters["cluster"]
        moved_particles = members[np.isin(cluster, touched)]
        compact = np.full(len(clusters["total"]), count, np.int64)
        compact[touched] = np.arange(count)
        owner = compact[rigid["body"][moved_particles]]
        mass = clusters["mass"][np.isin(cluster, touched)]
        weights = np.repeat(mass, 3).reshape(-1, 3)
        total = clusters["total"][touched]
        position, velocity = p[moved_particles], v[moved_particles]
        centroid = np.zeros((count + 1, 3))
        velocities = np.zeros((count + 1, 6))  # each body's (linear, angular) velocity (views below)
        linear, angular = velocities[:, :3], velocities[:, 3:]
        for axis in range(3):
            centroid[:count, axis] = np.bincount(owner, mass * position[:, axis], minlength=count) / total
            linear[:count, axis] = np.bincount(owner, mass * velocity[:, axis], minlength=count) / total
        relative = position - centroid[owner]
        momentum = _cross_rows(relative, velocity * weights)
        spin = np.zeros((count, 3))
        for axis in range(3):
            spin[:, axis] = np.bincount(owner, weights=momentum[:, axis], minlength=count)
        inverse_mass, inverse_inertia = solved["inverse_mass"], solved["inverse_inertia"]
        self._body_frame = (inverse_mass, inverse_inertia)
        # The particles' turning rate: their angular momentum over their own inertia (impulses below
        # turn the bodies by their solid inertia, enable_rigid_contacts).
        turn = quaternion_to_matrix(clusters["quaternions"][touched])
        own = np.einsum("kij,kjl,kml->kim", turn, rigid["inverse_inertia"][touched], turn)
        angular[:count] = np.einsum("kij,kj->ki", own, spin)
        before = velocities.copy()
        side_a, side_b = solved["sides"]
        reach_a, reach_b = solved["reach"]
        push_a, push_b = solved["push"]
        ease, pushed = solved["ease"], solved["pushed"]
        bounds = solved["bounds"]
        for _ in range(_VELOCITY_SWEEPS):
            for k in range(len(bounds) - 1):
                s = slice(bounds[k], bounds[k + 1])
                active = pushed[s] > 0
                if not np.any(active):
                    continue
                a, b = side_a[s], side_b[s]
                # The contact points' relative speed along the normal: n . (v + w x r) = (n, r x n) . (v, w).
                speed = np.einsum("ij,ij->i", velocities[a], reach_a[s])
                speed -= np.einsum("ij,ij->i", velocities[b], reach_b[s])
                impulse = np.where(active, -speed * ease[s], 0.0)
                velocities[a] += impulse[:, None] * push_a[s]
                velocities[b] -= impulse[:, None] * push_b[s]
        patches = solved["patches"]
        drift = np.zeros((len(patches["load"]), 3))
        # mu_d times the normal impulse of the position pass (load / h).
        limit = patches["dynamic"] * patches["load"] / h
        # Sliding: patches that static friction held this substep are left alone, their slip was
        # cancelled in the position pass (dynamic friction on top, up to mu_d N again, held a cube on
        # another cube at 25 deg with mu 0.3: it slid 1 cm in 1 s, Coulomb: 0.74 m). Twisting: every
        # patch (the position pass holds no turn about the normal).
        self._patch_friction(patches, linear, angular, drift, np.where(patches["stuck"], 0.0, limit), False)
        self._resist_twisting(patches, angular, limit * patches["spread"])
        if self._rolling_resistance > 0:
            self._resist_rolling(patches, angular, h)
        change = velocities - before
        v[moved_particles] += change[owner, :3] + _cross_rows(change[owner, 3:], relative)
