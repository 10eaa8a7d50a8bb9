#!/usr/bin/env python
"""Export a trained run as a TensorFlow SavedModel (strings in, Italian strings out)."""
import _bootstrap  # noqa: F401

import argparse

from pipeline.cli import run_main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--run", required=True, help="run directory written by scripts/train.py")
    parser.add_argument("--out", required=True, help="SavedModel directory to write")
    parser.add_argument("--beam", type=int, help="beam size baked into the graph (default: the run's config)")
    args = parser.parse_args()

    from pipeline.export import export_saved_model

    out = export_saved_model(args.run, args.out, beam=args.beam)
    print(f"exported {args.run} to {out}; serve with tf.saved_model.load('{out}').signatures['serving_default']")
    return 0


if __name__ == "__main__":
    run_main(main)
