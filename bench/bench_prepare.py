"""Prepare on the shared corpus: wall time and peak resident memory, at 1x or at several corpus sizes.

usage: python bench/bench_prepare.py [--runs 3] [--config configs/base.yaml] [--set data.tokenizer=word]
       python bench/bench_prepare.py --scales 1 4 10 [--runs 1]   # scaling: k distinct copies as train.en/train.it
       python bench/bench_prepare.py --mix --config configs/cpu60.yaml   # the config's data.corpora, all of them

With --scales, copy c of the corpus appends " c" to both sides (copy 0 is the corpus itself), so the k x
corpus has k times as many distinct pairs and English sentences; the copies are written as two
line-aligned plain files in a temporary directory. Each prepare runs in a fresh process.
"""
from __future__ import annotations

import argparse
import gzip
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, SHARED_CORPUS, emit, median


def run_once(config: str, inputs: list[Path], workdir: str, overrides: list[str]) -> tuple[float, float, str]:
    """One prepare in a fresh process; returns its wall time (s), peak resident memory (MB) and summary line."""
    with tempfile.TemporaryFile() as output, tempfile.TemporaryFile() as errors:
        started = time.perf_counter()
        child = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "prepare.py"), "--config", config,
                                  *(["--input", *map(str, inputs)] if inputs else []), "--workdir", workdir, "--quiet",
                                  *(f"--set={o}" for o in overrides)], stdout=output, stderr=errors)
        _, status, usage = os.wait4(child.pid, 0)      # this child's own peak memory
        wall = time.perf_counter() - started
        if status:
            errors.seek(0)
            raise SystemExit(f"prepare failed: {errors.read().decode(errors='replace')[-2000:]}")
        output.seek(0)
        summary = output.read().decode(errors="replace").strip().splitlines()[-1]
    return wall, usage.ru_maxrss / 1024, summary


def write_copies(corpus: Path, copies: int, directory: Path) -> tuple[list[Path], int]:
    """`copies` distinct copies of a tab-separated corpus as line-aligned train.en / train.it; returns the paths
    and the number of lines."""
    with gzip.open(corpus, "rb") as handle:
        pairs = [columns[:2] for columns in (line.rstrip(b"\r\n").split(b"\t") for line in handle) if len(columns) >= 2]
    paths = [directory / f"x{copies}.en", directory / f"x{copies}.it"]
    with open(paths[0], "wb") as english, open(paths[1], "wb") as italian:
        for copy in range(copies):
            suffix = b"" if copy == 0 else f" {copy}".encode()
            english.write(b"".join(en + suffix + b"\n" for en, _ in pairs))
            italian.write(b"".join(it + suffix + b"\n" for _, it in pairs))
    return paths, copies * len(pairs)


def measure(config: str, inputs: list[Path], overrides: list[str], runs: int) -> tuple[list[float], list[float], str]:
    """Wall times and peak memories of `runs` prepares, and the last one's summary line."""
    with tempfile.TemporaryDirectory() as workdir:
        results = [run_once(config, inputs, workdir, overrides) for _ in range(runs)]
    return [w for w, _, _ in results], [p for _, p, _ in results], results[-1][2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--config", default=str(ROOT / "configs" / "base.yaml"))
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE", help="config override")
    parser.add_argument("--scales", type=int, nargs="+", metavar="K", help="corpus sizes, in copies of the corpus")
    parser.add_argument("--corpus", type=Path, default=SHARED_CORPUS, help="tab-separated .gz corpus (default: shared)")
    parser.add_argument("--mix", action="store_true", help="prepare the config's data.corpora instead of --corpus")
    args = parser.parse_args()
    label = {"config": Path(args.config).name, "overrides": args.set}
    if args.mix:
        walls, peaks, summary = measure(args.config, [], args.set, args.runs)
        emit("prepare_corpora_wall", round(median(walls), 2), "s", runs=[round(w, 2) for w in walls],
             target="<= 120", summary=summary, **label)
        emit("prepare_corpora_peak_rss", round(median(peaks), 1), "MB", runs=[round(p) for p in peaks],
             target="<= 2560", **label)
        return
    if not args.scales:
        walls, peaks, _ = measure(args.config, [args.corpus], args.set, args.runs)
        emit("prepare_full_corpus_wall", round(median(walls), 2), "s", runs=[round(w, 2) for w in walls],
             target="<= 60", **label)
        emit("prepare_full_corpus_peak_rss", round(median(peaks), 1), "MB", runs=[round(p) for p in peaks],
             target="<= 2560", **label)
        return
    rows = []
    for scale in args.scales:
        with tempfile.TemporaryDirectory() as data:
            inputs, pairs = write_copies(args.corpus, scale, Path(data))
            walls, peaks, summary = measure(args.config, inputs, args.set, args.runs)
        rows.append((scale, pairs, median(walls), median(peaks)))
        emit(f"prepare_x{scale}_wall", round(median(walls), 1), "s", pairs=pairs, runs=[round(w, 1) for w in walls],
             summary=summary, **label)
        emit(f"prepare_x{scale}_peak_rss", round(median(peaks)), "MB", pairs=pairs, runs=[round(p) for p in peaks],
             target="<= 2560 at 10x", **label)
    base_wall = rows[0][2] / rows[0][1]
    print(f"\n| corpus | pairs | wall (s) | s per 100k pairs | peak RSS (MB) | time vs linear from {rows[0][0]}x |")
    print("| --- | --- | --- | --- | --- | --- |")
    for scale, pairs, wall, peak in rows:
        print(f"| {scale}x | {pairs:,} | {wall:.1f} | {1e5 * wall / pairs:.1f} | {peak:,.0f} | "
              f"{wall / (base_wall * pairs):.2f} |")


if __name__ == "__main__":
    main()
