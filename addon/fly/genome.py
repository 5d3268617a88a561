"""Genomes and their files: plain .npz arrays loaded with allow_pickle=False, so a shared file can
carry numbers only, never code."""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import FlyError, GenomeFileError
from .model import SIZES, FlyModel
from .network import (
    ASYMMETRIC_LAYERS,
    OUTPUT_MODES,
    STROKE_ASYMMETRIC_LAYERS,
    STROKE_SYMMETRIC_LAYERS,
    SYMMETRIC_LAYERS,
    Network,
    check_activation,
    check_layers,
    genome_size,
)

FORMAT_VERSION = 2  # 2 adds control mode, size, seed and training settings; version 1 files still load


@dataclass(frozen=True)
class Genome:
    """One controller: flat weights plus the network shape they belong to."""

    weights: np.ndarray
    layers: tuple[int, ...] = SYMMETRIC_LAYERS
    activation: str = "tanh"
    aero: str = "drag"  # the aerodynamics it was trained with; it only flies in that model
    size: str = "cartoon"  # the fly it was trained on (FlyModel.preset name)

    def __post_init__(self) -> None:
        layers = check_layers(self.layers)
        check_activation(self.activation)
        if self.aero not in ("drag", "quasi_steady"):
            raise FlyError(f"Unknown aerodynamics '{self.aero}': use 'drag' or 'quasi_steady'")
        if self.size not in SIZES:
            raise FlyError(f"Unknown fly size '{self.size}': use one of {', '.join(SIZES)}")
        if layers[-1] not in OUTPUT_MODES:
            raise FlyError(
                f"A fly network needs 3, 6 (wing angles) or 5, 10 (stroke) outputs, got {layers[-1]}"
            )
        weights = np.asarray(self.weights, dtype=np.float64)
        if weights.shape != (genome_size(layers),):
            raise FlyError(
                f"Genome has {weights.size} genes; layers {list(layers)} need {genome_size(layers)}"
            )
        if not np.all(np.isfinite(weights)):
            raise FlyError("Genome contains NaN or infinite values")
        object.__setattr__(self, "layers", layers)
        object.__setattr__(self, "weights", weights)

    @property
    def asymmetric(self) -> bool:
        return OUTPUT_MODES[self.layers[-1]][1]

    @property
    def control(self) -> str:
        return OUTPUT_MODES[self.layers[-1]][0]

    def network(self) -> Network:
        return Network(self.weights, self.layers, self.activation)

    def model(self, **changes) -> FlyModel:
        """The fly this genome was trained to fly: its size, control mode, aerodynamics and wings."""
        return FlyModel.preset(
            self.size, control=self.control, aero=self.aero, asymmetric=self.asymmetric, **changes
        )


def infer_layers(gene_count: int) -> tuple[int, ...]:
    for layers in (SYMMETRIC_LAYERS, ASYMMETRIC_LAYERS, STROKE_SYMMETRIC_LAYERS, STROKE_ASYMMETRIC_LAYERS):
        if genome_size(layers) == gene_count:
            return layers
    raise FlyError(f"Cannot tell the network layers of a {gene_count}-gene genome; pass layers explicitly")


def as_genome_stack(genomes, layers=None, activation=None) -> tuple[np.ndarray, tuple[int, ...], str, bool]:
    """Normalise a Genome, Genome list or (G,) / (P, G) array to (stack, layers, activation, asymmetric)."""
    if isinstance(genomes, Genome):
        genomes = [genomes]
    if isinstance(genomes, (list, tuple)) and genomes and isinstance(genomes[0], Genome):
        first = genomes[0]
        if any(g.layers != first.layers or g.activation != first.activation for g in genomes):
            raise FlyError("All genomes simulated together must share layers and activation")
        stack = np.stack([g.weights for g in genomes])
        layers, activation = first.layers, first.activation
    else:
        stack = np.atleast_2d(np.asarray(genomes, dtype=np.float64))
        if stack.ndim != 2 or stack.shape[0] < 1:
            raise FlyError(f"Genomes must be (G,) or (P, G), got shape {np.shape(genomes)}")
        layers = check_layers(layers) if layers is not None else infer_layers(stack.shape[1])
        activation = activation or "tanh"
    if stack.shape[1] != genome_size(layers):
        raise FlyError(
            f"Genomes have {stack.shape[1]} genes; layers {list(layers)} need {genome_size(layers)}"
        )
    if not np.all(np.isfinite(stack)):
        raise FlyError("Genomes contain NaN or infinite values")
    check_activation(activation)
    if layers[-1] not in OUTPUT_MODES:
        raise FlyError(f"A fly network needs 3, 6 (wing angles) or 5, 10 (stroke) outputs, got {layers[-1]}")
    return stack, tuple(layers), activation, OUTPUT_MODES[layers[-1]][1]


