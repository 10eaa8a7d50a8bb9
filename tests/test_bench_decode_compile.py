"""bench/bench_decode_compile.py in its smallest form (JAX on this CPU): both modes compile the same programs."""
import importlib.util
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT

SMALL = ["model.d_model=32", "model.num_heads=4", "model.ff_dim=64", "model.encoder_layers=1", "model.decoder_layers=1",
         "decode.batch_size=8"]


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed (optional extra 'jax')")
def test_decode_compile_bench_compiles_the_same_programs_both_ways(prepared_tiny):
    config, _ = prepared_tiny
    overrides = [flag for value in SMALL for flag in ("--set", value)]
    env = {**os.environ, "KERAS_BACKEND": "jax", "JAX_PLATFORMS": "cpu"}
    result = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_decode_compile.py"), "--config",
                             str(ROOT / "configs" / "tiny.yaml"), "--workdir", config.workdir, *overrides,
                             "--sentences", "30", "--beam", "2", "--rounds", "1"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    figure = json.loads(result.stdout.strip().splitlines()[-1])
    assert figure["name"] == "decode_compile_tiny" and figure["value"] > 0 and figure["as_they_come_s"] > 0
    programs = figure["programs"]
    assert programs["side_by_side"] == programs["as_they_come"] > 1 and figure["beam"] == 2, figure
