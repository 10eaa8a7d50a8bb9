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


SENTENCEPIECE = ["data.tokenizer=sentencepiece", "data.joint_vocab_size=0", "model.share_embeddings=false",
                 "data.en_vocab_size=2000", "data.it_vocab_size=3000"]


@pytest.fixture(scope="session")
def trained_tiny_sp(tmp_path_factory, tiny_config_path):
    """Like `trained_tiny`, with SentencePiece vocabularies: its Config (run in config.run_dir)."""
    from pipeline.config import load_config
    from pipeline.prepare import prepare
    from pipeline.training import train

    config = load_config(tiny_config_path, SENTENCEPIECE + SMALL_MODEL + [
        "train.epochs=2", "train.max_steps=250", "train.learning_rate_scale=1.0"],
        str(tmp_path_factory.mktemp("trained_sp")))
    prepare(config, progress=False)
    train(config, verbose=0)
    return config


@pytest.fixture(scope="session")
def trained_tiny_word(tmp_path_factory, prepared_tiny_word):
    """Like `trained_tiny`, with word-level vocabularies: its Config (run in config.run_dir)."""
    from pipeline.config import load_config
    from pipeline.training import train

    prepared_config, _ = prepared_tiny_word
    workdir = tmp_path_factory.mktemp("trained_word")
    os.symlink(prepared_config.prepared_dir, workdir / "prepared")
    config = load_config(ROOT / "configs" / "tiny.yaml", ["data.tokenizer=word", "data.joint_vocab_size=0"]
                         + SMALL_MODEL + ["train.epochs=2", "train.max_steps=250"], str(workdir))
    train(config, verbose=0)
    return config
