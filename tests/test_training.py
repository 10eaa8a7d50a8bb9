import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import keras

from pipeline.config import load_config
from pipeline.datasets import ArrayBatches, batch_plan, format_dataset, load_split, make_dataset
from pipeline.model import build_model
from pipeline.training import compile_model, load_model, train

from conftest import ROOT, SMALL_MODEL as SMALL


def small_config(prepared_tiny, tmp_path, *extra):
    config, _ = prepared_tiny
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    if not (workdir / "prepared").exists():
        os.symlink(config.prepared_dir, workdir / "prepared")
    return load_config(ROOT / "configs" / "tiny.yaml", SMALL + list(extra), str(workdir))


def test_format_dataset_shifts_targets():
    eng = np.array([[5, 6, 0]])
    ita = np.array([[2, 7, 8, 3, 0]])
    inputs, target = format_dataset(eng, ita)
    assert inputs["decoder_inputs"].tolist() == [[2, 7, 8, 3]] and target.tolist() == [[7, 8, 3, 0]]
    assert inputs["encoder_inputs"] is eng


def test_batch_plan_is_seeded_bucketed_and_covers_every_row(prepared_tiny):
    config, _ = prepared_tiny
    en, it = load_split(config.prepared_dir, "train")
    plan = batch_plan(en, it, 64, 4, seed=1, epoch=0)
    assert sorted(np.concatenate(plan).tolist()) == list(range(len(en)))
    assert all(np.array_equal(a, b) for a, b in zip(plan, batch_plan(en, it, 64, 4, seed=1, epoch=0)))
    other = batch_plan(en, it, 64, 4, seed=1, epoch=1)
    assert len(other) == len(plan) and not all(np.array_equal(a, b) for a, b in zip(plan, other))
    lengths = np.maximum((en != 0).sum(1), (it != 0).sum(1)) // 4
    assert all(len(set(lengths[rows])) == 1 for rows in plan)


