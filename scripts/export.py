#!/usr/bin/env python
"""Export a trained run: a TensorFlow SavedModel (source-language strings in, target-language strings out; a
bidirectional run's both ways), a CTranslate2 model, or an Argos Translate package (`.argosmodel`, one way)."""
import _bootstrap  # noqa: F401

import argparse

from pipeline.cli import add_run_arguments, run_main
from pipeline.export import FORMATS


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    add_run_arguments(parser)
    parser.add_argument("--out", required=True, help="directory to write (argos: the directory that receives the "
                                                      ".argosmodel file)")
    parser.add_argument("--format", choices=FORMATS, default="savedmodel",
                        help="export format (default: %(default)s)")
    parser.add_argument("--beam", type=int, help="savedmodel: beam size baked into the graph (default: the run's config)")
    parser.add_argument("--quantization", default="float32",
                        help="ctranslate2, argos: weight type, float32, int16 or int8 (or another CTranslate2 "
                             "type; default: %(default)s)")
    parser.add_argument("--package-version", default="1.0", help="argos: the package's version (default: %(default)s)")
    args = parser.parse_args()
    if args.format == "savedmodel" and args.quantization != "float32":
        parser.error("--quantization goes with --format ctranslate2 or argos")
    if args.format != "argos" and args.package_version != "1.0":
        parser.error("--package-version goes with --format argos")

    if args.format != "savedmodel" and args.beam is not None:
        parser.error("--beam goes with --format savedmodel")

    from pipeline.export import export_run
    from pipeline.rundir import RunDir

    options = {"savedmodel": {"beam": args.beam}, "ctranslate2": {"quantization": args.quantization},
               "argos": {"quantization": args.quantization, "package_version": args.package_version}}[args.format]
    out = export_run(args.run, args.out, args.format, which=args.model, **options)
    vectorizers = RunDir(args.run).load_vectorizers()
    if args.format == "savedmodel":
        from pipeline.export.savedmodel import serving_hint

        how = f"; {serving_hint(out, vectorizers)}"
    elif args.format == "ctranslate2":
        how = f" ({args.quantization}); translate with scripts/translate.py --engine ctranslate2 --run {out}"
    else:
        how = f" ({args.quantization}); install with argostranslate.package.install_from_path('{out}')"
    print(f"exported {args.run} ({' and '.join(d.label for d in vectorizers.directions)}) to {out}{how}")
    return 0


if __name__ == "__main__":
    run_main(main)
