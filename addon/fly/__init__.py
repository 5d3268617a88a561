"""The neuro-evolved fly: wing kinematics and drag dynamics, a feed-forward controller and the
paper's genetic algorithm, all vectorised over the population (no bpy)."""

from . import fitness
from .errors import FlyError, GenomeFileError
from .ga import GenerationResult, Population
from .genome import Genome, load_genome, save_genome
from .model import FlyModel
from .network import ASYMMETRIC_LAYERS, SYMMETRIC_LAYERS, Network, genome_size
from .simulate import Flight, simulate, simulate_controlled, simulate_genomes_steps, simulate_steps

__all__ = [
    "ASYMMETRIC_LAYERS",
    "SYMMETRIC_LAYERS",
    "Flight",
    "FlyError",
    "FlyModel",
    "GenerationResult",
    "Genome",
    "GenomeFileError",
    "Network",
    "Population",
    "fitness",
    "genome_size",
    "load_genome",
    "save_genome",
    "simulate",
    "simulate_controlled",
    "simulate_genomes_steps",
    "simulate_steps",
]
