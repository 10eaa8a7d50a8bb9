"""Shared helpers for benchmarks: machine description and JSON-line output."""
from __future__ import annotations

import json
import os
import platform
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED_CORPUS = ROOT.parent / "shared" / "data" / "ita-eng" / "ita.txt.gz"
REFERENCE = ROOT.parent / "shared" / "reference" / "tutorial_baseline.py"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()}-core CPU ({cpu})"


def emit(name: str, value: float, unit: str, **extra) -> None:
    """Print one figure as a JSON line."""
    print(json.dumps({"name": name, "value": value, "unit": unit, "machine": machine(), **extra}), flush=True)


def median(values) -> float:
    return float(statistics.median(values))


def batches_dataset(items: list):
    """A Keras PyDataset serving these batches in order (Keras is imported only here)."""
    import keras

    class Batches(keras.utils.PyDataset):
        def __len__(self):
            return len(items)

        def __getitem__(self, index):
            return items[index]

    return Batches()
