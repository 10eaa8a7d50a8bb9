"""The model trains on JAX without TensorFlow, files move between backends, and mirrored runs."""
import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

from pipeline.datasets import load_split
from pipeline.rundir import load_model

from conftest import ROOT

WORKER = ROOT / "tests" / "backend_worker.py"


def run_worker(prepared_tiny, tmp_path, backend, *flags):
    config, _ = prepared_tiny
    workdir = tmp_path / backend
    workdir.mkdir()
    os.symlink(config.prepared_dir, workdir / "prepared")
    env = {**os.environ, "KERAS_BACKEND": backend, "TF_CPP_MIN_LOG_LEVEL": "3"}
    result = subprocess.run([sys.executable, str(WORKER), str(workdir), str(tmp_path / "out.npz"), *flags],
                            capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return workdir, np.load(tmp_path / "out.npz"), result.stdout


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax not installed")
def test_jax_trains_without_tensorflow_and_its_file_loads_on_tensorflow(prepared_tiny, tmp_path):
    workdir, out, stdout = run_worker(prepared_tiny, tmp_path, "jax", "--no-tensorflow")
    assert "backend jax tensorflow imported: False" in stdout
    assert int(out["steps"]) == 6 and np.isfinite(out["loss"])
    en, it = load_split(workdir / "prepared", "valid")
    model = load_model(workdir / "run", "model")            # this process runs the TensorFlow backend
    logits = np.asarray(model({"encoder_inputs": en[:8], "decoder_inputs": it[:8, :-1]}, training=False))
    assert np.allclose(logits, out["logits"], atol=1e-4)


def test_mirrored_strategy_on_two_logical_cpus(prepared_tiny, tmp_path):
    _, out, stdout = run_worker(prepared_tiny, tmp_path, "tensorflow", "--mirrored")
    assert "replicas 2" in stdout
    assert int(out["steps"]) == 6 and np.isfinite(out["loss"]) and np.isfinite(out["logits"]).all()
