#!/usr/bin/env python
"""Draw the tutorials' figures for a run as PNG files (needs the 'plots' extra: matplotlib)."""
import _bootstrap  # noqa: F401

import argparse
import sys
from pathlib import Path

from pipeline.cli import add_run_arguments, run_main

EXAMPLES = {"en": ("Tom wants to see the new house.", ["I am a robot.", "Where is the train station?"]),
            "it": ("Tom vuole vedere la casa nuova.", ["Sono un robot.", "Dov'è la stazione?"])}   # by source language


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    add_run_arguments(parser, model=False)
    parser.add_argument("--out", help="directory for the PNGs (default: RUN/plots)")
    parser.add_argument("--sentence", help="a sentence in the run's source language whose cross-attention is drawn "
                                           f"(default: {EXAMPLES['en'][0]!r}, or {EXAMPLES['it'][0]!r} for an "
                                           "Italian -> English run)")
    parser.add_argument("--phrases", nargs=2, metavar="PHRASE",
                        help="two phrases for the positional-embedding figure (default: two in the source language)")
    parser.add_argument("--beam", type=int, default=1, help="beam size for the attention sentence")
    args = parser.parse_args()

    from pipeline import plots
    from pipeline.extras import require
    from pipeline.language import language_name
    from pipeline.rundir import RunDir, check_output_dir
    from pipeline.translate.keras_engine import KerasEngine

    require("matplotlib", "plots")            # fail before loading the model if the extra is missing
    run = RunDir(args.run)
    out = check_output_dir(Path(args.out) if args.out else run.plots_dir, "plot directory")
    translator = KerasEngine.from_run(run.path)
    sentence, phrases = EXAMPLES[translator.direction.source]
    attention = translator.cross_attention(args.sentence or sentence, beam=args.beam)
    written = [
        plots.plot_position_encoding(out / "position_encoding.png",
                                     length=translator.model.target_embedding.sequence_length,
                                     depth=translator.model.d_model),
        plots.plot_positional_embedding_outputs(out / "positional_embedding.png", args.phrases or phrases,
                                                translator.vectorizers),
        plots.plot_training_curves(out / "training_curves.png", run.history_file),
        plots.plot_cross_attention(out / "cross_attention.png", attention.source_tokens, attention.output_tokens,
                                   attention.weights, languages=(language_name(translator.direction.source),
                                                                 language_name(translator.direction.target))),
    ]
    print(f"translation drawn: {attention.translation!r}", file=sys.stderr)
    print(f"wrote {len(written)} figures to {out}: {', '.join(p.name for p in written)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    run_main(main)
