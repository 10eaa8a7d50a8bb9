"""Kept checkpoints (`train.keep_checkpoints`) and checkpoint averaging (`scripts/average.py`)."""
import json
import os
import shutil
import subprocess
import sys

import keras
import numpy as np
import pytest

from pipeline.averaging import average_kept_checkpoints, average_weights
from pipeline.config import load_config
from pipeline.datasets import load_split
from pipeline.model import build_model
from pipeline.rundir import RunDir, RunDirectoryError, prepared_path, run_path
from pipeline.training import Checkpointer, TrainState, compile_model

from conftest import OTHERS_TEMPORARY, ROOT, SMALL_MODEL


def small_config(prepared_tiny, tmp_path, *extra):
    config, _ = prepared_tiny
    workdir = tmp_path / "work"
    workdir.mkdir()
    os.symlink(prepared_path(config), workdir / "prepared")
    return load_config(ROOT / "configs" / "tiny.yaml", SMALL_MODEL + list(extra), str(workdir))


def random_weights(model, seed):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=w.shape).astype(w.dtype) for w in model.get_weights()]


@pytest.mark.parametrize("keep", [3, 0])
def test_checkpointer_keeps_the_weights_of_the_last_n_checkpoints(prepared_tiny, tmp_path, keep):
    config = small_config(prepared_tiny, tmp_path, "train.checkpoint_every_steps=1", f"train.keep_checkpoints={keep}")
    run_path(config).mkdir(parents=True)
    model = compile_model(build_model(config, 300, 300), config)
    callback = Checkpointer(run_path(config), config, TrainState())
    callback.set_model(model)
    bias = model.output_bias
    for step in range(1, 6):
        bias.assign(np.full(bias.shape, step, "float32"))    # each checkpoint's weights tell its step
        callback.on_step_dispatched(step - 1)
    run = RunDir(run_path(config))
    kept = run.kept_checkpoints()
    assert [p.name for p in kept] == [f"step-0000000{s}.weights.h5" for s in (3, 4, 5)][:keep]
    assert sorted(p.name for p in run.checkpoint_dir.iterdir()) == sorted(
        ["model.keras", "state.json"] + [p.name for p in kept])
    copy = build_model(config, 300, 300)
    for path in kept:
        copy.load_weights(path)
        assert np.all(copy.output_bias.numpy() == RunDir.kept_step(path))


@pytest.mark.parametrize("every_epoch", [True, False])
def test_epoch_ends_checkpoint_unless_told_only_where_training_stops(prepared_tiny, tmp_path, every_epoch):
    config = small_config(prepared_tiny, tmp_path, "train.checkpoint_every_steps=0", "train.epochs=4",
                          f"train.checkpoint_every_epoch={str(every_epoch).lower()}")
    run_path(config).mkdir(parents=True)
    model = compile_model(build_model(config, 300, 300), config)
    callback = Checkpointer(run_path(config), config, TrainState())
    callback.set_model(model)
    run, saved = RunDir(run_path(config)), []
    for epoch in range(4):
        callback.on_step_dispatched(0)
        model.stop_training = epoch == 1                    # a stop (budget, early stopping) ends this fit()
        callback.on_epoch_end(epoch, {"loss": 1.0, "val_loss": 2.0 - epoch})
        state = json.loads(run.checkpoint_state.read_text()) if run.checkpoint_state.exists() else {}
        saved.append(state.get("global_step"))
    # the checkpoint's step after each epoch: every epoch, or only at the stop and at the last epoch
    assert saved == ([1, 2, 3, 4] if every_epoch else [None, 2, 2, 4])
    assert [RunDir.kept_step(p) for p in run.kept_checkpoints()] == ([1, 2, 3, 4] if every_epoch else [2, 4])
    assert json.loads(run.history_file.read_text())[-1]["epoch"] == 4 and run.model_file("best").is_file()


def test_a_step_checkpoint_on_an_epochs_last_batch_waits_for_the_epochs_end(prepared_tiny, tmp_path):
    """So that no checkpoint stands between an epoch's last batch and its end (validation, the epoch count);
    and the end of training after an epoch's end writes no second copy of the same checkpoint."""
    config = small_config(prepared_tiny, tmp_path, "train.checkpoint_every_steps=3", "train.epochs=4",
                          "train.checkpoint_every_epoch=false")
    run_path(config).mkdir(parents=True)
    model = compile_model(build_model(config, 300, 300), config)
    callback = Checkpointer(run_path(config), config, TrainState(), steps_per_epoch=3)
    callback.set_model(model)
    run = RunDir(run_path(config))
    for batch in range(3):
        callback.on_step_dispatched(batch)
    assert not run.checkpoint_state.exists()                 # step 3 is the epoch's last batch: not yet
    callback.on_epoch_end(0, {"loss": 1.0, "val_loss": 2.0})
    state = json.loads(run.checkpoint_state.read_text())
    assert (state["global_step"], state["epoch"], state["step_in_epoch"]) == (3, 1, 0)
    written = run.checkpoint_dir.stat().st_ino
    callback.save_checkpoint()                               # as the end of training does: nothing has moved
    assert run.checkpoint_dir.stat().st_ino == written
    callback.on_step_dispatched(0)
    callback.save_checkpoint()
    assert run.checkpoint_dir.stat().st_ino != written and json.loads(run.checkpoint_state.read_text())[
        "global_step"] == 4


