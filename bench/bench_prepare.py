"""Prepare on the full shared corpus: median wall time of N runs and peak resident memory.

usage: python bench/bench_prepare.py [--runs 3] [--config configs/base.yaml] [--set data.tokenizer=word]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, SHARED_CORPUS, emit, median


def run_once(config: str, workdir: str, overrides: list[str]) -> tuple[float, float]:
    """One prepare in a fresh process; returns its wall time (s) and peak resident memory (MB)."""
    with tempfile.TemporaryFile() as errors:
        started = time.perf_counter()
        child = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "prepare.py"), "--config", config,
                                  "--input", str(SHARED_CORPUS), "--workdir", workdir, "--quiet",
                                  *(f"--set={o}" for o in overrides)], stdout=subprocess.DEVNULL, stderr=errors)
        _, status, usage = os.wait4(child.pid, 0)      # this child's own peak memory
        wall = time.perf_counter() - started
        if status:
            errors.seek(0)
            raise SystemExit(f"prepare failed: {errors.read().decode(errors='replace')[-2000:]}")
    return wall, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--config", default=str(ROOT / "configs" / "base.yaml"))
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE", help="config override")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        runs = [run_once(args.config, workdir, args.set) for _ in range(args.runs)]
    walls, peaks = [w for w, _ in runs], [p for _, p in runs]
    label = {"config": Path(args.config).name, "overrides": args.set}
    emit("prepare_full_corpus_wall", round(median(walls), 2), "s", runs=[round(w, 2) for w in walls],
         target="<= 60", **label)
    emit("prepare_full_corpus_peak_rss", round(median(peaks), 1), "MB", runs=[round(p) for p in peaks],
         target="<= 2560", **label)


if __name__ == "__main__":
    main()
