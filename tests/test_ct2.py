"""CTranslate2 export: parity with our decoder, the engine switch, the directory alone, one-line errors."""
import json
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pytest
import yaml

pytest.importorskip("ctranslate2")

from pipeline.rundir import prepared_path, run_path
from pipeline.translate import open_translator
from pipeline.export.ctranslate2 import CTranslate2ExportError, export_ctranslate2, transformer_spec
from pipeline.translate.ct2_engine import CTranslate2Engine
from pipeline.datasets import load_split
from pipeline.evaluation import evaluate, load_split_set
from pipeline.extras import MissingExtra
from pipeline.translate.keras_engine import KerasEngine

from conftest import ROOT

SENTENCES = ["I love you.", "Where is the station?", "Tom is my friend.", "I don't know what to do.",
             "It's raining.", "We have to go now, because the last train leaves at ten."]
SCRIPTS = str(ROOT / "scripts")
TRANSLATE = str(ROOT / "scripts" / "translate.py")
EVALUATE = str(ROOT / "scripts" / "evaluate.py")


@pytest.fixture(scope="module")
def valid_sources(trained_tiny):
    return load_split_set(prepared_path(trained_tiny) / "valid.tsv").sources[:200]


def greedy_ids(tiny_engine, tiny_ct2_engine, source):
    """Both engines' greedy output ids for (n, src) source ids, with each sentence's own length limit, each
    output ending in [end] (ours forces it at the limit; the CTranslate2 engine adds it where CTranslate2 cuts)."""
    lengths = (source != 0).sum(1)
    limits = tiny_engine.step_limits(lengths)
    source = source[:, :lengths.max()]
    end = tiny_engine.end_id
    outputs = []
    for engine in (tiny_engine, tiny_ct2_engine):
        ids = [[int(i) for i in row] for row in engine.translate_ids(source, limits, 1, 0.0)]
        outputs.append([row[:row.index(end) + 1] for row in ids])
    return outputs


def test_greedy_equals_our_decoder_token_for_token_on_200_validation_sentences(tiny_engine, tiny_ct2_engine, trained_tiny):
    source, _ = load_split(prepared_path(trained_tiny), "valid")
    expected, got = greedy_ids(tiny_engine, tiny_ct2_engine, source[:200])
    assert len(expected) == 200
    assert got == expected


ARCHITECTURES = {
    "word, pre-LN, learned positions, untied, unscaled": ("prepared_tiny_word", [
        "data.tokenizer=word", "data.joint_vocab_size=0", "model.norm_first=true", "model.positional=learned",
        "model.tie_embeddings=false", "model.scale_embeddings=false"]),
    "joint SentencePiece, post-LN, one shared embedding": ("prepared_tiny", [
        "model.norm_first=false", "model.share_embeddings=true"]),
}


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_other_vocabularies_and_architecture_switches_convert_exactly(architecture, request, tmp_path):
    """The switches the trained tiny run (joint SentencePiece, pre-LN, sinusoidal, tied, scaled) leaves
    out, on freshly initialised models (weights scaled up, so that argmaxes are clear)."""
    from conftest import SMALL_MODEL, random_weights_run
    from pipeline.config import load_config
    from pipeline.vectorizers import load_vectorizers

    fixture, overrides = ARCHITECTURES[architecture]
    prepared, _ = request.getfixturevalue(fixture)
    config = load_config(ROOT / "configs" / "tiny.yaml", [*SMALL_MODEL, *overrides], str(tmp_path))
    run = run_path(config)
    random_weights_run(config, prepared_path(prepared))
    vectorizers = load_vectorizers(run / "vectorizers.pkl")
    out = export_ctranslate2(run, tmp_path / "ct2")
    if vectorizers.italian.kind == "word":
        settings = json.loads((out / "config.json").read_text())
        assert (settings["unk_token"], settings["bos_token"], settings["eos_token"],
                settings["decoder_start_token"]) == ("[UNK]", "[start]", "[end]", "[start]")
        assert json.loads((out / "source_vocabulary.json").read_text()) == vectorizers.english.vocabulary
        assert json.loads((out / "target_vocabulary.json").read_text()) == vectorizers.italian.vocabulary
        assert vectorizers.italian.vocabulary[:2] == ["", "[UNK]"]
    source, _ = load_split(prepared_path(prepared), "valid")
    expected, got = greedy_ids(KerasEngine.from_run(run), CTranslate2Engine(out), source[:100])
    assert got == expected


