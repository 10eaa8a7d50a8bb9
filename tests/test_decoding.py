import subprocess
import sys
import warnings

import numpy as np
import pytest

from pipeline.datasets import load_split
from pipeline.decoding import full_recompute_greedy
from pipeline.translator import RunDirectoryError, Translator
from pipeline.vectorizers import VectorizerFileError

from conftest import ROOT

SENTENCES = ["I love you.", "Where is the station?", "Tom is my friend.", "I don't know what to do.",
             "It's raining.", "We have to go now, because the last train leaves at ten."]


@pytest.fixture(scope="module")
def translator(trained_tiny):
    return Translator.from_run(trained_tiny.run_dir)


def test_cached_greedy_equals_full_recompute_on_200_validation_sentences(translator, trained_tiny):
    source, _ = load_split(trained_tiny.prepared_dir, "valid")
    source = source[:200]
    steps = 12
    slow = full_recompute_greedy(translator.model, source, translator.start_id, translator.end_id, steps,
                                 translator.banned_id)
    fast = translator._decode(source, np.full(len(source), steps), 1, 0.0)
    assert slow.shape[0] == 200
    assert np.array_equal(fast[:, :steps], slow)
    assert (fast[:, steps:] == 0).all()


def test_beam_one_equals_greedy_and_beam_four_decodes(translator):
    greedy = translator.translate(SENTENCES, beam=1)
    assert translator.translate(SENTENCES, beam=1, length_penalty=0.6) == greedy
    beam = translator.translate(SENTENCES, beam=4)
    assert len(beam) == len(SENTENCES) and all(isinstance(s, str) and s for s in beam)
    assert not any(marker in s for s in greedy + beam for marker in ("[start]", "[end]"))


def test_unk_is_never_generated_unless_allowed(trained_tiny):
    from pipeline.training import load_model
    from pipeline.translator import load_run_config
    from pipeline.vectorizers import load_vectorizers
    model = load_model(trained_tiny.run_dir)
    unk = 1
    bias = np.array(model.output_bias)
    bias[unk] = 100.0                       # the model now prefers [UNK] everywhere
    model.output_bias.assign(bias)
    vectorizers = load_vectorizers(trained_tiny.run_dir / "vectorizers.pkl")
    config = load_run_config(trained_tiny.run_dir)
    assert vectorizers.italian_vocabulary[unk] == "[UNK]"
    banned = Translator(model, vectorizers, config)
    for beam in (1, 3):
        assert not any("[UNK]" in s for s in banned.translate(SENTENCES, beam=beam)), beam
    config.decode.ban_unk = False
    allowed = Translator(model, vectorizers, config).translate(SENTENCES, beam=1)
    assert all(s.startswith("[UNK]") for s in allowed), allowed


@pytest.mark.parametrize("beam", [1, 4])
def test_batch_gives_the_same_translation_as_alone(translator, beam):
    together = translator.translate(SENTENCES, beam=beam, batch_size=4)
    alone = [translator.translate([s], beam=beam)[0] for s in SENTENCES]
    assert together == alone


def test_bad_inputs(translator):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = translator.translate(["", "   ", "Zyxwv qwrtp blorf?", "word " * 40])
    assert out[:2] == ["", ""] and isinstance(out[2], str) and isinstance(out[3], str)
    messages = [str(w.message) for w in caught if "truncated" in str(w.message)]
    assert messages == ["1 input sentence(s) longer than the model's maximum of 16 tokens were truncated"]
    assert translator.translate([]) == []
    with pytest.raises(ValueError, match="beam must be >= 1, got 0"):
        translator.translate(["Hi."], beam=0)


@pytest.mark.parametrize("damage, message", [
    (lambda run: (run / "vectorizers.pkl").unlink(), "vectorizer file {run}/vectorizers.pkl: not found"),
    (lambda run: (run / "vectorizers.pkl").write_bytes(b"\x80\x04garbage"), "vectorizer file {run}/vectorizers.pkl: corrupt"),
    (lambda run: (run / "best.keras").write_bytes(b"not a zip"), "model file {run}/best.keras: cannot be loaded"),
    (lambda run: (run / "best.keras").unlink(), "model file {run}/best.keras: not found"),
    (lambda run: (run / "config.yaml").write_text("model: [\n"), "run file {run}/config.yaml: unreadable"),
])
def test_damaged_run_directory_names_the_file(trained_tiny, tmp_path, damage, message):
    import shutil
    run = tmp_path / "run"
    shutil.copytree(trained_tiny.run_dir, run)
    damage(run)
    with pytest.raises((RunDirectoryError, VectorizerFileError, ValueError, FileNotFoundError)) as info:
        Translator.from_run(run)
    assert message.format(run=run) in str(info.value)


def translate_cli(*args, stdin=None):
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "translate.py"), *args], input=stdin,
                          capture_output=True, text=True, timeout=300)


def test_cli_arguments_files_and_stdin(trained_tiny, translator, tmp_path):
    run = str(trained_tiny.run_dir)
    expected = translator.translate(SENTENCES[:2], beam=2)
    result = translate_cli("--run", run, "--beam", "2", *SENTENCES[:2])
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == expected
    source = tmp_path / "in.txt"
    source.write_text("\n".join(SENTENCES[:2]) + "\n\n", encoding="utf-8")
    result = translate_cli("--run", run, "--beam", "2", "--input", str(source), "--output", str(tmp_path / "out.txt"))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out.txt").read_text(encoding="utf-8").splitlines() == expected + [""]
    result = translate_cli("--run", run, "--beam", "2", stdin="\n".join(SENTENCES[:2]) + "\n")
    assert result.stdout.splitlines() == expected


def test_cli_rejects_non_utf8_input_naming_the_line(trained_tiny, tmp_path):
    source = tmp_path / "in.txt"
    source.write_bytes(b"Hello.\nBad \xff line\n")
    result = translate_cli("--run", str(trained_tiny.run_dir), "--input", str(source))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == f"error: input file {source} line 2: not valid UTF-8"


def test_package_exposes_the_python_api(trained_tiny):
    import pipeline
    assert pipeline.Translator is Translator
    assert pipeline.Translator.from_run(trained_tiny.run_dir).translate([""]) == [""]
