#!/usr/bin/env python
"""The main job on the bundled sample: prepare -> train the tiny config -> translate examples."""
import _bootstrap  # noqa: F401

from pipeline.cli import config_parser, run_main

EXAMPLES = ["I love you.", "Where is the station?", "Tom is my friend.", "I don't know what to do."]


def main() -> int:
    args = config_parser(__doc__).parse_args()
    from pipeline.config import load_config
    from pipeline.prepare import format_report, prepare

    config = load_config(args.config, args.set, args.workdir)
    print(f"[1/3] prepare: bundled sample -> {config.prepared_dir}")
    report = prepare(config)
    print(format_report(report))
    print("[2/3] train: not available yet (stage 2)")
    print("[3/3] translate: not available yet (stage 3)")
    print(f"demo done: prepared {report['pairs_kept']:,} pairs in {report['seconds']:.1f} s")
    return 0


if __name__ == "__main__":
    run_main(main)
