"""bench/bench_train_gpu.py in its smallest form (JAX on this CPU): the figures a GPU run reports are there."""
import importlib.util
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT

SMALL = ["model.d_model=32", "model.num_heads=4", "model.ff_dim=64", "model.encoder_layers=1", "model.decoder_layers=1",
         "data.joint_vocab_size=500", "train.buckets=1", "train.mixed_precision=mixed_bfloat16"]


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed (optional extra 'jax')")
def test_gpu_bench_reports_compile_step_time_tokens_flops_and_mfu_fields(tmp_path):
    overrides = [flag for value in SMALL for flag in ("--set", value)]
    env = {**os.environ, "KERAS_BACKEND": "jax", "JAX_PLATFORMS": "cpu", "NMT_COMPILATION_CACHE": str(tmp_path)}
    result = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_train_gpu.py"), "--config",
                             str(ROOT / "configs" / "tiny.yaml"), *overrides, "--steps", "2", "--rounds", "1"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    figure = json.loads(result.stdout.strip().splitlines()[-1])
    assert figure["name"] == "train_throughput_device" and figure["value"] > 0 and figure["device"] == "cpu"
    assert figure["compile_seconds"] > 0 and figure["ms_per_step"] > 0 and figure["matmul_tflops_per_s"] >= 0
    assert figure["batch_shapes"] == 1 and figure["mfu_datasheet"] is None        # no data-sheet peak for a CPU
