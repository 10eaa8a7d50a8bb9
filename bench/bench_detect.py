"""Language detection (`pipeline.language`, what `/detect` and `source: "auto"` use): accuracy on both sides of a
prepared test split, for short texts (at most 3 words) and longer ones, and on texts in neither language.

usage: python bench/bench_detect.py [--run runs/tiny/run | --tsv FILE] [--limit 2000]
"""
from __future__ import annotations

import argparse
import sys
import time

from common import ROOT, emit

from pipeline.evaluation import load_split_set  # noqa: E402
from pipeline.language import LanguageDetector  # noqa: E402
from pipeline.rundir import prepared_beside, split_text_file  # noqa: E402

OTHER = ["Guten Morgen, wie geht es dir heute?", "Où est la gare, s'il vous plaît ?", "¿Dónde está la estación?",
         "Onde fica a estação de comboios?", "12345 67890", "https://example.org/a/b"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", default=str(ROOT / "runs/tiny/run"), help="its prepared test split is read")
    parser.add_argument("--tsv", help="a prepared split file instead (english<TAB>italian)")
    parser.add_argument("--limit", type=int, default=2000)
    args = parser.parse_args()
    args.tsv = args.tsv or str(prepared_beside(args.run) / split_text_file("test"))
    evalset = load_split_set(args.tsv)
    english = evalset.sources[:args.limit]
    italian = [references[0] for references in evalset.references][:args.limit]
    detector = LanguageDetector(("en", "it"), preload=True)
    results = {}
    started = time.perf_counter()
    for code, texts in (("en", english), ("it", italian)):
        for size, chosen in (("short", [t for t in texts if len(t.split()) <= 3]),
                             ("long", [t for t in texts if len(t.split()) > 3])):
            right = sum(detector.best(text)[0] == code for text in chosen)
            results[f"{code}_{size}"] = {"texts": len(chosen), "accuracy_pct": round(100.0 * right / max(len(chosen), 1), 1)}
    seconds = time.perf_counter() - started
    others = [max(confidence for _, confidence in detector.detect(text)) for text in OTHER]
    emit("detect_accuracy", results["it_short"]["accuracy_pct"], "% (Italian, <= 3 words)", tsv=args.tsv,
         results=results, other_languages_max_confidence=others,
         ms_per_text=round(1000 * seconds / (len(english) + len(italian)), 3))
    for key, value in results.items():
        print(f"{key}: {value['accuracy_pct']}% of {value['texts']}", file=sys.stderr)
    print(f"texts in other languages: highest confidence for en/it {others}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
