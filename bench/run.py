"""Run every benchmark and print one JSON line per figure (measurements, not pass/fail).

usage: python bench/run.py [--quick] [--run RUN]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--run", help="a trained run directory for the beam-vs-greedy figure (bench_decode --run)")
    args = parser.parse_args()
    runs = [
        ["bench_prepare.py", "--runs", "1" if args.quick else "3"],
        ["bench_train.py", "--rounds", "2" if args.quick else "3"],      # sentence and token batches, XLA
        ["bench_decode.py", "--repeats", "1" if args.quick else "3", *(["--run", args.run] if args.run else [])],
        *([["bench_service.py", "--run", args.run, "--seconds", "10" if args.quick else "30"]] if args.run else []),
        ["bench_document_processes.py", *(["--repeats", "1", "--megabytes", "1", "--small", "10"] if args.quick
                                          else ["--repeats", "3"])],        # documents in processes against threads
    ]
    failed = 0
    for script, *options in runs:
        result = subprocess.run([sys.executable, str(HERE / script), *options], capture_output=True, text=True)
        lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
        print("\n".join(lines), flush=True)
        if result.returncode:
            failed += 1
            print(f'{{"name": "{script}", "error": "exit {result.returncode}"}}', flush=True)
            print(result.stderr[-2000:], file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
