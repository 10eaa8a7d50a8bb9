"""Mirrored training on two logical CPUs. (Training on JAX without TensorFlow, and its file loading on TensorFlow:
tests/test_jax_only.py.)"""
import os
import subprocess
import sys

import numpy as np

from conftest import ROOT
from pipeline.rundir import prepared_path

WORKER = ROOT / "tests" / "backend_worker.py"


def run_worker(prepared_tiny, tmp_path, backend, *flags):
    config, _ = prepared_tiny
    workdir = tmp_path / backend
    workdir.mkdir()
    os.symlink(prepared_path(config), workdir / "prepared")
    env = {**os.environ, "KERAS_BACKEND": backend, "TF_CPP_MIN_LOG_LEVEL": "3"}
    result = subprocess.run([sys.executable, str(WORKER), str(workdir), str(tmp_path / "out.npz"), *flags],
                            capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return workdir, np.load(tmp_path / "out.npz"), result.stdout


def test_mirrored_strategy_on_two_logical_cpus(prepared_tiny, tmp_path):
    _, out, stdout = run_worker(prepared_tiny, tmp_path, "tensorflow", "--mirrored")
    assert "replicas 2" in stdout
    assert int(out["steps"]) == 6 and np.isfinite(out["loss"]) and np.isfinite(out["logits"]).all()