def test_diverged_weights_stop_training_and_overwrite_nothing(prepared_tiny, tmp_path, capsys):
    config = small_config(prepared_tiny, tmp_path, "train.checkpoint_every_steps=2")
    run_path(config).mkdir(parents=True)
    model = compile_model(build_model(config, 300, 300), config)
    callback = Checkpointer(run_path(config), config, TrainState(), steps_per_epoch=100)
    callback.set_model(model)
    run = RunDir(run_path(config))
    callback.on_step_dispatched(0)
    callback.on_step_dispatched(1)                           # a checkpoint at step 2
    callback.on_epoch_end(0, {"loss": 1.0, "val_loss": 2.0})  # best.keras at step 2
    best_written = run.model_file("best").stat().st_mtime_ns
    model.output_bias.assign(np.full(model.output_bias.shape, np.nan, "float32"))
    callback.on_step_dispatched(2)
    callback.on_step_dispatched(3)                           # step 4's checkpoint: refused, training stops
    assert model.stop_training and callback.diverged_at == 4
    callback.on_epoch_end(1, {"loss": float("nan"), "val_loss": 1.0})    # a "better" loss: nothing written
    state = json.loads(run.checkpoint_state.read_text())
    assert (state["global_step"], state["best_val_loss"]) == (2, 2.0)
    assert [RunDir.kept_step(path) for path in run.kept_checkpoints()] == [2]
    assert run.model_file("best").stat().st_mtime_ns == best_written and callback.state.best_val_loss == 2.0
    printed = capsys.readouterr().out
    assert printed.count("not finite") == 1 and "step 4" in printed, printed


def test_average_weights_is_the_exact_elementwise_mean(prepared_tiny, tmp_path):
    config = small_config(prepared_tiny, tmp_path)
    model = build_model(config, 300, 300)
    sets = [random_weights(model, seed) for seed in range(3)]
    files = []
    for i, weights in enumerate(sets):
        model.set_weights(weights)
        files.append(tmp_path / f"step-{i:08d}.weights.h5")
        model.save_weights(files[-1])
    for n in (2, 3):
        averaged = average_weights(model, files[:n])
        assert len(averaged) == len(sets[0])
        for got, *parts in zip(averaged, *sets[:n]):
            expected = (sum(p.astype(np.float64) for p in parts) / n).astype(np.float32)
            assert got.dtype == np.float32 and np.array_equal(got, expected)
    assert not np.allclose(averaged[0], sets[2][0])      # not simply the newest


def test_averaged_model_loads_translates_and_is_selectable(trained_tiny, tmp_path):
    from pipeline.translate.keras_engine import KerasEngine

    run = RunDir(shutil.copytree(run_path(trained_tiny), tmp_path / "run", ignore=OTHERS_TEMPORARY))
    assert [RunDir.kept_step(p) for p in run.kept_checkpoints()] == [250]   # default train.keep_checkpoints
    model = keras.saving.load_model(run.checkpoint_model, compile=False)
    newest = model.get_weights()
    rng = np.random.default_rng(0)
    for step in (100, 200):         # two earlier checkpoints: the newest weights, perturbed
        model.set_weights([w + rng.normal(scale=0.01, size=w.shape).astype(w.dtype) for w in newest])
        model.save_weights(run.kept_checkpoint(step))
    files = run.kept_checkpoints()
    expected = average_weights(model, files)

    result = average_kept_checkpoints(run.path, 3)
    assert result.path == run.model_file("averaged") and result.steps == [100, 200, 250]
    averaged = keras.saving.load_model(result.path)
    assert all(np.array_equal(a, b) for a, b in zip(averaged.get_weights(), expected))
    en, it = load_split(prepared_path(trained_tiny), "valid")
    logits = np.asarray(averaged({"encoder_inputs": en[:4], "decoder_inputs": it[:4, :-1]}))
    assert logits.shape == (4, it.shape[1] - 1, averaged.target_vocab_size) and np.isfinite(logits).all()
    translation, = KerasEngine.from_run(run.path, "averaged").translate(["I love you."], beam=1)
    assert isinstance(translation, str) and translation

    with pytest.raises(ValueError, match=r"cannot average the last 4 checkpoints, only 3 kept .*\(steps 100, 200, 250\)"):
        average_kept_checkpoints(run.path, 4)
    other = build_model(load_config(ROOT / "configs" / "tiny.yaml", SMALL_MODEL + ["model.d_model=64"]), 300, 300)
    other.save_weights(run.kept_checkpoint(300))
    with pytest.raises(ValueError, match=r"kept checkpoint .*step-00000300.weights.h5: does not fit the run's model"):
        average_kept_checkpoints(run.path, 2)
    with pytest.raises(RunDirectoryError, match=f"run directory {tmp_path / 'nothing'}: not found"):
        average_kept_checkpoints(tmp_path / "nothing")


def test_average_script_errors_in_one_line(trained_tiny, tmp_path):
    run = shutil.copytree(run_path(trained_tiny), tmp_path / "run", ignore=OTHERS_TEMPORARY)
    for path in RunDir(run).kept_checkpoints():
        path.unlink()
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "average.py"), "--run", str(run), "--last", "2"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip() == (f"error: run directory {run}: no kept checkpoints in {run / 'checkpoint'} "
                                     "(train.keep_checkpoints was 0, or the run predates it)")
