import json
import subprocess
import sys

import pytest

from pipeline.export.savedmodel import export_saved_model
from pipeline.rundir import prepared_path, run_path
from pipeline.translate.keras_engine import KerasEngine

from conftest import ROOT

SENTENCES = ["I love you.", "Where is the station?", "", "Tom's dog is here, isn't it?", "It's raining."]
AWKWARD = [
    "\"I'm here,\" he said. 'Are you?'", "Wait... what…?", "It costs $3.50, or €4,99 at 10:30 p.m.",
    "Call 555-0199 before 7:45.", "See https://example.org/path?q=1&r=2 now.", "Write to tom.jackson@example.com!",
    "I love pizza 🍕😀👍🏽.", "Привет, как дела?", "Naïve café in Zürich",
    "The inter\u00adnational commit\u200btee\u2060 met.", " ".join(["word"] * 300), "   \t  ",
    "a\x00b", "Tom\u00a0and  Mary\u2003left.",
]

SERVE = """
import json, sys
if sys.argv[3] == "tf_text":
    import tensorflow_text  # registers the SentencePiece ops
import tensorflow as tf
serve = tf.saved_model.load(sys.argv[1]).signatures["serving_default"]
texts = json.loads(open(sys.argv[2], encoding="utf-8").read())
(name,) = serve.structured_input_signature[1]
(output,) = serve.structured_outputs
out = serve(**{name: tf.constant(texts)})[output].numpy()
print(json.dumps({"names": [name, output], "out": [s.decode("utf-8") for s in out],
                  "pipeline": "pipeline" in sys.modules}))
"""


def serve_signature(saved_model, texts, tmp_path, tf_text=False) -> tuple[tuple[str, str], list[str]]:
    """(input name, output name) of the SavedModel's signature and its translations, from TensorFlow alone
    (this package never imported)."""
    inputs = tmp_path / "inputs.json"
    inputs.write_text(json.dumps(texts), encoding="utf-8")
    result = subprocess.run([sys.executable, "-c", SERVE, str(saved_model), str(inputs),
                             "tf_text" if tf_text else "plain"], capture_output=True, text=True, timeout=300,
                            cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    served = json.loads(result.stdout.strip().splitlines()[-1])
    assert served["pipeline"] is False
    return tuple(served["names"]), served["out"]


def serve(saved_model, texts, tmp_path, tf_text=False):
    """The translations of an English -> Italian SavedModel (`english` in, `italian` out)."""
    names, out = serve_signature(saved_model, texts, tmp_path, tf_text)
    assert names == ("english", "italian")
    return out


def test_word_level_saved_model_needs_only_tensorflow(untrained_tiny_word, tmp_path):
    for beam in (1, 3):
        out = export_saved_model(run_path(untrained_tiny_word), tmp_path / f"sm{beam}", beam=beam)
        expected = KerasEngine.from_run(run_path(untrained_tiny_word)).translate(SENTENCES, beam=beam)
        assert serve(out, SENTENCES, tmp_path) == expected
        assert expected[2] == ""


def validation_sentences(config, n):
    lines = (prepared_path(config) / "valid.tsv").read_text(encoding="utf-8").splitlines()
    return list(dict.fromkeys(line.split("\t")[0] for line in lines))[:n]


def test_sentencepiece_saved_model_equals_the_python_api(trained_tiny_sp, tmp_path):
    """200 validation sentences and awkward inputs: the graph's tokenizer is the Python one."""
    texts = validation_sentences(trained_tiny_sp, 200) + AWKWARD
    assert len(texts) == 200 + len(AWKWARD)
    out = export_saved_model(run_path(trained_tiny_sp), tmp_path / "sm", beam=2)
    with pytest.warns(UserWarning, match="truncated"):
        expected = KerasEngine.from_run(run_path(trained_tiny_sp)).translate_sentences(texts, beam=2)
    served = serve(out, texts, tmp_path, tf_text=True)
    mismatches = [(t, s, e) for t, s, e in zip(texts, served, expected) if s != e]
    assert not mismatches, mismatches[:5]
    assert expected[-3] == "" and all(expected[:200])           # whitespace only -> empty, the rest translated


BLOCKED = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "tensorflow_text":
            raise ModuleNotFoundError("No module named 'tensorflow_text' (blocked for this test)")
sys.meta_path.insert(0, Block())
sys.path.insert(0, sys.argv[2])
from pipeline.export.savedmodel import load_saved_model
try:
    load_saved_model(sys.argv[1])
except ValueError as exc:
    print("ERROR", exc)
"""


def test_joint_vocabulary_export_and_loading_it_without_tensorflow_text(trained_tiny, tmp_path):
    out = export_saved_model(run_path(trained_tiny), tmp_path / "sm", beam=1)
    texts = ["I love you.", "Где? 😀", ""]
    assert serve(out, texts, tmp_path, tf_text=True) == KerasEngine.from_run(run_path(trained_tiny)).translate(texts, beam=1)
    result = subprocess.run([sys.executable, "-c", BLOCKED, str(out), str(ROOT)], capture_output=True, text=True,
                            timeout=300)
    assert f"ERROR SavedModel {out}: uses SentencePiece ops; `import tensorflow_text` before loading it" \
        in result.stdout, result.stderr[-2000:]
