"""Prepare on the full shared corpus: median wall time of N runs and peak resident memory.

usage: python bench/bench_prepare.py [--runs 3] [--config configs/base.yaml]
"""
from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time

from common import ROOT, SHARED_CORPUS, emit, median


def run_once(config: str, workdir: str) -> float:
    """One prepare in a fresh process; returns its wall time in seconds."""
    started = time.perf_counter()
    subprocess.run([sys.executable, str(ROOT / "scripts" / "prepare.py"), "--config", config,
                    "--input", str(SHARED_CORPUS), "--workdir", workdir, "--quiet"],
                   capture_output=True, text=True, check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--config", default=str(ROOT / "configs" / "base.yaml"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        walls = [run_once(args.config, workdir) for _ in range(args.runs)]
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # largest child's peak
    emit("prepare_full_corpus_wall", round(median(walls), 2), "s", runs=[round(w, 2) for w in walls], target="<= 60")
    emit("prepare_full_corpus_peak_rss", round(peak_mb, 1), "MB", target="<= 2560")


if __name__ == "__main__":
    main()
