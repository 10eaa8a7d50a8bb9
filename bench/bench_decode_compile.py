"""Compiling the decoding programs that scoring a config's held-out split per corpus needs (JAX), alternating
in one process:

- `as_they_come`: as scoring did before: each corpus translated on its own, each program compiled when its
  batch first comes, one after another;
- `side_by_side`: as `evaluation.score_corpora` does now: the corpora translated in one call, whose batches'
  programs `KerasEngine.prepare_batches` compiles side by side before decoding.

Translating decodes sentences longest first, `decode.batch_size` a call; each new bucket (rows to a power of
two, source width and cache length to multiples of 8) is one program: about 10 for `gpu.yaml`'s four test
splits at 500 sentences each (what `scripts/gpu_check.py` ends with). The weights are random (compiling does
not read them) and nothing is decoded; JAX's persistent cache is off, and each mode gets a fresh decoder, so
nothing is shared between modes.

usage: KERAS_BACKEND=jax python bench/bench_decode_compile.py --config configs/gpu.yaml --workdir W [--rounds 2]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["NMT_COMPILATION_CACHE"] = "off"
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import emit, median  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/gpu.yaml")
    parser.add_argument("--workdir", help="where the config's data was prepared (default: its workdir)")
    parser.add_argument("--split", default="test")
    parser.add_argument("--sentences", type=int, default=500, help="per corpus, at most (default: %(default)s)")
    parser.add_argument("--beam", type=int, help="default: the config's decode.beam_size")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override one config value (repeatable)")
    args = parser.parse_args()

    import keras
    import numpy as np

    from pipeline.config import load_config
    from pipeline.evaluation import split_sets
    from pipeline.model import build_model
    from pipeline.rundir import VECTORIZERS_FILE, prepared_path
    from pipeline.translate.keras_engine import KerasEngine, longest_first
    from pipeline.vectorizers import load_vectorizers, vocabulary_sizes

    config = load_config(args.config, args.set, args.workdir)
    if config.train.mixed_precision != "none":
        keras.mixed_precision.set_global_policy(config.train.mixed_precision)
    vectorizers = load_vectorizers(prepared_path(config) / VECTORIZERS_FILE)
    model = build_model(config, *vocabulary_sizes(prepared_path(config) / VECTORIZERS_FILE))
    beam, alpha, batch_size = config.decode.resolve(args.beam)
    engine = KerasEngine(model, vectorizers, config)
    corpora = [engine.source_ids([piece for layout in engine.split(evalset.sources[:args.sentences])  # as translate
                                  for piece in layout.to_translate if piece.strip()])
               for evalset in split_sets(prepared_path(config), args.split).values()]

    def plan(ids) -> tuple:                          # (lengths, limits, batches), as translating plans them
        lengths = (ids != 0).sum(1)
        return lengths, engine.step_limits(lengths), longest_first(lengths, batch_size)

    alone, pooled = [plan(ids) for ids in corpora], plan(np.concatenate(corpora))
    print(f"{len(corpora)} corpora, {sum(len(b) for _, _, b in alone)} batches alone, {len(pooled[2])} pooled, "
          f"beam {beam}", flush=True)

    def compile_all(side_by_side: bool) -> tuple[float, int]:
        fresh = KerasEngine(model, vectorizers, config)
        started, programs = time.perf_counter(), 0
        if side_by_side:
            programs += fresh.prepare_batches(pooled[2], *pooled[:2], beams=beam, alpha=alpha)
        else:
            for lengths, limits, batches in alone:
                for rows in batches:
                    programs += fresh.prepare_batches([rows], lengths, limits, beams=beam, alpha=alpha)
        return time.perf_counter() - started, programs

    seconds: dict[str, list[float]] = {"as_they_come": [], "side_by_side": []}
    programs: dict[str, int] = {}
    for round_ in range(args.rounds):
        for mode in (("as_they_come", "side_by_side") if round_ % 2 == 0 else ("side_by_side", "as_they_come")):
            took, programs[mode] = compile_all(mode == "side_by_side")
            seconds[mode].append(round(took, 2))
            print(f"round {round_ + 1}: {mode} {took:.1f} s, {programs[mode]} programs", flush=True)
    slow, fast = median(seconds["as_they_come"]), median(seconds["side_by_side"])
    emit(f"decode_compile_{Path(args.config).stem}", round(fast, 1), "s compiling the scoring's decoding programs "
         "side by side (median)", as_they_come_s=round(slow, 1), speedup=round(slow / fast, 2), runs=seconds,
         programs=programs, beam=beam, sentences_per_corpus=args.sentences, cores=os.cpu_count(),
         device=str(keras.backend.backend()), overrides=args.set)


if __name__ == "__main__":
    main()