@pytest.mark.parametrize("alpha", [0.0, 0.6])
def test_beam_four_agrees_on_at_least_95_percent(tiny_engine, tiny_ct2_engine, valid_sources, alpha):
    ours = tiny_engine.translate(valid_sources, beam=4, length_penalty=alpha)
    theirs = tiny_ct2_engine.translate(valid_sources, beam=4, length_penalty=alpha)
    agreement = np.mean([a == b for a, b in zip(ours, theirs)])
    assert agreement >= 0.95, agreement


def test_translate_matches_keras_on_edge_inputs_and_warns_the_same(tiny_engine, tiny_ct2_engine):
    inputs = ["", "   ", "Zyxwv qwrtp blorf?", "word " * 40, " ".join(SENTENCES) + "\n\n...", *SENTENCES]
    caught = {}
    for name, translator in (("keras", tiny_engine), ("ct2", tiny_ct2_engine)):
        with warnings.catch_warnings(record=True) as records:
            warnings.simplefilter("always")
            caught[name] = (translator.translate(inputs, beam=1), translator.translate_sentences(inputs[:4], beam=1),
                            [str(w.message) for w in records if "truncated" in str(w.message)])
    assert caught["ct2"] == caught["keras"]
    out, sentence_level, messages = caught["ct2"]
    assert out[:2] == ["", ""] and all(out[2:]) and out[4] == " ".join(out[5:]) + "\n\n..."
    assert messages == [f"1 input sentence(s) longer than the model's maximum of {tiny_ct2_engine.max_input_length} tokens "
                        "were truncated"]                   # translate_sentences truncates; translate cuts
    assert tiny_ct2_engine.translate([]) == []
    with pytest.raises(ValueError, match="need engine 'keras'"):
        tiny_ct2_engine.translate(["Hi."], sample=True)
    assert tiny_ct2_engine.translate(SENTENCES, beam=1, max_length=3) == tiny_engine.translate(SENTENCES, beam=1,
                                                                                      max_length=3)
    with pytest.raises(ValueError, match="beam must be >= 1, got 0"):
        tiny_ct2_engine.translate(["Hi."], beam=0)


@pytest.mark.parametrize("beam", [1, 4])
def test_batch_gives_the_same_translation_as_alone(tiny_ct2_engine, valid_sources, beam):
    sentences = valid_sources[:40]
    together = tiny_ct2_engine.translate(sentences, beam=beam, batch_size=16)
    alone = [tiny_ct2_engine.translate([s], beam=beam)[0] for s in sentences]
    assert together == alone


def test_unk_is_never_generated_unless_allowed(trained_tiny, tmp_path):
    import keras

    run = tmp_path / "run"
    shutil.copytree(run_path(trained_tiny), run, ignore=shutil.ignore_patterns(".*", "checkpoint", "logs", "ctranslate2*"))
    model = keras.saving.load_model(run / "best.keras", compile=False)
    bias = np.array(model.output_bias)
    bias[1] = 100.0                                    # the model now prefers [UNK] everywhere
    model.output_bias.assign(bias)
    model.save(run / "best.keras")
    out = export_ctranslate2(run, tmp_path / "ct2")
    banned = CTranslate2Engine(out)
    for beam in (1, 3):
        assert not any("[UNK]" in s for s in banned.translate(SENTENCES, beam=beam)), beam
    config = yaml.safe_load((out / "config.yaml").read_text())
    config["decode"]["ban_unk"] = False
    (out / "config.yaml").write_text(yaml.safe_dump(config))
    allowed = CTranslate2Engine(out).translate(SENTENCES, beam=1)
    assert all(s.startswith("[UNK]") for s in allowed), allowed


def test_export_directory_holds_vocabularies_and_tokenizer_and_translates_alone(tiny_ct2_export, tiny_ct2_engine, tmp_path,
                                                                                 tiny_engine):
    """The tiny run has one SentencePiece vocabulary for both sides: one vocabulary file, one model file."""
    vectorizers = tiny_engine.vectorizers
    assert vectorizers.joint and vectorizers.italian.kind == "sentencepiece"
    assert {p.name for p in tiny_ct2_export.iterdir()} == {"model.bin", "config.json", "shared_vocabulary.json",
                                                     "vectorizers.pkl", "config.yaml", "pipeline.json",
                                                     "sentencepiece.model"}
    assert json.loads((tiny_ct2_export / "shared_vocabulary.json").read_text()) == tiny_engine.vocabulary
    assert (tiny_ct2_export / "sentencepiece.model").read_bytes() == vectorizers.italian.model_proto
    config = json.loads((tiny_ct2_export / "config.json").read_text())
    assert (config["unk_token"], config["bos_token"], config["eos_token"], config["decoder_start_token"]) == \
        ("<unk>", "<s>", "</s>", "<s>")
    assert config["layer_norm_epsilon"] == 1e-6
    moved = tmp_path / "elsewhere"
    shutil.copytree(tiny_ct2_export, moved)
    assert CTranslate2Engine.from_run(moved).translate(SENTENCES, beam=4) == tiny_ct2_engine.translate(SENTENCES, beam=4)


