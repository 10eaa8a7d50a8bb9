import atexit
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
if "NMT_COMPILATION_CACHE" not in os.environ:
    # each test process (and the scripts it starts) compiles into its own cache, removed at exit: the suite
    # never reads programs of an earlier run, nor writes the user's cache
    _CACHE = tempfile.mkdtemp(prefix="nmt-test-xla-")
    os.environ["NMT_COMPILATION_CACHE"] = _CACHE
    atexit.register(shutil.rmtree, _CACHE, True)

from pathlib import Path  # noqa: E402
from typing import Callable, TypeVar  # noqa: E402

import pytest  # noqa: E402
from pipeline.rundir import prepared_path, run_path

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT / "bench"))            # `serving`: starting and stopping servers, shared with the benchmarks
SHARED_CORPUS = ROOT.parent / "shared" / "data" / "ita-eng" / "ita.txt.gz"


T = TypeVar("T")
OTHERS_TEMPORARY = shutil.ignore_patterns(".*")
"""For copying a shared run: skips the temporary files and locks (dot names) of writers in other test workers."""


def built_once(tmp_path_factory, name: str, build: Callable[[Path], T], load: Callable[[Path], T]) -> T:
    """`build(folder)` once per test run. Under pytest-xdist (`make test` runs two workers) the workers share it:
    the first to ask builds it in the run's common temporary folder while holding a lock, the others wait for the
    lock and `load(folder)` what it wrote. Alone, it is built in a fresh folder of this session."""
    from pipeline.io_utils import exclusive_lock

    if "PYTEST_XDIST_WORKER" not in os.environ:
        return build(tmp_path_factory.mktemp(name))
    common = tmp_path_factory.getbasetemp().parent          # one per test run, shared by its workers
    folder, done = common / name, common / f"{name}.done"
    with exclusive_lock(common / f"{name}.lock"):
        if done.exists():
            return load(folder)
        shutil.rmtree(folder, ignore_errors=True)           # what a worker whose build failed left: build again
        folder.mkdir()
        built = build(folder)
        done.touch()
        return built


def prepared_once(tmp_path_factory, name: str, overrides: list[str]):
    """The bundled sample prepared with the tiny config and `overrides`, once per test run: (config, report)."""
    from pipeline.config import load_config
    from pipeline.prepare import prepare

    def configured(folder: Path):
        return load_config(ROOT / "configs" / "tiny.yaml", overrides, workdir=str(folder))

    def build(folder: Path):
        config = configured(folder)
        return config, prepare(config, progress=False)

    def load(folder: Path):
        config = configured(folder)
        return config, json.loads((prepared_path(config) / "report.json").read_text(encoding="utf-8"))
    return built_once(tmp_path_factory, name, build, load)


def run_once(tmp_path_factory, name: str, prepared_config, overrides: list[str], fill: Callable[[object], object]):
    """A run of the tiny config with `overrides` on `prepared_config`'s data, once per test run: `fill(config)` makes
    it (trains it, or writes random weights). Its Config (run in run_path(config))."""
    from pipeline.config import load_config

    def configured(folder: Path):
        return load_config(ROOT / "configs" / "tiny.yaml", overrides, str(folder))

    def build(folder: Path):
        os.symlink(prepared_path(prepared_config), folder / "prepared")
        config = configured(folder)
        fill(config)
        return config
    return built_once(tmp_path_factory, name, build, configured)


def trained_once(tmp_path_factory, name: str, prepared_config, overrides: list[str]):
    """`run_once`, trained briefly."""
    from pipeline.training import train

    return run_once(tmp_path_factory, name, prepared_config, overrides, lambda config: train(config, verbose=0))


@pytest.fixture(scope="session")
def tiny_config_path() -> Path:
    return ROOT / "configs" / "tiny.yaml"


@pytest.fixture(scope="session")
def prepared_tiny(tmp_path_factory):
    """The bundled sample prepared once with the tiny config: (config, report)."""
    return prepared_once(tmp_path_factory, "tiny", [])


@pytest.fixture(scope="session")
def prepared_tiny_word(tmp_path_factory):
    """The bundled sample prepared with word-level vocabularies: (config, report)."""
    return prepared_once(tmp_path_factory, "tiny_word", ["data.tokenizer=word", "data.joint_vocab_size=0",
                                                         "model.share_embeddings=false"])


BRIEFLY = ["train.epochs=2", "train.max_steps=250", "train.learning_rate_scale=1.0"]   # how the trained runs train
SMALL_MODEL = ["model.d_model=32", "model.num_heads=4", "model.ff_dim=64", "model.encoder_layers=1",
               "model.decoder_layers=1", "train.batch_size=32", "train.warmup_steps=50", "train.jit_compile=false",
               "model.share_embeddings=false", "train.final_bleu_sentences=0"]


@pytest.fixture(scope="session")
def trained_tiny(tmp_path_factory, prepared_tiny):
    """A small model trained briefly on the prepared sample: its Config (run in run_path(config))."""
    return trained_once(tmp_path_factory, "trained", prepared_tiny[0],
                        SMALL_MODEL + BRIEFLY)


