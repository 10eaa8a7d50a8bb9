"""Install our Argos package in a real Argos Translate and compare its translations with our CTranslate2 engine.

Not part of the test suite: argostranslate pulls in torch, stanza and spaCy. Make its virtual environment once,
outside the repository:

    python3 -m venv /tmp/argos-venv && /tmp/argos-venv/bin/pip install argostranslate

then, from the repository root with the project's environment:

    python bench/argos_check.py --run runs/tiny/run --argos-python /tmp/argos-venv/bin/python [--sentences 100]

It exports the run with `pipeline.export.argos.export_argos`, installs the `.argosmodel` with
`argostranslate.package.install_from_path` into a throw-away Argos home, and translates the first N distinct
validation sentences one by one with `argostranslate.translate.translate(text, "en", "it")`, twice: with
`ARGOS_BEAM_SIZE=1` against our greedy output and with Argos's default beam 4 (CTranslate2 length penalty 0.2)
against our beam 4 (GNMT alpha from the run's config), both through `engine="ctranslate2"` (float32); each with
`ARGOS_COMPUTE_TYPE=float32` and with Argos's default `auto` (int8 weights on a CPU with int8 kernels).

Sentence splitting offline: Argos 1.11 splits with MiniSBD by default, which downloads its English model on
first use and fails without the network. With `ARGOS_CHUNK_TYPE=SPACY` it splits with a spaCy pipeline found
in the package's `spacy/` folder, to which it adds spaCy's rule-based `sentencizer`; this script saves a blank
English pipeline (`spacy.blank("en")`, no download) there after installing. Argos also tries to cache spaCy's
`xx_sent_ud_sm` at import, which fails offline and is only logged.

Prints one JSON line per figure and the differing sentences on stderr.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from common import emit  # noqa: E402

ARGOS_WORKER = r"""
import json, sys, zipfile
from pathlib import Path
request = json.load(sys.stdin)
import argostranslate.package as package
package.install_from_path(request["package"])
with zipfile.ZipFile(request["package"]) as archive:
    folder = Path(package.settings.package_data_dir) / archive.namelist()[0].split("/")[0]
import spacy
spacy.blank("en").to_disk(folder / "spacy")        # offline sentence splitting: rule-based sentencizer
import importlib.metadata, argostranslate.translate as translate
translation = translate.get_translation_from_codes("en", "it")
splitter = translation.underlying.sentencizer
out = {"argos_version": importlib.metadata.version("argostranslate"), "splitter": str(splitter),
       "sentences": [len(splitter.split_sentences(s)) for s in request["sentences"]],
       "translations": [translate.translate(s, "en", "it") for s in request["sentences"]]}
print(json.dumps(out))
"""


def argos_translations(argos_python: str, package: Path, sentences: list[str], beam: int | None,
                       compute_type: str | None) -> dict:
    """Run the worker in Argos's environment with a fresh Argos home; None keeps Argos's default (beam 4,
    compute type `auto`, which CTranslate2 resolves to int8 on a CPU that has int8 kernels)."""
    with tempfile.TemporaryDirectory(prefix="argos-home-") as home:
        env = {**os.environ, "HOME": home, "ARGOS_PACKAGES_DIR": str(Path(home) / "packages"),
               "ARGOS_CHUNK_TYPE": "SPACY", "PYTHONPATH": ""}
        if beam is not None:
            env["ARGOS_BEAM_SIZE"] = str(beam)
        if compute_type is not None:
            env["ARGOS_COMPUTE_TYPE"] = compute_type
        result = subprocess.run([argos_python, "-c", ARGOS_WORKER], input=json.dumps(
            {"package": str(package), "sentences": sentences}), capture_output=True, text=True, env=env, timeout=1800)
    if result.returncode:
        sys.exit(f"argos worker failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.splitlines()[-1])


def report(sources: list[str], argos: dict, expected: list[str], beam: int, compute_type: str | None) -> None:
    """Print the differing sentences on stderr and the agreement as one JSON line."""
    name = f"beam{beam}_{compute_type or 'auto'}"
    agree = [a == b for a, b in zip(argos["translations"], expected)]
    for source, a, b, ok in zip(sources, argos["translations"], expected, agree):
        if not ok:
            print(f"[{name}] {source}\n  argos: {a[:200]}\n  ours:  {b[:200]}", file=sys.stderr)
    split = [n > 1 for n in argos["sentences"]]
    unsplit = [ok for ok, several in zip(agree, split) if not several]
    # ours stopped at its length limit (input length + decode.max_extra_length) where Argos went on
    cut_by_our_limit = sum(not ok and a.startswith(b) for a, b, ok in zip(argos["translations"], expected, agree))
    emit(f"argos_agreement_{name}", round(100 * sum(agree) / len(agree), 1), "% exact match",
         sentences=len(agree), argos_version=argos["argos_version"], splitter=argos["splitter"],
         split_into_several=sum(split), agreement_unsplit=round(100 * sum(unsplit) / max(len(unsplit), 1), 1),
         cut_by_our_limit=cut_by_our_limit, ours=f"engine=ctranslate2 beam={beam} float32",
         argos=f"ARGOS_BEAM_SIZE={beam} ARGOS_COMPUTE_TYPE={compute_type or 'auto (default)'}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", required=True, help="a training run with one joint SentencePiece vocabulary")
    parser.add_argument("--argos-python", required=True, help="python of a virtual environment with argostranslate")
    parser.add_argument("--sentences", type=int, default=100, help="distinct validation sentences (default 100)")
    args = parser.parse_args()

    from pipeline.evaluation import load_split_set, prepared_split_file
    from pipeline.export.argos import export_argos
    from pipeline.translate import open_translator

    sources = load_split_set(prepared_split_file(Path(args.run), "valid")).sources[:args.sentences]
    ours = open_translator(args.run, engine="ctranslate2")
    with tempfile.TemporaryDirectory(prefix="argos-package-") as out:
        package = export_argos(args.run, out)
        print(f"exported {package.name}; translating {len(sources)} validation sentences", file=sys.stderr)
        expected_by_beam = {beam: ours.translate(sources, beam=beam) for beam in (1, 4)}
        for beam, compute_type in ((1, "float32"), (4, "float32"), (1, None), (4, None)):
            argos = argos_translations(args.argos_python, package, sources, beam if beam == 1 else None, compute_type)
            report(sources, argos, expected_by_beam[beam], beam, compute_type)
    return 0


if __name__ == "__main__":
    sys.exit(main())
