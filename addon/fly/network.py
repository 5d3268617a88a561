"""The fly's controller: a fully connected feed-forward network evaluated on column batches.

Parameters are a flat genome so the genetic algorithm can cross and mutate them gene by gene.
Layer k (k >= 1) owns W[k] (n_k x n_{k-1}) and b[k] (n_k), stored in that order, so a network of
layers [n_0, ..., n_L] has sum_k n_k * (n_{k-1} + 1) genes (803 for the paper's [15, 20, 20, 3]).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .errors import FlyError

SYMMETRIC_LAYERS: tuple[int, ...] = (15, 20, 20, 3)
ASYMMETRIC_LAYERS: tuple[int, ...] = (18, 20, 20, 6)
# stroke mode: 12 body inputs + 5 stroke parameters per wing in, 5 parameters per wing out
STROKE_SYMMETRIC_LAYERS: tuple[int, ...] = (17, 20, 20, 5)
STROKE_ASYMMETRIC_LAYERS: tuple[int, ...] = (22, 20, 20, 10)
# output count -> (control mode, asymmetric)
OUTPUT_MODES: dict[int, tuple[str, bool]] = {
    3: ("direct", False),
    6: ("direct", True),
    5: ("stroke", False),
    10: ("stroke", True),
}


def default_layers(control: str = "direct", asymmetric: bool = False) -> tuple[int, ...]:
    if control == "stroke":
        return STROKE_ASYMMETRIC_LAYERS if asymmetric else STROKE_SYMMETRIC_LAYERS
    return ASYMMETRIC_LAYERS if asymmetric else SYMMETRIC_LAYERS


ACTIVATIONS: tuple[str, ...] = ("tanh", "sigmoid", "relu")


def _sigmoid(z: np.ndarray) -> np.ndarray:
    # tanh form avoids overflow warnings of exp(-z) for large negative z
    return 0.5 * (np.tanh(0.5 * z) + 1.0)


def _relu(z: np.ndarray) -> np.ndarray:
    return np.maximum(z, 0.0)


_ACTIVATION_FUNCTIONS = {"tanh": np.tanh, "sigmoid": _sigmoid, "relu": _relu}


def check_layers(layers: Sequence[int]) -> tuple[int, ...]:
    sizes = tuple(int(n) for n in layers)
    if len(sizes) < 2 or any(n < 1 for n in sizes):
        raise FlyError(f"Network layers must be at least two positive sizes, got {list(layers)}")
    return sizes


def check_activation(activation: str) -> str:
    if activation not in _ACTIVATION_FUNCTIONS:
        raise FlyError(f"Unknown activation '{activation}': choose one of {', '.join(ACTIVATIONS)}")
    return activation


def genome_size(layers: Sequence[int]) -> int:
    """Number of genes: sum over layers k >= 1 of n_k * n_{k-1} weights plus n_k biases."""
    sizes = check_layers(layers)
    return sum(n * (prev + 1) for prev, n in zip(sizes[:-1], sizes[1:], strict=True))


def output_unit_range(outputs: np.ndarray, activation: str) -> np.ndarray:
    """Map the last layer's activation range onto [-1, 1] so every activation drives full wing range."""
    if activation == "tanh":
        return outputs
    if activation == "sigmoid":
        return 2.0 * outputs - 1.0
    return 2.0 * np.minimum(outputs, 1.0) - 1.0


class Network:
    """One network (genome shape (G,)) or a stack of P networks (genomes shape (P, G)).

    ``activate(X)`` takes inputs as columns, as in the paper: X (n_0, m) -> (n_L, m) for one
    network and X (P, n_0, m) -> (P, n_L, m) for a stack, every layer being
    Z[k] = W[k] A[k-1] + b[k], A[k] = f(Z[k]).
    """

    def __init__(
        self, genome: np.ndarray, layers: Sequence[int] = SYMMETRIC_LAYERS, activation: str = "tanh"
    ) -> None:
        self.layers = check_layers(layers)
        self.activation = check_activation(activation)
        genes = np.asarray(genome, dtype=np.float64)
        expected = genome_size(self.layers)
        if genes.ndim not in (1, 2) or genes.shape[-1] != expected:
            raise FlyError(
                f"Genome has shape {genes.shape}; layers {list(self.layers)} need {expected} genes each"
            )
        if not np.all(np.isfinite(genes)):
            raise FlyError("Genome contains NaN or infinite values")
        self.stacked = genes.ndim == 2
        lead = genes.shape[:-1]
        self.weights: list[np.ndarray] = []
        self.biases: list[np.ndarray] = []
        offset = 0
        for prev, n in zip(self.layers[:-1], self.layers[1:], strict=True):
            self.weights.append(genes[..., offset : offset + n * prev].reshape(*lead, n, prev))
            offset += n * prev
            self.biases.append(genes[..., offset : offset + n].reshape(*lead, n, 1))
            offset += n

    @property
    def inputs(self) -> int:
        return self.layers[0]

    @property
    def outputs(self) -> int:
        return self.layers[-1]

    def activate(self, inputs: np.ndarray) -> np.ndarray:
        values = np.asarray(inputs, dtype=np.float64)
        expected_ndim = 3 if self.stacked else 2
        if values.ndim != expected_ndim or values.shape[-2] != self.inputs:
            shape = "(P, n, m)" if self.stacked else "(n, m)"
            raise FlyError(f"Network input must be {shape} with n = {self.inputs}, got {values.shape}")
        function = _ACTIVATION_FUNCTIONS[self.activation]
        for weight, bias in zip(self.weights, self.biases, strict=True):
            values = function(weight @ values + bias)
        return values


def embed_symmetric_stroke(weights: np.ndarray) -> np.ndarray:
    """A [17, 20, 20, 5] stroke genome as the [22, 20, 20, 10] asymmetric genome that flies the same:
    the hidden layers are shared, each stroke-parameter input weight is halved over the right and left
    wing's copy (equal while both wings beat alike), and both wings get the same output rows.

    It seeds an asymmetric population with a hovering fly, which then only has to learn to steer.
    """
    source = Network(weights, STROKE_SYMMETRIC_LAYERS)
    first, second, last = source.weights
    body = first[:, :12]
    wing = 0.5 * first[:, 12:]
    parts = [
        np.concatenate([body, wing, wing], axis=1).ravel(),
        source.biases[0].ravel(),
        second.ravel(),
        source.biases[1].ravel(),
        np.concatenate([last, last]).ravel(),
        np.concatenate([source.biases[2], source.biases[2]]).ravel(),
    ]
    return np.concatenate(parts)