@pytest.fixture(scope="session")
def tiny_engine(trained_tiny):
    """The Keras engine of `trained_tiny` with the run's decoding settings (XLA), shared by every module so that
    its compiled decoders are compiled once; tests must not change its state."""
    from pipeline.translate.keras_engine import KerasEngine

    return KerasEngine.from_run(run_path(trained_tiny))


@pytest.fixture(scope="session")
def tiny_engine_graph(trained_tiny):
    """`tiny_engine` decoding in graph mode (`jit_compile=False`: one trace for every batch size), shared too."""
    from pipeline.translate.keras_engine import KerasEngine

    return KerasEngine.from_run(run_path(trained_tiny), jit_compile=False)


@pytest.fixture(scope="session")
def tiny_ct2_export(trained_tiny, tmp_path_factory):
    """`trained_tiny`'s float32 CTranslate2 export, written once for every module."""
    pytest.importorskip("ctranslate2")
    from pipeline.export.ctranslate2 import export_ctranslate2

    return export_ctranslate2(run_path(trained_tiny), tmp_path_factory.mktemp("ct2") / "float32")


@pytest.fixture(scope="session")
def tiny_ct2_engine(tiny_ct2_export):
    """The CTranslate2 engine of `tiny_ct2_export` (2 workers), shared by every module; tests must not change it."""
    from pipeline.translate.ct2_engine import CTranslate2Engine

    return CTranslate2Engine(tiny_ct2_export, threads=2)


IT_EN = ["data.source_language=it", "data.target_language=en"]


@pytest.fixture(scope="session")
def prepared_tiny_it_en(tmp_path_factory):
    """The bundled sample prepared the other way round, Italian -> English, with the tiny config: (config, report)."""
    return prepared_once(tmp_path_factory, "tiny_it_en", IT_EN)


@pytest.fixture(scope="session")
def trained_tiny_it_en(tmp_path_factory, prepared_tiny_it_en):
    """`trained_tiny`'s recipe, Italian -> English: its Config (run in run_path(config))."""
    return trained_once(tmp_path_factory, "trained_it_en", prepared_tiny_it_en[0], IT_EN + SMALL_MODEL + BRIEFLY)


@pytest.fixture(scope="session")
def tiny_it_en_engine(trained_tiny_it_en):
    """The Keras engine of `trained_tiny_it_en`, shared by every module; tests must not change its state."""
    from pipeline.translate.keras_engine import KerasEngine

    return KerasEngine.from_run(run_path(trained_tiny_it_en))


@pytest.fixture(scope="session")
def tiny_it_en_ct2_export(trained_tiny_it_en, tmp_path_factory):
    """`trained_tiny_it_en`'s float32 CTranslate2 export, written once for every module."""
    pytest.importorskip("ctranslate2")
    from pipeline.export.ctranslate2 import export_ctranslate2

    return export_ctranslate2(run_path(trained_tiny_it_en), tmp_path_factory.mktemp("ct2_it_en") / "float32")


SENTENCEPIECE = ["data.tokenizer=sentencepiece", "data.joint_vocab_size=0", "model.share_embeddings=false",
                 "data.en_vocab_size=2000", "data.it_vocab_size=3000"]


@pytest.fixture(scope="session")
def prepared_tiny_sp(tmp_path_factory):
    """The bundled sample prepared with separate English and Italian SentencePiece vocabularies: (config, report)."""
    return prepared_once(tmp_path_factory, "tiny_sp", SENTENCEPIECE)


@pytest.fixture(scope="session")
def trained_tiny_sp(tmp_path_factory, prepared_tiny_sp):
    """Like `trained_tiny`, with SentencePiece vocabularies: its Config (run in run_path(config))."""
    return trained_once(tmp_path_factory, "trained_sp", prepared_tiny_sp[0], SENTENCEPIECE + SMALL_MODEL + BRIEFLY)


def random_weights_run(config, prepared_dir: Path):
    """A run directory for `config` with the vectorizers of `prepared_dir` and a model whose weights are drawn at
    random (normal, 0.3: clear argmaxes) rather than trained: what exports and converters must reproduce, not
    what it translates. Returns the model (saved as the run's best.keras)."""
    import shutil

    import numpy as np

    from pipeline.config import save_config
    from pipeline.model import build_model
    from pipeline.vectorizers import load_vectorizers

    run = run_path(config)
    run.mkdir(parents=True)
    save_config(config, run / "config.yaml")
    shutil.copyfile(prepared_dir / "vectorizers.pkl", run / "vectorizers.pkl")
    vectorizers = load_vectorizers(run / "vectorizers.pkl")
    model = build_model(config, len(vectorizers.source), len(vectorizers.target))
    rng = np.random.default_rng(0)
    for variable in model.weights:
        variable.assign(rng.normal(0, 0.3, variable.shape).astype("float32"))
    model.save(run / "best.keras")
    return model


@pytest.fixture(scope="session")
def untrained_tiny_word(tmp_path_factory, prepared_tiny_word):
    """A run with word-level vocabularies and the small model, its weights random (`random_weights_run`): what
    exports must reproduce. Its Config (run in run_path(config))."""
    prepared_config, _ = prepared_tiny_word
    return run_once(tmp_path_factory, "trained_word", prepared_config,
                    ["data.tokenizer=word", "data.joint_vocab_size=0"] + SMALL_MODEL,
                    lambda config: random_weights_run(config, prepared_path(prepared_config)))
