import struct
import subprocess
import sys

import numpy as np
import pytest

from pipeline.translate.keras_engine import KerasEngine

from conftest import ROOT
from pipeline.rundir import run_path

pytest.importorskip("matplotlib")

EXPECTED_PIXELS = {"position_encoding.png": (1000, 500), "positional_embedding.png": (1200, 800),
                   "training_curves.png": (1200, 450), "cross_attention.png": (800, 700)}


def png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


def test_plot_cli_writes_the_four_figures(trained_tiny, tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "plot.py"), "--run", str(run_path(trained_tiny)),
                             "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(EXPECTED_PIXELS)
    for name, size in EXPECTED_PIXELS.items():
        path = tmp_path / name
        assert path.stat().st_size > 10_000, name         # a drawn figure, not an empty canvas
        assert png_size(path) == size, name
    assert result.stderr.strip().splitlines()[-1].startswith(f"wrote 4 figures to {tmp_path}")


def test_cross_attention_weights_are_per_layer_distributions_over_the_source(trained_tiny):
    translator = KerasEngine.from_run(run_path(trained_tiny))
    source, output, weights, translation = translator.cross_attention("Tom is my friend.")
    layers, heads = translator.model.hyper["decoder_layers"], translator.model.num_heads
    assert source == translator.vectorizers.english.tokenize("Tom is my friend.")
    assert "".join(source).replace("\u2581", " ").strip() == "Tom is my friend."
    assert output[-1] == translator.vocabulary[translator.end_id] or len(output) == len(source) + translator.config.decode.max_extra_length
    assert weights.shape == (layers, heads, len(output), len(source))
    np.testing.assert_allclose(weights.sum(-1), 1.0, rtol=1e-5)
    assert translator.vectorizers.decode_italian(translator.vocabulary.index(t) for t in output) == \
        translation == translator.translate(["Tom is my friend."], beam=1)[0]


def test_training_curves_refuse_a_bad_history_file(tmp_path):
    from pipeline.plots import plot_training_curves
    history = tmp_path / "history.json"
    history.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match=r"history file .*history.json: not valid JSON"):
        plot_training_curves(tmp_path / "c.png", history)
    with pytest.raises(FileNotFoundError, match=r"history file .*missing.json: not found"):
        plot_training_curves(tmp_path / "c.png", tmp_path / "missing.json")
    assert not (tmp_path / "c.png").exists()