def test_quantized_exports_translate_and_score_like_the_float_one(trained_tiny, tmp_path, tiny_ct2_engine):
    """Quantized weights give the float model's probabilities, nearly: each token of its greedy translations scored
    by both. (Comparing the translations themselves is no test on the tiny run: its near-tied outputs, "non non
    non ...", flip on any rounding, and int16 once matched 2 of 6.)"""
    english = tiny_ct2_engine.vectorizers.english
    sources = [[english.vocabulary[i] for i in english.token_ids(s)] for s in SENTENCES]
    # bounded as the engine bounds it: a looping output must stay within the model's position table
    targets = [result.hypotheses[0] for result in
               tiny_ct2_engine.translator.translate_batch(sources, beam_size=1, max_decoding_length=20)]
    float_scores = [np.array(r.log_probs) for r in tiny_ct2_engine.translator.score_batch(sources, targets)]
    # mean |log p| gap per token: 0.09 nats for int16 and int8 alike on the tiny run (tokens average 2.5 nats:
    # CTranslate2 quantizes activations too); a broken conversion is off by whole nats
    for quantization in ("int16", "int8"):
        out = export_ctranslate2(run_path(trained_tiny), tmp_path / quantization, quantization=quantization)
        assert json.loads((out / "pipeline.json").read_text())["quantization"] == quantization
        engine = CTranslate2Engine(out)
        translated = engine.translate(SENTENCES, beam=1)
        assert len(translated) == len(SENTENCES) and all(translated)
        scores = [np.array(r.log_probs) for r in engine.translator.score_batch(sources, targets)]
        gap = np.mean(np.abs(np.concatenate(scores) - np.concatenate(float_scores)))
        assert gap < 0.3, (quantization, gap)


def test_engine_switch_python_api_and_evaluate(trained_tiny, tiny_engine, valid_sources):
    translator = open_translator(run_path(trained_tiny), engine="ctranslate2")
    assert isinstance(translator, CTranslate2Engine)
    assert translator.model_dir == run_path(trained_tiny) / "ctranslate2"
    assert translator.translate(SENTENCES, beam=1) == tiny_engine.translate(SENTENCES, beam=1)
    evalset = load_split_set(prepared_path(trained_tiny) / "valid.tsv")
    evalset.sources, evalset.references = evalset.sources[:100], evalset.references[:100]
    ours, _ = evaluate(tiny_engine, evalset, beam=1, progress=False)
    theirs, _ = evaluate(translator, evalset, beam=1, progress=False)
    assert (theirs["bleu"], theirs["chrf"]) == (ours["bleu"], ours["chrf"])
    with pytest.raises(ValueError, match="engine 'onnx'"):
        open_translator(run_path(trained_tiny), engine="onnx")


def test_processes_opening_a_fresh_run_at_once_convert_it_once(trained_tiny, tmp_path, capfd):
    """Two engines opening a run with no export yet, at the same moment (service workers starting together): one
    converts while holding the lock, the other waits and uses that export, instead of both replacing it at once."""
    from concurrent.futures import ThreadPoolExecutor

    run = tmp_path / "run"
    shutil.copytree(run_path(trained_tiny), run, ignore=shutil.ignore_patterns(".*", "checkpoint", "logs", "ctranslate2*"))
    with ThreadPoolExecutor(2) as pool:
        engines = list(pool.map(lambda _: open_translator(run, engine="ctranslate2"), range(2)))
    assert capfd.readouterr().err.count("converting ") == 1
    assert [engine.translate(SENTENCES[:2], beam=1) for engine in engines] == [
        engines[0].translate(SENTENCES[:2], beam=1)] * 2


CHECK_IMPORTS = """
import json, runpy, sys
sys.argv = [{script!r}, *sys.argv[1:]]
sys.path.insert(0, {scripts!r})
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit as exit:
    assert not exit.code, exit.code
print(json.dumps(sorted(m for m in ("tensorflow", "keras", "jax", "torch") if m in sys.modules)))
"""