def test_tf_data_and_pydataset_serve_the_same_batches_and_skip_exactly(prepared_tiny):
    config, _ = prepared_tiny
    en, it = load_split(config.prepared_dir, "valid")
    full = list(make_dataset((en, it), 32, bucket_width=4, seed=3, epochs=[2]).as_numpy_iterator())
    skipped = list(make_dataset((en, it), 32, bucket_width=4, seed=3, epochs=[2], skip=5).as_numpy_iterator())
    py = ArrayBatches(en, it, 32, 4, seed=3, first_epoch=2, skip=5)
    assert len(skipped) == len(py) == len(full) - 5
    for (x, y), (px, py_), (fx, fy) in zip(skipped, [py[i] for i in range(len(py))], full[5:]):
        assert np.array_equal(x["encoder_inputs"], px["encoder_inputs"]) and np.array_equal(y, py_)
        assert np.array_equal(x["decoder_inputs"], fx["decoder_inputs"]) and np.array_equal(y, fy)
    for x, _ in full:   # trimmed to the longest sentence, rounded up to the bucket width
        width = x["encoder_inputs"].shape[1]
        assert width == min(20, -(-int((x["encoder_inputs"] != 0).sum(1).max()) // 4) * 4)
    assert min(x["encoder_inputs"].shape[1] for x, _ in full) < en.shape[1]


def test_make_dataset_vectorises_sentence_pairs(prepared_tiny):
    from pipeline.vectorizers import load_vectorizers
    config, _ = prepared_tiny
    vectorizers = load_vectorizers(config.prepared_dir / "vectorizers.pkl")
    pairs = [("I love you.", "Ti amo."), ("Who?", "Chi?")]
    (x, y), = make_dataset(pairs, 8, vectorizers=vectorizers, shuffle=False).as_numpy_iterator()
    vocab = vectorizers.italian_vocabulary
    assert x["decoder_inputs"][0][0] == vectorizers.italian.start_id
    assert vectorizers.decode_italian(y[0]) == "Ti amo."


def test_tiny_model_overfits_64_pairs(prepared_tiny, tmp_path):
    config = small_config(prepared_tiny, tmp_path, "model.dropout=0.0", "train.label_smoothing=0.0",
                          "train.learning_rate_scale=1.0", "model.d_model=64", "model.ff_dim=128")
    en, it = load_split(config.prepared_dir, "train")
    en, it = en[:64], it[:64]
    keras.utils.set_random_seed(0)
    model = compile_model(build_model(config, 6000, 6000), config)
    data = make_dataset((en, it), 32, bucket_width=0, seed=0, epochs=range(200))
    model.fit(data, epochs=200, steps_per_epoch=2, verbose=0)
    results = model.evaluate(make_dataset((en, it), 64, shuffle=False), verbose=0, return_dict=True)
    assert results["masked_accuracy"] >= 0.95, results


def test_train_writes_a_self_contained_run_that_reloads(prepared_tiny, tmp_path):
    config = small_config(prepared_tiny, tmp_path, "train.epochs=2", "train.max_steps=30",
                          "train.checkpoint_every_steps=10", "train.keep_checkpoints=2", "train.average_last=2")
    summary = train(config, verbose=0)
    run = config.run_dir
    assert summary["total_steps"] == 30 and summary["best_val_loss"] is not None
    for name in ("config.yaml", "vectorizers.pkl", "model.keras", "best.keras", "averaged.keras", "history.json",
                 "train_summary.json", "checkpoint/model.keras", "checkpoint/state.json",
                 "checkpoint/step-00000020.weights.h5", "checkpoint/step-00000030.weights.h5"):
        assert (run / name).is_file(), name
    assert len(list((run / "checkpoint").glob("*.weights.h5"))) == 2
    assert any((run / "logs").rglob("*tfevents*"))
    history = json.loads((run / "history.json").read_text())
    assert history[0]["epoch"] == 1 and {"loss", "val_loss", "val_masked_accuracy"} <= set(history[0])
    en, it = load_split(config.prepared_dir, "valid")
    inputs = {"encoder_inputs": en[:8], "decoder_inputs": it[:8, :-1]}
    final = load_model(run, "model")
    trained = keras.saving.load_model(run / "checkpoint" / "model.keras")
    assert np.array_equal(np.asarray(final(inputs)), np.asarray(trained(inputs)))
    with pytest.raises(FileExistsError, match="already exists; use --resume"):
        train(config, verbose=0)


def test_train_refuses_prepared_data_of_another_length(prepared_tiny, tmp_path):
    config = small_config(prepared_tiny, tmp_path, "data.max_length=30")
    with pytest.raises(ValueError, match="made with data.max_length=20, but the config says 30"):
        train(config, verbose=0)


def test_kill_mid_epoch_then_resume_continues_from_the_checkpoint(prepared_tiny, tmp_path):
    config = small_config(prepared_tiny, tmp_path)
    args = [sys.executable, str(ROOT / "scripts" / "train.py"), "--config", str(ROOT / "configs" / "tiny.yaml"),
            "--workdir", config.workdir, "--verbose", "0"] + [f"--set={s}" for s in SMALL]
    state_file = config.run_dir / "checkpoint" / "state.json"
    process = subprocess.Popen(args + ["--set=train.checkpoint_every_steps=7", "--set=train.epochs=50"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 240
    state = {}
    while time.time() < deadline:
        if state_file.exists():
            state = json.loads(state_file.read_text())
            if state["global_step"] >= 14 and state["step_in_epoch"] > 0:
                break
        time.sleep(0.2)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert state.get("step_in_epoch", 0) > 0, "no mid-epoch checkpoint before the deadline"
    state = json.loads(state_file.read_text())        # the checkpoint that survived the kill
    target = state["global_step"] + 20
    result = subprocess.run(args + ["--resume", f"--set=train.max_steps={target}", "--set=train.epochs=50"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert (f"resuming at epoch {state['epoch'] + 1}, step {state['global_step']} "
            f"({state['step_in_epoch']} batches into the epoch)") in result.stdout
    final = json.loads(state_file.read_text())
    assert final["global_step"] == target
    assert len(final["history"]) >= len(state["history"])


def test_mixed_precision_keeps_float32_logits_and_loss(prepared_tiny, tmp_path):
    config = small_config(prepared_tiny, tmp_path, "train.mixed_precision=mixed_bfloat16")
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        model = compile_model(build_model(config, 6000, 6000), config)
        en, it = load_split(config.prepared_dir, "valid")
        out = model({"encoder_inputs": en[:4], "decoder_inputs": it[:4, :-1]})
        assert keras.backend.standardize_dtype(out.dtype) == "float32"
        assert model.source_embedding.compute_dtype == "bfloat16"
        history = model.fit(make_dataset((en[:64], it[:64]), 32, seed=0), epochs=1, verbose=0)
        assert np.isfinite(history.history["loss"][0])
    finally:
        keras.mixed_precision.set_global_policy("float32")


def test_early_stopping_after_patience_epochs_without_improvement(prepared_tiny, tmp_path):
    from pipeline.training import Checkpointer, TrainState
    config = small_config(prepared_tiny, tmp_path, "train.early_stopping_patience=2")
    config.run_dir.mkdir(parents=True)
    model = compile_model(build_model(config, 6000, 6000), config)
    callback = Checkpointer(config.run_dir, config, TrainState())
    callback.set_model(model)
    for epoch, val_loss in enumerate([3.0, 2.5, 2.7, 2.6]):
        model.stop_training = False
        callback.on_epoch_end(epoch, {"loss": 3.0, "val_loss": val_loss})
        assert model.stop_training == (epoch == 3), epoch
    assert callback.state.best_val_loss == 2.5 and callback.state.best_epoch == 2
    assert (config.run_dir / "best.keras").is_file()
    assert json.loads((config.run_dir / "history.json").read_text())[-1]["val_loss"] == 2.6


def test_time_budget_stops_training_and_leaves_the_epoch_open_for_resume(prepared_tiny, tmp_path):
    from pipeline.training import Checkpointer, TrainState
    config = small_config(prepared_tiny, tmp_path, "train.max_minutes=0.5")
    config.run_dir.mkdir(parents=True)
    model = compile_model(build_model(config, 6000, 6000), config)
    callback = Checkpointer(config.run_dir, config, TrainState(seconds=29.0), steps_per_epoch=100)
    callback.set_model(model)
    callback.on_train_begin()
    callback.on_train_batch_end(0)
    assert not model.stop_training and not callback.out_of_budget()
    callback.state.seconds = 30.0
    callback.on_train_batch_end(1)
    assert model.stop_training and callback.out_of_budget()
    callback.on_epoch_end(0, {"loss": 3.0, "val_loss": 2.9})
    state = json.loads((config.run_dir / "checkpoint" / "state.json").read_text())
    assert (state["epoch"], state["step_in_epoch"], state["global_step"]) == (0, 2, 2)
    assert state["history"][-1]["partial"] is True and state["seconds"] >= 30.0
    assert (config.run_dir / "best.keras").is_file()
