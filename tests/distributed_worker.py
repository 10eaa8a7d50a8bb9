"""Run in subprocesses by test_distribution.py: train the small model a few steps, data-parallel or not.

usage: distributed_worker.py WORKDIR OUT.npz DISTRIBUTE [DISTRIBUTE ...]

Trains once per DISTRIBUTE value (none, multi_worker, data_parallel) into WORKDIR/<value>/run
(WORKDIR/<value>/prepared must exist); TF_CONFIG and KERAS_BACKEND come from the environment.
On the chief, reloads each final model and writes its masked loss on 64 validation pairs to OUT.npz.
"""
import json
import os
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
sys.path[:0] = [str(TESTS.parent), str(TESTS)]

import numpy as np  # noqa: E402

from conftest import SMALL_MODEL  # noqa: E402
from pipeline.config import load_config  # noqa: E402
from pipeline.datasets import format_dataset, load_split  # noqa: E402
from pipeline.objectives import MaskedSparseCrossEntropy  # noqa: E402
from pipeline.serializable import load_model
from pipeline.training import train  # noqa: E402
from pipeline.rundir import prepared_path, run_path

STEPS = 6
# dropout off: replicas draw different dropout masks than one device would
# one bucket: one batch shape to compile per mode; what is compared does not depend on the number of shapes
OVERRIDES = SMALL_MODEL + ["model.dropout=0.0", "train.epochs=1", f"train.max_steps={STEPS}",
                           "train.checkpoint_every_steps=3", "train.buckets=1"]


def main(workdir: str, out: str, modes: list[str]) -> None:
    chief = json.loads(os.environ.get("TF_CONFIG", "{}")).get("task", {}).get("index", 0) == 0
    results = {}
    for mode in modes:
        extra = os.environ.get("WORKER_OVERRIDES", "").split()
        config = load_config(TESTS.parent / "configs" / "tiny.yaml", OVERRIDES + extra + [f"train.distribute={mode}"],
                             str(Path(workdir) / mode))
        summary = train(config, verbose=0)
        results[f"{mode}_val_loss"] = summary["best_val_loss"]
        results[f"{mode}_steps"] = summary["total_steps"]
        if chief:
            results[f"{mode}_reloaded_loss"] = reloaded_loss(config)
    if chief:
        np.savez(out, **results)
    print("done", results)


def reloaded_loss(config) -> float:
    """Masked cross-entropy of the reloaded final model on 64 validation pairs."""
    english, italian = load_split(prepared_path(config), "valid")
    inputs, targets = format_dataset(english[:64], italian[:64])
    model = load_model(run_path(config), "model")
    return float(MaskedSparseCrossEntropy()(targets, model(inputs, training=False)))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