def test_translate_and_evaluate_cli_with_ctranslate2_import_neither_tensorflow_nor_keras(trained_tiny, tiny_engine,
                                                                                       tiny_ct2_export, tmp_path):
    open_translator(run_path(trained_tiny), engine="ctranslate2")        # the run's own export exists
    for run in (tiny_ct2_export, run_path(trained_tiny)):
        result = subprocess.run([sys.executable, "-c", CHECK_IMPORTS.format(script=TRANSLATE, scripts=SCRIPTS), "--engine",
                                 "ctranslate2", "--run", str(run), "--beam", "1", *SENTENCES],
                                capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert result.returncode == 0, result.stderr[-2000:]
        *lines, imported = result.stdout.splitlines()
        assert json.loads(imported) == []
        assert lines == tiny_engine.translate(SENTENCES, beam=1)
    report = tmp_path / "valid-ct2.json"
    result = subprocess.run([sys.executable, "-c", CHECK_IMPORTS.format(script=EVALUATE, scripts=SCRIPTS), "--engine",
                             "ctranslate2", "--run", str(run_path(trained_tiny)), "--split", "valid", "--beam", "1",
                             "--out", str(report)], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout.splitlines()[-1]) == []
    assert json.loads(report.read_text())["engine"] == "ctranslate2"


SERVICE = """
import json, sys
sys.path.insert(0, {root!r})
from fastapi.testclient import TestClient
from pipeline.service import create_app, serve        # serve: what scripts/serve.py runs
from pipeline.service.server import warm_up
from pipeline.translate import open_translator
translator = open_translator(sys.argv[1], engine="ctranslate2")
warm_up(translator, [1])
with TestClient(create_app(translator)) as client:
    health = client.get("/health").json()
    ours = client.post("/translate", json={{"text": "I love you.", "beam": 1}})
    libre = client.post("/translate", json={{"q": "I love you.", "source": "en", "target": "it"}})
print(json.dumps([health["backend"], ours.status_code, libre.status_code,
                  sorted(m for m in ("tensorflow", "keras", "jax", "torch") if m in sys.modules)]))
"""


def test_a_ctranslate2_service_imports_neither_keras_nor_tensorflow(tiny_ct2_export):
    result = subprocess.run([sys.executable, "-c", SERVICE.format(root=str(ROOT)), str(tiny_ct2_export)],
                            capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout.splitlines()[-1]) == ["ctranslate2", 200, 200, []]


def run_script(*args, prelude=""):
    code = "\n".join(["import runpy, sys", f"sys.path.insert(0, {SCRIPTS!r})", prelude, f"sys.argv = {list(args)!r}",
                      "runpy.run_path(sys.argv[0], run_name='__main__')"])
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_missing_extra_and_bad_options_are_one_line_errors(tiny_ct2_export, tmp_path, monkeypatch):
    hide = "sys.modules['ctranslate2'] = None"
    missing = run_script(TRANSLATE, "--engine", "ctranslate2", "--run", str(tiny_ct2_export), "Hi.", prelude=hide)
    assert missing.returncode == 2
    assert missing.stderr == ("error: ctranslate2 is not installed; it comes with the 'ctranslate2' extra: "
                              "pip install -e '.[ctranslate2]'\n")
    bad = run_script(str(ROOT / "scripts" / "export.py"), "--run", str(tiny_ct2_export), "--out", str(tmp_path / "x"),
                     "--format", "ctranslate2", "--quantization", "int4")
    assert bad.returncode == 2
    assert bad.stderr.startswith("error: quantization 'int4': expected one of float32, int16, int8")
    assert len(bad.stderr.splitlines()) == 1
    monkeypatch.setitem(sys.modules, "ctranslate2", None)
    with pytest.raises(MissingExtra, match=r"pip install -e '\.\[ctranslate2\]'"):
        CTranslate2Engine(tiny_ct2_export)


def test_an_option_ctranslate2_cannot_express_is_named(trained_tiny):
    import keras

    from pipeline.vectorizers import load_vectorizers

    vectorizers = load_vectorizers(run_path(trained_tiny) / "vectorizers.pkl")
    model = keras.saving.load_model(run_path(trained_tiny) / "best.keras", compile=False)
    model.decoder_blocks[0].feed_forward.inner.activation = keras.activations.silu
    with pytest.raises(CTranslate2ExportError, match=r"^feed-forward activation relu, silu: CTranslate2's "
                                                     r"TransformerSpec takes one of relu, gelu for every layer$"):
        transformer_spec(model, vectorizers)
    model.decoder_blocks[0].feed_forward.inner.activation = keras.activations.relu
    model.encoder_blocks[0].ff_norm.epsilon = 1e-5
    with pytest.raises(CTranslate2ExportError, match=r"^layer norm ff_norm \(epsilon 1e-05, rms_scaling False\): "
                                                     r"CTranslate2 uses one epsilon"):
        transformer_spec(model, vectorizers)
