import pytest

from pipeline.config import ConfigError, load_config


def write(tmp_path, text):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path


def test_shipped_configs_load(tiny_config_path):
    tiny = load_config(tiny_config_path)
    base = load_config(tiny_config_path.parent / "base.yaml")
    cpu60 = load_config(tiny_config_path.parent / "cpu60.yaml")
    assert tiny.model.d_model == 128 and base.model.d_model == 512 and cpu60.model.d_model == 256
    assert base.train.mixed_precision == "mixed_bfloat16"
    assert {c.data.tokenizer for c in (tiny, base, cpu60)} == {"sentencepiece"}
    assert tiny.data.joint_vocab_size == 6000 and tiny.model.share_embeddings


@pytest.mark.parametrize("text, message", [
    ("model:\n  d_modle: 4\n", "config key 'model.d_modle' is unknown; allowed here: d_model"),
    ("model:\n  d_model: big\n", "config key 'model.d_model': expected int, got str 'big'"),
    ("model:\n  d_model: 129\n  num_heads: 1\n", "config key 'model.d_model': must be even"),
    ("data:\n  max_length: -3\n", "config key 'data.max_length': must be > 0, got -3"),
    ("data:\n  valid_fraction: 1.5\n", "config key 'data.valid_fraction': must be in [0, 1), got 1.5"),
    ("train:\n  mixed_precision: fp8\n", "config key 'train.mixed_precision': must be one of none"),
    ("train:\n  jit_compile: 1\n", "config key 'train.jit_compile': expected bool, got int 1"),
    ("colour: red\n", "config key 'colour' is unknown"),
    ("model: 3\n", "config key 'model': expected a mapping"),
    ("model: [1\n", "not valid YAML"),
    ("data:\n  valid_fraction: 0.6\n  test_fraction: 0.5\n", "'data.valid_fraction' + 'data.test_fraction' must be < 1"),
    ("train:\n  keep_checkpoints: 2\n  average_last: 3\n",
     "config key 'train.average_last': must be <= train.keep_checkpoints=2, got 3"),
])
def test_bad_configs_are_refused_with_the_key(tmp_path, text, message):
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, text))
    assert message in str(info.value)
    assert str(tmp_path / "c.yaml") in str(info.value)
    assert "\n" not in str(info.value)


def test_overrides_and_workdir(tmp_path):
    config = load_config(write(tmp_path, "train:\n  epochs: 2\n"), ["train.epochs=5", "model.dropout=0.3"], "/w")
    assert (config.train.epochs, config.model.dropout, config.workdir) == (5, 0.3, "/w")
    with pytest.raises(ConfigError, match="config key 'train.epoch' is unknown"):
        load_config(None, ["train.epoch=5"])


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.yaml")
