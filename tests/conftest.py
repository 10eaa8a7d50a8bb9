import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SHARED_CORPUS = ROOT.parent / "shared" / "data" / "ita-eng" / "ita.txt.gz"


@pytest.fixture(scope="session")
def tiny_config_path() -> Path:
    return ROOT / "configs" / "tiny.yaml"


@pytest.fixture(scope="session")
def prepared_tiny(tmp_path_factory, tiny_config_path):
    """The bundled sample prepared once with the tiny config: (config, report)."""
    from pipeline.config import load_config
    from pipeline.prepare import prepare

    config = load_config(tiny_config_path, workdir=str(tmp_path_factory.mktemp("tiny")))
    report = prepare(config, progress=False)
    return config, report


@pytest.fixture(scope="session")
def prepared_tiny_word(tmp_path_factory, tiny_config_path):
    """The bundled sample prepared with word-level vocabularies: (config, report)."""
    from pipeline.config import load_config
    from pipeline.prepare import prepare

    config = load_config(tiny_config_path, ["data.tokenizer=word", "data.joint_vocab_size=0",
                                            "model.share_embeddings=false"], workdir=str(tmp_path_factory.mktemp("tiny_word")))
    return config, prepare(config, progress=False)


SMALL_MODEL = ["model.d_model=32", "model.num_heads=4", "model.ff_dim=64", "model.encoder_layers=1",
               "model.decoder_layers=1", "train.batch_size=32", "train.warmup_steps=50", "train.jit_compile=false",
               "model.share_embeddings=false", "train.final_bleu_sentences=0"]


@pytest.fixture(scope="session")
def trained_tiny(tmp_path_factory, prepared_tiny):
    """A small model trained briefly on the prepared sample: its Config (run in config.run_dir)."""
    from pipeline.config import load_config
    from pipeline.training import train

    prepared_config, _ = prepared_tiny
    workdir = tmp_path_factory.mktemp("trained")
    os.symlink(prepared_config.prepared_dir, workdir / "prepared")
    config = load_config(ROOT / "configs" / "tiny.yaml",
                         SMALL_MODEL + ["train.epochs=2", "train.max_steps=250", "train.learning_rate_scale=1.0"],
                         str(workdir))
    train(config, verbose=0)
    return config


@pytest.fixture(scope="session")
def tiny_engine(trained_tiny):
    """The Keras engine of `trained_tiny` with the run's decoding settings (XLA), shared by every module so that
    its compiled decoders are compiled once; tests must not change its state."""
    from pipeline.translate.keras_engine import KerasEngine

    return KerasEngine.from_run(trained_tiny.run_dir)


@pytest.fixture(scope="session")
def tiny_engine_graph(trained_tiny):
    """`tiny_engine` decoding in graph mode (`jit_compile=False`: one trace for every batch size), shared too."""
    from pipeline.translate.keras_engine import KerasEngine

    return KerasEngine.from_run(trained_tiny.run_dir, jit_compile=False)


SENTENCEPIECE = ["data.tokenizer=sentencepiece", "data.joint_vocab_size=0", "model.share_embeddings=false",
                 "data.en_vocab_size=2000", "data.it_vocab_size=3000"]


@pytest.fixture(scope="session")
def prepared_tiny_sp(tmp_path_factory, tiny_config_path):
    """The bundled sample prepared with separate English and Italian SentencePiece vocabularies: (config, report)."""
    from pipeline.config import load_config
    from pipeline.prepare import prepare

    config = load_config(tiny_config_path, SENTENCEPIECE, str(tmp_path_factory.mktemp("tiny_sp")))
    return config, prepare(config, progress=False)


@pytest.fixture(scope="session")
def trained_tiny_sp(tmp_path_factory, tiny_config_path, prepared_tiny_sp):
    """Like `trained_tiny`, with SentencePiece vocabularies: its Config (run in config.run_dir)."""
    from pipeline.config import load_config
    from pipeline.training import train

    prepared_config, _ = prepared_tiny_sp
    workdir = tmp_path_factory.mktemp("trained_sp")
    os.symlink(prepared_config.prepared_dir, workdir / "prepared")
    config = load_config(tiny_config_path, SENTENCEPIECE + SMALL_MODEL + [
        "train.epochs=2", "train.max_steps=250", "train.learning_rate_scale=1.0"], str(workdir))
    train(config, verbose=0)
    return config


def random_weights_run(config, prepared_dir: Path):
    """A run directory for `config` with the vectorizers of `prepared_dir` and a model whose weights are drawn at
    random (normal, 0.3: clear argmaxes) rather than trained: what exports and converters must reproduce, not
    what it translates. Returns the model (saved as the run's best.keras)."""
    import shutil

    import numpy as np

    from pipeline.config import save_config
    from pipeline.model import build_model
    from pipeline.vectorizers import load_vectorizers

    run = config.run_dir
    run.mkdir(parents=True)
    save_config(config, run / "config.yaml")
    shutil.copyfile(prepared_dir / "vectorizers.pkl", run / "vectorizers.pkl")
    vectorizers = load_vectorizers(run / "vectorizers.pkl")
    model = build_model(config, len(vectorizers.english), len(vectorizers.italian))
    rng = np.random.default_rng(0)
    for variable in model.weights:
        variable.assign(rng.normal(0, 0.3, variable.shape).astype("float32"))
    model.save(run / "best.keras")
    return model


@pytest.fixture(scope="session")
def untrained_tiny_word(tmp_path_factory, prepared_tiny_word):
    """A run with word-level vocabularies and the small model, its weights random (`random_weights_run`): what
    exports must reproduce. Its Config (run in config.run_dir)."""
    from pipeline.config import load_config

    prepared_config, _ = prepared_tiny_word
    workdir = tmp_path_factory.mktemp("trained_word")
    os.symlink(prepared_config.prepared_dir, workdir / "prepared")
    config = load_config(ROOT / "configs" / "tiny.yaml", ["data.tokenizer=word", "data.joint_vocab_size=0"]
                         + SMALL_MODEL, str(workdir))
    random_weights_run(config, prepared_config.prepared_dir)
    return config
