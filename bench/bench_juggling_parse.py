"""Siteswap parsing throughput: the bundled presets, and random long patterns (vanilla, multiplex,
sync, passing), in patterns per second.

The panel re-reads the siteswap on every redraw for its live feedback, so one parse must take well
under a frame: the slowest preset's parse is also given as a share of one 60 fps frame. There is no
Blender built-in to compare with; ``summarize`` caches its answers, so a redraw with an unchanged
siteswap does not parse at all.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_time, record  # noqa: E402

from addon.juggling import parse_siteswap  # noqa: E402
from addon.presets import load_presets  # noqa: E402


def random_vanilla(rng: random.Random, period: int) -> list[int]:
    landing = list(range(period))
    rng.shuffle(landing)
    return [(landing[i] - i) % period + period * rng.randint(0, 1) for i in range(period)]


def token(value: int) -> str:
    # letters would be read as crossings after a value ("3x") or passes ("3p"), so spell them out
    return str(value) if value < 10 else f"{{{value}}}"


def long_patterns(rng: random.Random) -> tuple[dict[str, list[str]], list[list[int]]]:
    values = [random_vanilla(rng, rng.randint(20, 30)) for _ in range(100)]
    vanilla = ["".join(token(v) for v in pattern) for pattern in values]
    # a 0 placeholder beside every third throw keeps the pattern valid and goes through multiplex
    multiplex = [
        "".join(f"[{token(v)}0]" if i % 3 == 0 else token(v) for i, v in enumerate(pattern))
        for pattern in values[:50]
    ]
    pairs = ["(4,4)", "(4x,4x)"]  # ground-state 4-prop pieces: any order is valid
    sync = ["".join(rng.choice(pairs) for _ in range(12)) for _ in range(50)]
    passing = []
    for pattern in values[50:]:
        sequence = " ".join(token(v) + ("p" if v and i % 2 == 0 else "") for i, v in enumerate(pattern))
        passing.append(f"<{sequence}|{sequence}|{sequence}>")
    return {"vanilla": vanilla, "multiplex": multiplex, "sync": sync, "passing": passing}, values


def main() -> None:
    presets = [p["siteswap"] for p in load_presets("juggling")]
    rng = random.Random(2024)
    families, vanilla_values = long_patterns(rng)

    def parse_all(texts: list[str]) -> None:
        for text in texts:
            parse_siteswap(text)

    seconds = best_time(lambda: parse_all(presets), repeat=5)
    record("juggling parse: presets", len(presets) / seconds, "patterns/s", ">= 2000")
    for family, texts in families.items():
        seconds = best_time(lambda texts=texts: parse_all(texts), repeat=3)
        mean_period = sum(parse_siteswap(t).period for t in texts) / len(texts)
        record(
            f"juggling parse: random {family} (mean period {mean_period:.0f})",
            len(texts) / seconds,
            "patterns/s",
            ">= 200",
        )

    worst = max(presets, key=lambda text: best_time(lambda: parse_siteswap(text), repeat=3))
    frame_share = best_time(lambda: parse_siteswap(worst), repeat=5) * 60.0 * 100.0
    record(f"juggling parse: slowest preset {worst!r}, share of a 60 fps frame", frame_share, "%", "<= 10")

if __name__ == "__main__":
    main()
