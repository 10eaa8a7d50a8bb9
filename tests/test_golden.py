"""No behaviour change: the engines translate a fixed set of 200 sentences and paragraphs exactly as the code
before the `translate/` refactor did, on a frozen tiny run (tests/data/frozen-tiny: greedy, beam 4, 3-best,
seeded sampling; Keras and CTranslate2), byte for byte."""
import importlib.util
import json
import shutil

import pytest

from conftest import ROOT

FROZEN = ROOT / "tests" / "data" / "frozen-tiny"


def load_translate_all():
    spec = importlib.util.spec_from_file_location("translate_all", FROZEN / "translate_all.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.translate_all


@pytest.fixture(scope="module")
def golden():
    return json.loads((FROZEN / "golden.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def frozen_run(tmp_path_factory):
    run = tmp_path_factory.mktemp("frozen") / "run"      # the CTranslate2 engine writes its conversion into it
    shutil.copytree(FROZEN / "run", run)
    return run


def test_the_golden_set_is_200_sentences_and_paragraphs(golden):
    texts = golden["texts"]
    assert len(texts) == 200 and len(set(texts)) == 200
    assert sum("\n" in text or text.count(". ") > 1 for text in texts) >= 40          # paragraphs
    assert {len(outputs) for outputs in golden["outputs"].values()} == {200}


@pytest.mark.parametrize("engine", ["keras", "ctranslate2"])
def test_translations_are_byte_identical_to_the_golden_ones(engine, golden, frozen_run):
    if engine == "ctranslate2":
        pytest.importorskip("ctranslate2")
    outputs = load_translate_all()(frozen_run, golden["texts"], engine)
    assert outputs, engine
    for name, got in outputs.items():
        expected = golden["outputs"][name]
        wrong = [i for i, (a, b) in enumerate(zip(got, expected)) if a != b]
        assert len(got) == len(expected) and not wrong, (
            f"{name}: {len(wrong)} of {len(expected)} differ; first, text {wrong[0]} {golden['texts'][wrong[0]]!r}: "
            f"{got[wrong[0]]!r} != {expected[wrong[0]]!r}" if wrong else f"{name}: {len(got)} outputs")
