"""Translate golden.json's texts with the frozen run on every engine and setting the golden test checks.

    python tests/data/frozen-tiny/translate_all.py OUT.json [--engine keras|ctranslate2] [--jit-compile] [--texts F]

tests/test_golden.py compares the same calls against golden.json byte for byte. golden.json itself was written
before the `translate/` refactor (issue 24) by the code of that time, for the texts on which numerically
different runs agreed (XLA or graph mode, oneDNN on or off; CTranslate2's AVX512, AVX2 and generic kernels):
see README.md beside this file.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

SAMPLING = dict(sample=True, seed=7, temperature=0.8, top_k=20)


def translate_all(run: Path, texts: list[str], engine: str, jit_compile: bool = False) -> dict[str, list]:
    """Every output the golden test checks, by name: greedy, beam 4, 3-best at beam 4 (and seeded sampling)."""
    from pipeline.translate import open_translator

    options = {"jit_compile": jit_compile} if engine == "keras" else {"threads": 2}
    translator = open_translator(run, engine=engine, **options)
    prefix = "keras" if engine == "keras" else "ct2"
    outputs = {f"{prefix}_greedy": translator.translate(texts, beam=1),
               f"{prefix}_beam4": translator.translate(texts, beam=4),
               f"{prefix}_nbest3": translator.n_best(texts, 3, beam=4)}
    if engine == "keras":
        outputs["keras_sample"] = translator.translate(texts, **SAMPLING)
    return outputs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--engine", choices=("keras", "ctranslate2"), default="keras")
    parser.add_argument("--jit-compile", action="store_true")
    parser.add_argument("--texts", help="a JSON list of texts (default: golden.json's)")
    args = parser.parse_args()
    texts = json.loads(Path(args.texts).read_text(encoding="utf-8")) if args.texts else \
        json.loads((HERE / "golden.json").read_text(encoding="utf-8"))["texts"]
    with tempfile.TemporaryDirectory() as scratch:       # the CTranslate2 engine converts the run inside it
        run = Path(scratch) / "run"
        shutil.copytree(HERE / "run", run)
        outputs = translate_all(run, texts, args.engine, args.jit_compile)
    Path(args.out).write_text(json.dumps(outputs, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