def save_genome(
    genome: Genome | np.ndarray,
    path: str | os.PathLike,
    *,
    layers=None,
    activation: str = "tanh",
    aero: str = "drag",
    size: str = "cartoon",
    fitness: float = float("nan"),
    seed: int | None = None,
    settings: dict | None = None,
) -> Path:
    """Write one genome as .npz (arrays only). Returns the written path.

    Besides the weights it records the fly it flies (control mode, size, aerodynamics), and, for a
    trained genome, the seed and training settings (JSON text) that reproduce it and its fitness.
    The archive is written byte for byte the same for the same content (fixed zip timestamps).
    """
    if not isinstance(genome, Genome):
        weights = np.asarray(genome, dtype=np.float64)
        genome = Genome(
            weights, tuple(layers) if layers else infer_layers(weights.size), activation, aero, size
        )
    target = _genome_path(path)
    if target.suffix != ".npz":
        target = target.with_name(target.name + ".npz") if not target.suffix else target.with_suffix(".npz")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        arrays = {
            "format_version": np.int64(FORMAT_VERSION),
            "weights": genome.weights,
            "layers": np.array(genome.layers, dtype=np.int64),
            "activation": np.array(genome.activation),
            "aero": np.array(genome.aero),
            "control": np.array(genome.control),
            "size": np.array(genome.size),
            "fitness": np.float64(fitness),
            "seed": np.int64(-1 if seed is None else seed),
            "settings": np.array(json.dumps(settings or {}, sort_keys=True)),
        }
        _write_npz(target, arrays)
    except OSError as error:
        raise GenomeFileError(f"Cannot write genome file '{target}': {error.strerror or error}") from error
    return target


def _write_npz(target: Path, arrays: dict[str, np.ndarray]) -> None:
    """np.savez's layout with a fixed timestamp, so equal genomes give equal files, bit for bit."""
    import io

    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, value in arrays.items():
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, np.asanyarray(value), allow_pickle=False)
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            archive.writestr(info, buffer.getvalue())


def preset_genome_path(name: str | os.PathLike) -> Path:
    """A genome named in settings or a recipe: a path that exists (or is absolute), else a file in
    presets/fly."""
    path = Path(name)
    if path.is_absolute() or path.exists():
        return path
    return Path(__file__).resolve().parents[2] / "presets" / "fly" / path


def _genome_path(path: str | os.PathLike) -> Path:
    """A genome file path the OS can take: not empty, no NUL byte, names a file rather than a folder."""
    text = os.fspath(path)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if not text.strip():
        raise GenomeFileError("The genome file path is empty")
    if "\x00" in text:
        raise GenomeFileError("The genome file path contains a NUL character")
    if text.rstrip().endswith(("/", "\\")) or not Path(text).name:
        raise GenomeFileError(f"The genome file path '{text[:80]}' names a folder, not a file")
    return Path(text)


def _read_npz(path: Path, required: tuple[str, ...]) -> dict[str, np.ndarray]:
    path = _genome_path(path)
    try:
        exists = path.is_file()
    except OSError as error:  # e.g. a name longer than the file system allows
        reason = error.strerror or error
        raise GenomeFileError(f"Cannot read genome file '{str(path)[:80]}': {reason}") from error
    if not exists:
        raise GenomeFileError(f"Genome file '{path}' does not exist")
    if not zipfile.is_zipfile(path):
        raise GenomeFileError(f"Genome file '{path.name}' is not an .npz archive (corrupt or another format)")
    try:
        with np.load(path, allow_pickle=False) as data:
            missing = [key for key in required if key not in data.files]
            if missing:
                raise GenomeFileError(f"Genome file '{path.name}' lacks {', '.join(missing)}")
            return {key: data[key] for key in data.files}
    except GenomeFileError:
        raise
    except (ValueError, OSError, zipfile.BadZipFile, EOFError, KeyError) as error:
        raise GenomeFileError(f"Genome file '{path.name}' is not a readable .npz genome ({error})") from error


def load_genome(path: str | os.PathLike) -> Genome:
    """Read a genome written by :func:`save_genome`; a corrupt or mis-shaped file raises GenomeFileError."""
    source = Path(path)
    data = _read_npz(source, ("weights", "layers"))
    try:
        layers = tuple(int(n) for n in np.asarray(data["layers"]).reshape(-1))
        activation = str(data["activation"]) if "activation" in data else "tanh"
        aero = str(data["aero"]) if "aero" in data else "drag"
        size = str(data["size"]) if "size" in data else "cartoon"
        genome = Genome(np.asarray(data["weights"], dtype=np.float64), layers, activation, aero, size)
        if "control" in data and str(data["control"]) != genome.control:
            raise FlyError(f"control mode '{data['control']}' does not match {layers[-1]} network outputs")
        return genome
    except (FlyError, TypeError, ValueError) as error:
        raise GenomeFileError(f"Genome file '{source.name}' does not fit its network: {error}") from error


def genome_fitness(path: str | os.PathLike) -> float:
    data = _read_npz(Path(path), ("weights",))
    return float(data.get("fitness", np.float64("nan")))


def genome_record(path: str | os.PathLike) -> dict:
    """What a genome file says about itself: seed, training settings, fitness, mode, size, aero."""
    data = _read_npz(Path(path), ("weights",))
    try:
        settings = json.loads(str(data["settings"])) if "settings" in data else {}
    except ValueError as error:
        raise GenomeFileError(f"Genome file '{Path(path).name}' has unreadable settings ({error})") from error
    layers = tuple(int(n) for n in np.asarray(data.get("layers", [0])).reshape(-1))
    return {
        "seed": int(data["seed"]) if "seed" in data and int(data["seed"]) >= 0 else None,
        "settings": settings,
        "fitness": float(data.get("fitness", np.float64("nan"))),
        "control": str(data["control"])
        if "control" in data
        else OUTPUT_MODES.get(layers[-1], ("direct",))[0],
        "size": str(data["size"]) if "size" in data else "cartoon",
        "aero": str(data["aero"]) if "aero" in data else "drag",
    }
