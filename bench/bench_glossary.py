"""Glossary methods on a terminology test set (issue 26): term use, BLEU/chrF, no-match-no-change and speed.

For each method (no glossary, then each `--styles` entry) it translates the set's sentences (`sentences.tsv` from
bench/build_term_sets.py) with the set's `glossary.tsv`, and reports:
- term use: the share of (sentence, term) pairs whose requested Italian occurs in the output (whole words, any case);
- BLEU and chrF against the references (sacreBLEU, with signatures); meaningful on the plain set only;
- no match, no change: `--unmatched` validation sentences in which the glossary finds no term, translated with and
  without it, must be byte-identical;
- speed: greedy sentences/s over the set with a 10,000-entry glossary (the set's terms plus filler) against no
  glossary (medians of 3 passes after a warm-up pass), and the time to load that glossary from a TSV file; then the
  same on `--ordinary` validation sentences as they come, where only some hold a term (their share is reported);
- do-not-translate: `--dnt` validation sentences naming Tom, with Tom replaced by names and brands of which some
  use characters the vocabulary lacks (Ꝏ, ŀ, ß...), each kept verbatim by the glossary: the share reproduced exactly;
- agreement probes: a few sentences whose Italian must agree with a glossary term of another gender ("the red
  car" with car -> automobile), printed with and without the glossary.

usage: python bench/bench_glossary.py --run RUN --set data/terms/plain [--styles auto annotate annotate+replace ...]
"""
from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from common import emit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.io_utils import read_text_lines  # noqa: E402
from pipeline.translate import ENGINES, open_translator  # noqa: E402
from pipeline.glossary import Glossary, find_words  # noqa: E402
from pipeline.rundir import RunDir  # noqa: E402


def method(style: str) -> str | None:
    """`Engine.translate`'s glossary_style for a method name: None for "none", "auto" and an order of methods."""
    return None if style in ("none", "auto") or "+" in style else style


def use_methods(translator, style: str, default: tuple[str, ...]) -> None:
    """Give the translator the order of methods that `style` names ("annotate+placeholder"), else its own."""
    translator.glossary_methods = style.split("+") if "+" in style else default


