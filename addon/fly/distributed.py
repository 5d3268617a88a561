"""Population fitness on a Dask cluster (optional: only the training CLI needs Dask, never Blender).

A generation's genomes are split into chunks, each chunk is flown on a worker by
:func:`training.evaluate_genomes` and the scores are put back in order. Every fly's arithmetic is
independent of the others', so the scores, and therefore the whole training, are bit for bit what
a single process computes for the same seed (the breeding stays in the client, with its random
generator).
"""

from __future__ import annotations

import io
import os
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .errors import FlyError

INSTALL_HINT = (
    "Distributed fly training needs Dask's distributed scheduler, which is not installed here: "
    "pip install 'dask[distributed]' in the Python that runs the training CLI "
    "(Blender never needs it; its Train button trains in process)"
)


def require_distributed():
    """The ``distributed`` module, or a FlyError saying how to install it."""
    try:
        import distributed
    except ImportError as error:
        raise FlyError(INSTALL_HINT) from error
    return distributed


def connect(scheduler: str | None = None, workers: int | None = None):
    """A Dask client: to a running scheduler (``tcp://HOST:8786``), or to a new LocalCluster of
    ``workers`` single-threaded processes (numpy's own threads would only fight over the cores)."""
    distributed = require_distributed()
    if scheduler:
        try:
            client = distributed.Client(scheduler, timeout="20s")
        except (OSError, TimeoutError) as error:
            raise FlyError(f"Cannot reach the Dask scheduler at {scheduler}: {error}") from error
        _ship_package(client)
        return client
    if workers is None or int(workers) < 1:
        raise FlyError(f"A local Dask cluster needs at least one worker, got {workers}")
    cluster = distributed.LocalCluster(
        n_workers=int(workers), threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    return distributed.Client(cluster)


def close(client) -> None:
    cluster = getattr(client, "cluster", None)
    client.close()
    if cluster is not None:
        cluster.close()


def _ship_package(client) -> None:
    """Upload the fly's pure-Python core (``addon`` with ``fly`` and ``quaternions``) to a remote
    cluster's workers, so they need only numpy and Dask, not a ProcAnim checkout."""
    package = Path(__file__).resolve().parents[1]  # the ``addon`` folder
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for folder in (package, package / "fly", package / "quaternions"):
            for path in sorted(folder.glob("*.py")):
                archive.write(path, str(path.relative_to(package.parent)))
    target = Path(os.environ.get("TMPDIR", "/tmp")) / f"procanim_fly_core_{os.getpid()}.zip"
    target.write_bytes(buffer.getvalue())
    client.upload_file(str(target))


def dask_evaluator(client, chunks: int | None = None) -> Callable:
    """An ``evaluate(genomes, config, target)`` for :func:`training.train_steps` that scores the
    population in ``chunks`` pieces on the cluster (default: one per worker)."""
    from .training import evaluate_genomes

    def evaluate(genomes: np.ndarray, config, target) -> np.ndarray:
        count = chunks or max(1, len(client.scheduler_info().get("workers", {})))
        parts = [part for part in np.array_split(genomes, min(count, len(genomes))) if len(part)]
        # settings and target go positionally, one per chunk: large keyword arrays would be shared
        # under their argument's name across generations
        count = len(parts)
        futures = client.map(evaluate_genomes, parts, [config] * count, [target] * count, pure=False)
        return np.concatenate(client.gather(futures))

    return evaluate
