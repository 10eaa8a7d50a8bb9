"""One command that shows what a fresh GPU machine does with this pipeline (`scripts/gpu_check.py`).

Prepare the config's corpora, train for a few minutes, score each corpus's test split, convert the run for
CTranslate2, and print one report: the device, compile time and programs, target tokens/s and matmul
TFLOP/s after compiling, MFU where the device's peak is known, and BLEU/chrF with their sacreBLEU signatures.
It needs no network and no TensorFlow: JAX (or PyTorch) with the packages of the `gpu` extra.
"""
from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any, Iterator

from pipeline.config import Config
from pipeline.io_utils import atomic_write_json
from pipeline.rundir import prepared_path, run_path


def gpu_check(config: Config, minutes: float, test_sentences: int = 500, progress: bool = True) -> dict[str, Any]:
    """Prepare, train for `minutes`, score the test splits (at most `test_sentences` per corpus), convert for
    CTranslate2; the report, also written to `<workdir>/gpu_check.json`."""
    from pipeline.evaluation import score_corpora
    from pipeline.prepare import prepare
    from pipeline.rundir import GPU_CHECK_FILE
    from pipeline.training import format_summary, train
    from pipeline.translate import open_translator

    started = time.perf_counter()
    phases = PhaseClock()
    with phases("prepare"):
        prepared = prepare(config, progress=progress)
    with phases("train"):
        summary = train(config, overwrite=True, verbose=2 if progress else 0)
    print(format_summary(summary))
    with phases("score"):
        scores = score_corpora(open_translator(run_path(config), "best"), prepared_path(config), "test",
                               test_sentences)
    with phases("convert"):
        ct2 = _convert_for_ctranslate2(run_path(config))
    report = {"device": summary.get("device"), "backend": summary["backend"], "minutes": minutes,
              "pairs": prepared.get("pairs_kept"), "split_sizes": prepared.get("split_sizes"),
              **{key: summary.get(key) for key in ("steps", "seconds", "compile_seconds", "compiled_programs",
                                                   "programs_from_cache", "ready_programs_compiled",
                                                   "ready_programs_loaded", "target_tokens_per_s",
                                                   "target_tokens_per_s_after_compiling", "matmul_tflops_per_s",
                                                   "mfu", "best_val_loss")},
              "test": scores, "ctranslate2": ct2, "phase_seconds": phases.seconds,
              "wall_seconds": round(time.perf_counter() - started, 1),
              "run_dir": str(run_path(config))}
    atomic_write_json(Path(config.workdir) / GPU_CHECK_FILE, report)
    return report


class PhaseClock:
    """Wall seconds of each named phase (`with clock("train"): ...`), in the order they ran."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextlib.contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = round(time.perf_counter() - start, 1)


def _convert_for_ctranslate2(run_dir: Path) -> str:
    """The run converted for CTranslate2 (what `translate.py --engine ctranslate2` serves), or why not."""
    try:
        from pipeline.translate import open_translator
        open_translator(run_dir, engine="ctranslate2")
        return "converted"
    except Exception as exc:            # the check reports it; the training and scores above stand
        return f"not converted: {type(exc).__name__}: {exc}"


def format_report(report: dict[str, Any]) -> str:
    """The report as lines for a terminal, the summary line last."""
    mfu = f"{100 * report['mfu']:.1f}%" if report.get("mfu") is not None else "n/a (peak unknown or float32)"
    lines = [f"device: {report['device']} ({report['backend']})",
             f"compiling: {report['compile_seconds']} s; ready programs {report['ready_programs_compiled']} compiled, "
             f"{report['ready_programs_loaded']} loaded; {report['compiled_programs']} compiled in all",
             f"training: {report['steps']:,} steps in {report['seconds']} s; "
             f"{report.get('target_tokens_per_s_after_compiling') or 'n/a'} target tokens/s after compiling, "
             f"{report.get('matmul_tflops_per_s') or 'n/a'} matmul TFLOP/s, MFU {mfu}"]
    for name, r in report["test"].items():
        lines.append(f"test {name}: BLEU {r['bleu']:.2f}, chrF {r['chrf']:.2f} on {r['sentences']:,} sentences "
                     f"(beam {r['beam']}; {r['bleu_signature']}; {r['chrf_signature']})")
    lines.append(f"CTranslate2: {report['ctranslate2']}")
    lines.append("phases: " + ", ".join(f"{name} {seconds} s" for name, seconds in report["phase_seconds"].items()))
    lines.append(f"gpu check done in {report['wall_seconds']} s -> {report['run_dir']} "
                 f"(translate: python scripts/translate.py --run {report['run_dir']} --engine ctranslate2 \"Hello.\")")
    return "\n".join(lines)


