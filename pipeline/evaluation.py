"""Score translations with sacreBLEU: corpus BLEU (13a, cased, detokenised) and chrF, with signatures.

An evaluation set is a list of sources in the run's source language, each with one or more references in its
target language. The test split groups every translation of a source sentence under it (splits are grouped by
English sentence, so a pair held out one way is held out the other way too), so it is scored with multiple
references; line-aligned files give one reference per line.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from pipeline.extras import require
from pipeline.io_utils import atomic_write_json, atomic_write_text, read_text_lines
from pipeline.rundir import RunDir, load_run_config, prepared_beside, prepared_path, split_text_file
from pipeline.shards import corpus_rows
from pipeline.tokenizers import WORD_UNK as UNK, word_tokens

LENGTH_BUCKETS = ((1, 5), (6, 10), (11, 15), (16, 20), (21, None))   # source tokens, inclusive


@dataclass
class EvalSet:
    """Source sentences and, for each, its references (at least one)."""
    name: str
    sources: list[str]
    references: list[list[str]]

    @property
    def pairs(self) -> int:
        return sum(len(r) for r in self.references)


def _sacrebleu():
    metrics = require("sacrebleu.metrics", "eval")
    return metrics.BLEU, metrics.CHRF


def load_split_set(tsv: str | Path, reverse: bool = False) -> EvalSet:
    """A prepared split's `<name>.tsv` (source<TAB>target, in the run's direction), grouped by source sentence in
    first-seen order; `reverse` reads it the other way round (a bidirectional run's other direction)."""
    grouped: dict[str, list[str]] = {}
    for number, line in enumerate(read_text_lines(tsv, "split file"), 1):
        fields = line.split("\t")
        if len(fields) != 2:
            raise ValueError(f"split file {tsv} line {number}: expected 2 tab-separated columns, got {len(fields)}")
        source, reference = fields[::-1] if reverse else fields
        grouped.setdefault(source, []).append(reference)
    if not grouped:
        raise ValueError(f"split file {tsv}: no sentence pairs")
    return EvalSet(Path(tsv).stem, list(grouped), list(grouped.values()))


def load_parallel_files(source: str | Path, reference: str | Path) -> EvalSet:
    """Line-aligned source and reference files, one reference per line."""
    sources = read_text_lines(source, "source file")
    references = read_text_lines(reference, "reference file")
    if len(sources) != len(references):
        raise ValueError(f"line counts differ: source file {source} has {len(sources):,} lines, "
                         f"reference file {reference} has {len(references):,}")
    if not sources:
        raise ValueError(f"source file {source}: empty")
    return EvalSet(Path(source).name, sources, [[r] for r in references])


def prepared_split_file(run_dir: str | Path, split: str, corpus: str | None = None) -> Path:
    """The `<split>.tsv` prepared with a run (`<split>.<corpus>.tsv`: one corpus's part of it), in
    `<workdir>/prepared`, beside `<workdir>/run`."""
    run_dir = Path(run_dir)
    name = split_text_file(split, corpus)
    candidates = [prepared_beside(run_dir) / name]
    if RunDir(run_dir).config_file.is_file():
        candidates.append(prepared_path(load_run_config(run_dir)) / name)
    for path in candidates:
        if path.is_file():
            return path
    raise FileNotFoundError(f"split file {candidates[0]}: not found; run scripts/prepare.py with the run's config, "
                            "or give --src and --ref")


def _reference_streams(references: Sequence[Sequence[str]]) -> list[list[str | None]]:
    """sacreBLEU's layout: stream k holds every sentence's k-th reference (None where it has fewer)."""
    depth = max(len(r) for r in references)
    return [[r[k] if k < len(r) else None for r in references] for k in range(depth)]


def score(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> dict[str, Any]:
    """Corpus BLEU and chrF of `hypotheses` against per-sentence reference lists, with signatures."""
    BLEU, CHRF = _sacrebleu()
    bleu, chrf = BLEU(), CHRF()
    streams = _reference_streams(references)
    b, c = bleu.corpus_score(list(hypotheses), streams), chrf.corpus_score(list(hypotheses), streams)
    return {"bleu": round(b.score, 2), "chrf": round(c.score, 2), "bleu_signature": str(bleu.get_signature()),
            "chrf_signature": str(chrf.get_signature()), "bleu_detail": str(b).split(" = ", 1)[1].split(" (")[0],
            "brevity_penalty": round(b.bp, 4), "length_ratio": round(b.sys_len / max(b.ref_len, 1), 4)}


def bleu_by_length(sources: Sequence[str], hypotheses: Sequence[str],
                   references: Sequence[Sequence[str]]) -> list[dict[str, Any]]:
    """Corpus BLEU per bucket of source length (word-level tokens, whatever the model's tokenizer)."""
    BLEU, _ = _sacrebleu()
    lengths = [len(word_tokens(s)) for s in sources]
    buckets = []
    for low, high in LENGTH_BUCKETS:
        rows = [i for i, n in enumerate(lengths) if n >= low and (high is None or n <= high)]
        label = f"{low}-{high}" if high is not None else f"{low}+"
        if not rows:
            buckets.append({"source_tokens": label, "sentences": 0, "bleu": None})
            continue
        result = BLEU().corpus_score([hypotheses[i] for i in rows],
                                     _reference_streams([references[i] for i in rows]))
        buckets.append({"source_tokens": label, "sentences": len(rows), "bleu": round(result.score, 2)})
    return buckets


def evaluate(translator, evalset: EvalSet, beam: int | None = None, batch_size: int | None = None,
             length_penalty: float | None = None, progress: bool = True) -> tuple[dict[str, Any], list[str]]:
    """Translate `evalset` and score it; returns (report, hypotheses)."""
    decode = translator.config.decode
    beam, alpha, _ = decode.resolve(beam, length_penalty)               # the one owner of the defaults
    started = time.perf_counter()
    hypotheses = translator.translate(evalset.sources, beam=beam, batch_size=batch_size, length_penalty=alpha,
                                      progress=progress)
    seconds = time.perf_counter() - started
    report = {"set": evalset.name, "sentences": len(evalset.sources), "pairs": evalset.pairs,
              "references_per_sentence": round(evalset.pairs / len(evalset.sources), 3),
              "beam": beam, "length_penalty": alpha, "ban_unk": decode.ban_unk,
              **score(hypotheses, evalset.references)}
    if max(len(r) for r in evalset.references) > 1:   # also as the tutorials score: one reference per pair
        flat_hyp = [h for h, refs in zip(hypotheses, evalset.references) for _ in refs]
        single = score(flat_hyp, [[r] for refs in evalset.references for r in refs])
        report["single_reference"] = {k: single[k] for k in ("bleu", "chrf", "bleu_signature", "chrf_signature")}
    report["bleu_by_source_length"] = bleu_by_length(evalset.sources, hypotheses, evalset.references)
    report["unk_output_share"] = round(sum(UNK in h for h in hypotheses) / len(hypotheses), 4)
    report["seconds"] = round(seconds, 2)
    report["sentences_per_second"] = round(len(hypotheses) / max(seconds, 1e-9), 1)
    return report, hypotheses


def split_sets(prepared_dir: str | Path, split: str = "valid") -> dict[str, EvalSet]:
    """Each corpus's part of a prepared held-out split as an EvalSet, by corpus name (one corpus: the split)."""
    prepared_dir = Path(prepared_dir)
    corpora = corpus_rows(prepared_dir, split)
    names = [name for name, start, stop in corpora if stop > start]
    if len(corpora) == 1:
        return {names[0]: load_split_set(prepared_dir / split_text_file(split))} if names else {}
    return {name: load_split_set(prepared_dir / split_text_file(split, name)) for name in names}


def score_corpora(translator, prepared_dir: str | Path, split: str = "valid", max_sentences: int | None = None,
                  beam: int | None = None, progress: bool = False) -> dict[str, dict[str, Any]]:
    """BLEU and chrF of each corpus's part of a prepared split, on its first `max_sentences` source sentences
    (all references of each), at the run's decoding settings unless `beam` is given. The corpora are translated
    together, in one call (one batch plan, whose decoding programs the Keras engine compiles side by side on
    JAX), and each is scored on its own sentences (which share batches with other corpora's: where two tokens'
    scores tie to the last bit, padding can tip them, as it can between any two batchings)."""
    sets = {name: EvalSet(evalset.name, evalset.sources[:max_sentences], evalset.references[:max_sentences])
            if max_sentences else evalset for name, evalset in split_sets(prepared_dir, split).items()}
    beam, alpha, _ = translator.config.decode.resolve(beam, None)
    sources = [source for evalset in sets.values() for source in evalset.sources]
    hypotheses = translator.translate(sources, beam=beam, length_penalty=alpha, progress=progress)
    if len(hypotheses) != len(sources):
        raise ValueError(f"the translator gave {len(hypotheses)} translations for {len(sources)} sentences")
    results, start = {}, 0
    for name, evalset in sets.items():
        scores = score(hypotheses[start:start + len(evalset.sources)], evalset.references)
        start += len(evalset.sources)
        results[name] = {"sentences": len(evalset.sources), "beam": beam,
                         **{k: scores[k] for k in ("bleu", "chrf", "bleu_signature", "chrf_signature", "length_ratio")}}
    return results


def write_report(report: dict[str, Any], hypotheses: Sequence[str], out: str | Path) -> Path:
    """Write the JSON report and, beside it, the hypotheses (one per line); returns the hypotheses path."""
    out = Path(out)
    hyp_path = out.with_name(out.stem + ".hyp.txt")
    atomic_write_text(hyp_path, "".join(h + "\n" for h in hypotheses))
    atomic_write_json(out, {**report, "hypotheses_file": hyp_path.name})
    return hyp_path


def format_report(report: dict[str, Any]) -> str:
    """The one-line summary printed at the end of an evaluation."""
    return (f"{report['set']}: BLEU {report['bleu']:.2f}, chrF {report['chrf']:.2f} on {report['sentences']:,} "
            f"sentences ({report['references_per_sentence']} references each), beam {report['beam']}, "
            f"[UNK] in {100 * report['unk_output_share']:.1f}% of outputs, {report['seconds']:.1f} s "
            f"({report['sentences_per_second']:,} sentences/s)")
