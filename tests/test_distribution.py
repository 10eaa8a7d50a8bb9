"""Data parallelism: TensorFlow multi-worker with 2 processes, JAX DataParallel on 2 virtual CPUs.

Each compares the loss after a few steps with a one-process run over the same global batches.
"""
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from pipeline.config import load_config
from pipeline.datasets import load_split
from pipeline.distribution import pad_rows, read_tf_config, setup_distribution

from conftest import ROOT
from serving import free_ports
from pipeline.rundir import prepared_path

WORKER = ROOT / "tests" / "distributed_worker.py"
RUN_FILES = {"config.yaml", "vectorizers.pkl", "model.keras", "best.keras", "history.json", "train_summary.json",
             "checkpoint"}


def _workdir(prepared_tiny, tmp_path, *modes):
    """The prepared sample for each mode, with a validation split cut to 128 pairs (quicker to score)."""
    config, _ = prepared_tiny
    prepared = tmp_path / "prepared"
    prepared.mkdir()
    for source in prepared_path(config).iterdir():
        os.symlink(source, prepared / source.name)
    english, italian = load_split(prepared_path(config), "valid")      # an unsharded valid.npz is read first
    np.savez(prepared / "valid.npz", english=english[:128], italian=italian[:128])
    for mode in modes:
        (tmp_path / mode).mkdir()
        os.symlink(prepared, tmp_path / mode / "prepared")
    return tmp_path


def _worker(workdir, out, modes, **env):
    return subprocess.Popen([sys.executable, str(WORKER), str(workdir), str(out), *modes],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", **env})


def _finish(process, timeout=300):
    output, _ = process.communicate(timeout=timeout)
    assert process.returncode == 0, output[-3000:]
    return output


def test_multi_worker_two_processes_match_one_process_and_only_the_chief_writes(prepared_tiny, tmp_path):
    workdir = _workdir(prepared_tiny, tmp_path, "none", "multi_worker")
    cluster = [f"127.0.0.1:{port}" for port in free_ports(2)]
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    workers = [_worker(workdir, tmp_path / f"out{i}.npz", ["multi_worker"], KERAS_BACKEND="tensorflow", TMPDIR=str(scratch),
                       TF_CONFIG=json.dumps({"cluster": {"worker": cluster}, "task": {"type": "worker", "index": i}}))
               for i in range(2)]
    reference = _worker(workdir, tmp_path / "single.npz", ["none"], KERAS_BACKEND="tensorflow")
    outputs = [_finish(w) for w in workers] + [_finish(reference)]
    assert "2 replicas, worker 0 of 2" in outputs[0] and "2 replicas, worker 1 of 2" in outputs[1]

    run_dir = workdir / "multi_worker" / "run"
    assert {p.name for p in run_dir.iterdir()} >= RUN_FILES
    assert f"worker 1 writes its copy of the run to {scratch}" in outputs[1]
    assert not list(scratch.glob("nmt-worker*"))                      # ... and deleted it
    assert not list(run_dir.glob(".*"))                                # no temporary leftovers in the run
    chief, single = np.load(tmp_path / "out0.npz"), np.load(tmp_path / "single.npz")
    assert int(chief["multi_worker_steps"]) == int(single["none_steps"]) == 6
    # per replica, the loss is the masked mean over its half of the batch: equal to the one-process loss up to
    # how the target tokens fall between the halves
    assert abs(float(chief["multi_worker_val_loss"]) - float(single["none_val_loss"])) < 1e-3
    assert abs(float(chief["multi_worker_reloaded_loss"]) - float(single["none_reloaded_loss"])) < 1e-3


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax not installed")
def test_jax_data_parallel_on_two_devices_matches_one_device(prepared_tiny, tmp_path):
    workdir = _workdir(prepared_tiny, tmp_path, "none", "data_parallel")
    output = _finish(_worker(workdir, tmp_path / "out.npz", ["none", "data_parallel"], KERAS_BACKEND="jax",
                             XLA_FLAGS="--xla_force_host_platform_device_count=2",
                             WORKER_OVERRIDES="train.batch_size=33 train.jit_compile=true"))
    assert "data_parallel over 2 devices (cpu:0, cpu:1)" in output
    assert "padded to a multiple of 2 with masked rows" in output
    out = np.load(tmp_path / "out.npz")
    assert int(out["data_parallel_steps"]) == int(out["none_steps"]) == 6
    # the same weights (padding rows add nothing to the masked loss or its gradient); Keras weights the reported
    # val_loss of each batch by its rows, padding included, hence a little slack there
    assert abs(float(out["data_parallel_reloaded_loss"]) - float(out["none_reloaded_loss"])) < 1e-5
    assert abs(float(out["data_parallel_val_loss"]) - float(out["none_val_loss"])) < 5e-4


def test_padding_rows_are_zero_and_each_process_gets_its_share():
    batch = ({"encoder_inputs": np.arange(1, 16).reshape(5, 3)}, np.arange(1, 11).reshape(5, 2))
    inputs, targets = pad_rows(batch, 4)
    assert inputs["encoder_inputs"].shape == (8, 3) and targets.shape == (8, 2)
    assert not targets[5:].any() and (targets[:5] == batch[1]).all()
    first, second = pad_rows(batch, 4, 0, 2), pad_rows(batch, 4, 1, 2)
    assert (first[1] == batch[1][:4]).all() and (second[1][:1] == batch[1][4:]).all() and not second[1][1:].any()


@pytest.mark.parametrize("raw, message", [
    ("{not json", "environment variable TF_CONFIG: not valid JSON"),
    ('{"cluster": {"worker": ["127.0.0.1:1"]}, "task": {"type": "worker", "index": 3}}',
     "environment variable TF_CONFIG: expected"),
])
def test_bad_tf_config_is_one_line(monkeypatch, raw, message):
    monkeypatch.setenv("TF_CONFIG", raw)
    with pytest.raises(ValueError, match=message) as error:
        read_tf_config()
    assert "\n" not in str(error.value)


def test_distribute_mode_of_another_backend_is_refused(tiny_config_path):
    config = load_config(tiny_config_path, ["train.distribute=data_parallel", "train.jit_compile=true"])
    with pytest.raises(ValueError, match="'data_parallel' needs the jax backend, got 'tensorflow'; "
                                         "on tensorflow use mirrored or multi_worker"):
        setup_distribution(config)


def test_data_parallel_needs_a_compiled_step(tiny_config_path):
    with pytest.raises(ValueError, match="'train.jit_compile': train.distribute=data_parallel needs true, got false"):
        load_config(tiny_config_path, ["train.distribute=data_parallel", "train.jit_compile=false"])
