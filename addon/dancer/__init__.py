"""The balancing ballet dancer (Pedersen, Erleben & Sporring, "Ballet balance strategies", 2006).

A MuJoCo body generated from height, mass and sex with Winter / Plagenhoef segment data; muscles
are spring-dampers towards target angles (eq. 1); the COM (eq. 6) and COP (eqs. 7-9) strategies
move those targets. ``simulate_balance`` is the paper's section 3 comparison, ``perform`` its
Fig. 2 sequence ending on one toe and, through :mod:`.steps`, sequences of named steps on either
leg. MuJoCo is imported only when a simulation runs.
"""

from .anthropometry import DancerError
from .balance import Balance, Gains, settle_time, simulate_balance, simulate_balance_steps
from .model import DancerBody, build_body
from .perform import DEFAULT_SEQUENCE, Performance, perform, perform_steps
from .sim import mujoco_unavailable
from .steps import BALANCED, POSITIONS, STEPS, parse_sequence_text, parse_step, plan, random_sequence

__all__ = [
    "BALANCED",
    "DEFAULT_SEQUENCE",
    "POSITIONS",
    "STEPS",
    "Balance",
    "DancerBody",
    "DancerError",
    "Gains",
    "Performance",
    "build_body",
    "mujoco_unavailable",
    "parse_sequence_text",
    "parse_step",
    "perform",
    "perform_steps",
    "plan",
    "random_sequence",
    "settle_time",
    "simulate_balance",
    "simulate_balance_steps",
]