def term_use(outputs: list[str], terms: list[list[tuple[str, str]]]) -> float:
    pairs = [(out, target) for out, sentence_terms in zip(outputs, terms) for _, target in sentence_terms]
    used = sum(find_words(target, out) is not None for out, target in pairs)
    return used / max(len(pairs), 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", required=True)
    parser.add_argument("--set", required=True, help="a term set directory (sentences.tsv, glossary.tsv)")
    parser.add_argument("--styles", nargs="+", default=["auto", "annotate", "replace", "target", "placeholder"],
                        help="methods: auto is the engine's default (the run's own translation, then for pieces "
                             "that lack a term its methods in turn); A+B+C is the same with the methods A, B, C in "
                             "that order; any other is one method for every piece with a term. The first is used "
                             "for the speed and do-not-translate figures (default: %(default)s)")
    parser.add_argument("--own-terms", action="store_true",
                        help="also run each method with each sentence's own terms as its glossary (STYLE/own): the "
                             "set's one glossary also matches terms whose translation a reference does not use")
    parser.add_argument("--dnt", type=int, default=200, help="sentences for the do-not-translate check")
    parser.add_argument("--engine", default="keras", choices=ENGINES)
    parser.add_argument("--beam", type=int, default=1)
    parser.add_argument("--unmatched", type=int, default=300, help="validation sentences for no-match-no-change")
    parser.add_argument("--ordinary", type=int, default=700,
                        help="validation sentences, in split order, for a second speed figure on ordinary text")
    parser.add_argument("--methods-only", action="store_true",
                        help="only the methods' term use and BLEU/chrF: no speed, no-match or do-not-translate figures")
    args = parser.parse_args()
    import sacrebleu

    term_set = Path(args.set)
    rows = [line.split("\t") for line in read_text_lines(term_set / "sentences.tsv", "term set")]
    sources, references = [r[0] for r in rows], [r[1] for r in rows]
    terms = [[tuple(t.split("=", 1)) for t in r[2].split("|")] for r in rows]
    glossary = Glossary.load(term_set / "glossary.tsv")
    translator = open_translator(args.run, engine=args.engine)
    translator.translate(sources[:32], beam=args.beam)                            # compile before timing

    own = [dict(sentence_terms) for sentence_terms in terms]     # each sentence's own terms only
    default_methods = translator.glossary_methods
    results = {}
    runs = ["none", *args.styles] + ([f"{style}/own" for style in args.styles] if args.own_terms else [])
    for style in runs:
        name, _, scope = style.partition("/")
        use_methods(translator, name, default_methods)
        started = time.perf_counter()
        outputs = translator.translate(sources, beam=args.beam,
                                       glossary=None if name == "none" else own if scope else glossary,
                                       glossary_style=method(name))
        seconds = time.perf_counter() - started
        bleu_metric, chrf_metric = sacrebleu.BLEU(), sacrebleu.CHRF()
        bleu, chrf = bleu_metric.corpus_score(outputs, [references]), chrf_metric.corpus_score(outputs, [references])
        signatures = {"bleu": str(bleu_metric.get_signature()), "chrf": str(chrf_metric.get_signature())}
        results[style] = {"term_use": round(100 * term_use(outputs, terms), 1), "bleu": round(bleu.score, 2),
                          "chrf": round(chrf.score, 2), "sentences_per_s": round(len(sources) / seconds, 1)}
        print(f"{style}: {results[style]}", file=sys.stderr)
        # the set's folder and its parent's: runs/terms-valid/plain and data/terms/plain must not overwrite each other
        hypotheses = RunDir(args.run).eval_dir / (f"{term_set.resolve().parent.name}-{term_set.name}-"
                                                f"{args.engine}-{style.replace('/', '-')}.hyp.txt")
        hypotheses.parent.mkdir(parents=True, exist_ok=True)
        hypotheses.write_text("\n".join(outputs) + "\n", encoding="utf-8")

    if args.methods_only:
        emit("bench_glossary", results[args.styles[0]]["term_use"], "% term use", set=str(term_set), run=args.run,
             engine=args.engine, beam=args.beam, sentences=len(sources), results=results, signatures=signatures)
        return 0
    use_methods(translator, args.styles[0], default_methods)    # the first method for every figure below
    # no match, no change
    from pipeline.rundir import prepared_beside, split_text_file

    valid_file = prepared_beside(Path(args.run).resolve()) / split_text_file("valid")
    valid = read_text_lines(valid_file, "split file") if valid_file.is_file() else []
    unmatched = [line.split("\t")[0] for line in valid if not glossary.find(line.split("\t")[0])][:args.unmatched]
    plain = translator.translate(unmatched, beam=args.beam)
    identical = {style: sum(a == b for a, b in zip(plain, translator.translate(
        unmatched, beam=args.beam, glossary=glossary, glossary_style=method(style)))) for style in args.styles}

    # speed with 10,000 entries, and their load time
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "big.tsv"
        entries = [f"{t.source}\t{t.target}" for t in glossary.terms.values()]
        entries += [f"filler term {i}\ttermine di riempimento {i}" for i in range(10_000 - len(entries))]
        big.write_text("\n".join(entries) + "\n", encoding="utf-8")
        started = time.perf_counter()
        large = Glossary.load(big)
        load_s = time.perf_counter() - started
    speed = {}                      # the median of 3 timed passes each, after one untimed pass (compiles new shapes)
    passes: list[tuple[int, float]] = []            # (sentences, seconds) of each decoding call of the last pass
    decode = translator.translate_sentences

    def timed_decode(sentences, **options):
        started = time.perf_counter()
        out = decode(sentences, **options)
        passes.append((len(sentences), time.perf_counter() - started))
        return out

    translator.translate_sentences = timed_decode
    ordinary = [line.split("\t")[0] for line in valid[:args.ordinary]]     # the validation split as it comes
    with_term = sum(bool(large.find(s)) for s in ordinary) / max(len(ordinary), 1)
    for workload, texts in (("set", sources), ("ordinary", ordinary)):
        for name, use in (("none", None), ("10k", large)):
            rates = []
            for _ in range(4):
                passes.clear()
                started = time.perf_counter()
                translator.translate(texts, beam=1, glossary=use, glossary_style=method(args.styles[0]))
                rates.append(len(texts) / (time.perf_counter() - started))
            speed[workload, name] = statistics.median(rates[1:])
            print(f"speed, {workload} sentences, {name}: {speed[workload, name]:.1f} sentences/s; decoding calls "
                  "(sentences, s): " + ", ".join(f"({n}, {t:.1f})" for n, t in passes), file=sys.stderr)
    del translator.translate_sentences
    ratio = {workload: speed[workload, "10k"] / speed[workload, "none"] for workload in ("set", "ordinary")}
    # do-not-translate names, some outside the vocabulary
    names = ["Ꝏꝏ-Tool", "Zoë", "Łukasz", "Groß-Gerau", "iPhone", "Kubernetes", "Ŀlorenç", "Ærøskøbing", "Tōkyō-kun",
             "ReLU6"]
    tom = [line.split("\t")[0] for line in valid if find_words("Tom", line.split("\t")[0])][:args.dnt]
    dnt_sources = [re.sub(r"\bTom\b", names[i % len(names)], s) for i, s in enumerate(tom)]
    dnt_outputs = translator.translate(dnt_sources, beam=args.beam, glossary={n: n for n in names},
                                       glossary_style=method(args.styles[0]))
    dnt_kept = sum(names[i % len(names)] in out for i, out in enumerate(dnt_outputs)) / max(len(dnt_sources), 1)
    print(f"do-not-translate: {100 * dnt_kept:.1f}% of {len(dnt_sources)} kept verbatim", file=sys.stderr)

    probes = ["The red car is mine.", "I saw the car yesterday.", "These cars are new.", "My account is closed.",
              "The old account was blocked."]
    probe_glossary = {"car": "automobile", "account": "conto"}
    probe_out = translator.translate(probes, beam=args.beam, glossary=probe_glossary,
                                     glossary_style=method(args.styles[0]))
    for source, plain_out, out in zip(probes, translator.translate(probes, beam=args.beam), probe_out):
        print(f"probe: {source} | without: {plain_out} | with: {out}", file=sys.stderr)

    emit("bench_glossary", results[args.styles[0]]["term_use"], "% term use", set=str(term_set), run=args.run,
         engine=args.engine, beam=args.beam, sentences=len(sources), results=results, signatures=signatures,
         unmatched=len(unmatched), identical_without_match=identical, load_10k_s=round(load_s, 3),
         greedy_speed_ratio_10k=round(ratio["set"], 3), greedy_speed_ratio_10k_ordinary=round(ratio["ordinary"], 3),
         ordinary_sentences=len(ordinary), ordinary_with_term=round(100 * with_term, 1),
         dnt_verbatim=round(100 * dnt_kept, 1),
         dnt_sentences=len(dnt_sources), probes=dict(zip(probes, probe_out)))
    print(f"glossary: {len(sources)} sentences; " + "; ".join(f"{k} {v}" for k, v in results.items())
          + f"; unmatched identical {identical} of {len(unmatched)}; 10k load {load_s:.2f} s, greedy speed ratio "
          f"{ratio['set']:.2f} on the set, {ratio['ordinary']:.2f} on {len(ordinary)} validation sentences "
          f"({100 * with_term:.1f}% with a term)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
