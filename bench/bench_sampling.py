"""Time sampled decoding per cut (temperature alone, top-k, top-k with top-p, top-p alone) on a trained run.

    python bench/bench_sampling.py --run runs/tiny/run [--sentences 200] [--steps 12] [--repeats 3]

The run's validation sentences (its workdir's prepared split) go through the Keras engine's compiled decoder
(`KerasEngine.decoder`, XLA on TensorFlow, `jax.jit` on JAX; set KERAS_BACKEND) in one batch, `--steps` tokens each;
each cut is compiled by a first call, then timed `--repeats` times. Prints one JSON line per cut: the median in ms.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from common import emit, median

CUTS = {"temperature 1.5": dict(temperature=1.5), "top-k 20": dict(top_k=20),
        "top-k 50, top-p 0.9": dict(temperature=0.8, top_k=50, top_p=0.9), "top-p 0.9": dict(top_p=0.9)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, required=True, help="a trained run directory")
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    import keras

    from pipeline.datasets import load_split
    from pipeline.rundir import prepared_path
    from pipeline.translate.keras_engine import KerasEngine

    engine = KerasEngine.from_run(args.run)
    source = np.asarray(load_split(prepared_path(engine.config), "valid")[0])[:args.sentences]
    limits = np.full(len(source), args.steps)
    for name, cut in CUTS.items():
        engine.decoder(source, limits, sample=True, seed=7, **cut)                # compiles
        times = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            engine.decoder(source, limits, sample=True, seed=7, **cut)
            times.append((time.perf_counter() - started) * 1000.0)
        emit(f"sampling, {name}", round(median(times), 1), "ms", backend=keras.backend.backend(),
             sentences=len(source), steps=args.steps, runs=[round(t, 1) for t in times])


if __name__ == "__main__":
    main()
