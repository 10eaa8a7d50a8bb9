#!/usr/bin/env python
"""Export a trained run: a TensorFlow SavedModel (strings in, Italian strings out) or a CTranslate2 model."""
import _bootstrap  # noqa: F401

import argparse

from pipeline.cli import run_main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--run", required=True, help="run directory written by scripts/train.py")
    parser.add_argument("--out", required=True, help="directory to write")
    parser.add_argument("--format", choices=("savedmodel", "ctranslate2"), default="savedmodel",
                        help="export format (default: %(default)s)")
    parser.add_argument("--beam", type=int, help="savedmodel: beam size baked into the graph (default: the run's config)")
    parser.add_argument("--quantization", default="float32",
                        help="ctranslate2: weight type, float32, int16 or int8 (or another CTranslate2 type; "
                             "default: %(default)s)")
    parser.add_argument("--model", choices=("best", "model"), default="best", help="ctranslate2: best or final weights")
    args = parser.parse_args()
    if args.format == "savedmodel" and args.quantization != "float32":
        parser.error("--quantization goes with --format ctranslate2")

    if args.format == "ctranslate2":
        from pipeline.ct2 import export_ctranslate2

        out = export_ctranslate2(args.run, args.out, quantization=args.quantization, which=args.model)
        print(f"exported {args.run} to {out} ({args.quantization}); translate with "
              f"scripts/translate.py --engine ctranslate2 --run {out}")
        return 0

    from pipeline.export import export_saved_model

    out = export_saved_model(args.run, args.out, beam=args.beam)
    print(f"exported {args.run} to {out}; serve with tf.saved_model.load('{out}').signatures['serving_default']")
    return 0


if __name__ == "__main__":
    run_main(main)
