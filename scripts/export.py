#!/usr/bin/env python
"""Export a trained run: a TensorFlow SavedModel (strings in, Italian strings out), a CTranslate2 model,
or an Argos Translate package (`.argosmodel`)."""
import _bootstrap  # noqa: F401

import argparse

from pipeline.cli import run_main
from pipeline.rundir import MODELS


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--run", required=True, help="run directory written by scripts/train.py")
    parser.add_argument("--out", required=True, help="directory to write (argos: the directory that receives the "
                                                      ".argosmodel file)")
    parser.add_argument("--format", choices=("savedmodel", "ctranslate2", "argos"), default="savedmodel",
                        help="export format (default: %(default)s)")
    parser.add_argument("--beam", type=int, help="savedmodel: beam size baked into the graph (default: the run's config)")
    parser.add_argument("--quantization", default="float32",
                        help="ctranslate2, argos: weight type, float32, int16 or int8 (or another CTranslate2 "
                             "type; default: %(default)s)")
    parser.add_argument("--model", choices=MODELS, default="best",
                        help="ctranslate2, argos: best, final or averaged weights (default: %(default)s)")
    parser.add_argument("--package-version", default="1.0", help="argos: the package's version (default: %(default)s)")
    args = parser.parse_args()
    if args.format == "savedmodel" and args.quantization != "float32":
        parser.error("--quantization goes with --format ctranslate2 or argos")
    if args.format != "argos" and args.package_version != "1.0":
        parser.error("--package-version goes with --format argos")

    if args.format == "argos":
        from pipeline.argos import export_argos

        out = export_argos(args.run, args.out, args.package_version, quantization=args.quantization, which=args.model)
        print(f"exported {args.run} to {out} ({args.quantization}); install with "
              f"argostranslate.package.install_from_path('{out}')")
        return 0

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
