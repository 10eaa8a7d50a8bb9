import json
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import keras

from pipeline.config import load_config
from pipeline.datasets import ArrayBatches, Batching, batch_plan, format_dataset, load_split, make_dataset
from pipeline.model import build_model
from pipeline.serializable import load_model
from pipeline.training import compile_model, train

from conftest import ROOT, SMALL_MODEL as SMALL
from pipeline.rundir import prepared_path, run_path


def small_config(prepared_tiny, tmp_path, *extra):
    config, _ = prepared_tiny
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    if not (workdir / "prepared").exists():
        os.symlink(prepared_path(config), workdir / "prepared")
    return load_config(ROOT / "configs" / "tiny.yaml", SMALL + list(extra), str(workdir))


def test_format_dataset_shifts_targets():
    eng = np.array([[5, 6, 0]])
    ita = np.array([[2, 7, 8, 3, 0]])
    inputs, target = format_dataset(eng, ita)
    assert inputs["decoder_inputs"].tolist() == [[2, 7, 8, 3]] and target.tolist() == [[7, 8, 3, 0]]
    assert inputs["encoder_inputs"] is eng


def test_batch_plan_is_seeded_bucketed_and_covers_every_row(prepared_tiny):
    config, _ = prepared_tiny
    en, it = load_split(prepared_path(config), "train")
    batching = Batching.for_data(en, it, batch_size=64, buckets=4, bucket_width=1)
    plan = batch_plan(en, it, batching, seed=1, epoch=0)
    assert sorted(np.concatenate(plan).tolist()) == list(range(len(en)))
    assert all(np.array_equal(a, b) for a, b in zip(plan, batch_plan(en, it, batching, seed=1, epoch=0)))
    other = batch_plan(en, it, batching, seed=1, epoch=1)
    assert len(other) == len(plan) and not all(np.array_equal(a, b) for a, b in zip(plan, other))
    widths = np.maximum((np.asarray(en) != 0).sum(1), (np.asarray(it) != 0).sum(1) - 1)
    buckets = np.searchsorted(batching.boundaries, widths)
    assert len(batching.boundaries) == 4 and all(len(set(buckets[rows])) == 1 for rows in plan)


def test_tf_data_and_pydataset_serve_the_same_batches_and_skip_exactly(prepared_tiny):
    config, _ = prepared_tiny
    en, it = load_split(prepared_path(config), "valid")
    batching = Batching.for_data(en, it, batch_size=32, buckets=4, bucket_width=4)
    full = list(make_dataset((en, it), batching, seed=3, epochs=[2]).as_numpy_iterator())
    skipped = list(make_dataset((en, it), batching, seed=3, epochs=[2], skip=5).as_numpy_iterator())
    py = ArrayBatches(en, it, batching, seed=3, first_epoch=2, skip=5)
    assert len(skipped) == len(py) == len(full) - 5
    for (x, y), (px, py_), (fx, fy) in zip(skipped, [py[i] for i in range(len(py))], full[5:]):
        assert np.array_equal(x["encoder_inputs"], px["encoder_inputs"]) and np.array_equal(y, py_)
        assert np.array_equal(x["decoder_inputs"], fx["decoder_inputs"]) and np.array_equal(y, fy)
    for x, _ in full:   # trimmed to the bucket boundary that holds the longest pair
        longest = max((x["encoder_inputs"] != 0).sum(1).max(), (x["decoder_inputs"] != 0).sum(1).max())
        width = batching.boundaries[np.searchsorted(batching.boundaries, longest)]
        assert x["encoder_inputs"].shape == (32, min(20, width)) and x["decoder_inputs"].shape == (32, width)
    assert min(x["encoder_inputs"].shape[1] for x, _ in full) < en.shape[1]


def test_make_dataset_vectorises_sentence_pairs(prepared_tiny):
    from pipeline.vectorizers import load_vectorizers
    config, _ = prepared_tiny
    vectorizers = load_vectorizers(prepared_path(config) / "vectorizers.pkl")
    pairs = [("I love you.", "Ti amo."), ("Who?", "Chi?")]
    (x, y), = make_dataset(pairs, 8, vectorizers=vectorizers, shuffle=False).as_numpy_iterator()
    vocab = vectorizers.italian_vocabulary
    assert x["decoder_inputs"][0][0] == vectorizers.italian.start_id
    assert vectorizers.decode_italian(y[0]) == "Ti amo."


def test_tiny_model_overfits_64_pairs(prepared_tiny, tmp_path):
    config = small_config(prepared_tiny, tmp_path, "model.dropout=0.0", "train.label_smoothing=0.0",
                          "train.learning_rate_scale=1.0", "model.d_model=64", "model.ff_dim=128")
    en, it = load_split(prepared_path(config), "train")
    en, it = en[:64], it[:64]
    keras.utils.set_random_seed(0)
    model = compile_model(build_model(config, 6000, 6000), config)
    data = make_dataset((en, it), Batching.for_data(en, it, batch_size=32, buckets=1), seed=0, epochs=range(130))
    model.fit(data, epochs=1, steps_per_epoch=260, verbose=0)        # the 130 epochs' batches, in one fit epoch
    results = model.evaluate(make_dataset((en, it), 64, shuffle=False), verbose=0, return_dict=True)
    assert results["masked_accuracy"] >= 0.95, results


def test_train_writes_a_self_contained_run_that_reloads(prepared_tiny, tmp_path):
    config = small_config(prepared_tiny, tmp_path, "train.epochs=2", "train.max_steps=30",
                          "train.checkpoint_every_steps=10", "train.keep_checkpoints=2", "train.average_last=2")
    summary = train(config, verbose=0)
    run = run_path(config)
    assert summary["total_steps"] == 30 and summary["best_val_loss"] is not None
    assert 1 <= summary["batch_shapes"] <= 12 and summary["bucket_boundaries"][-1] == 21
    for name in ("config.yaml", "vectorizers.pkl", "model.keras", "best.keras", "averaged.keras", "history.json",
                 "train_summary.json", "checkpoint/model.keras", "checkpoint/state.json",
                 "checkpoint/step-00000020.weights.h5", "checkpoint/step-00000030.weights.h5"):
        assert (run / name).is_file(), name
    assert len(list((run / "checkpoint").glob("*.weights.h5"))) == 2
    assert any((run / "logs").rglob("*tfevents*"))
    history = json.loads((run / "history.json").read_text())
    assert history[0]["epoch"] == 1 and {"loss", "val_loss", "val_masked_accuracy"} <= set(history[0])
    en, it = load_split(prepared_path(config), "valid")
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
    state_file = run_path(config) / "checkpoint" / "state.json"
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
        en, it = load_split(prepared_path(config), "valid")
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
    run_path(config).mkdir(parents=True)
    model = compile_model(build_model(config, 6000, 6000), config)
    callback = Checkpointer(run_path(config), config, TrainState())
    callback.set_model(model)
    for epoch, val_loss in enumerate([3.0, 2.5, 2.7, 2.6]):
        model.stop_training = False
        callback.on_epoch_end(epoch, {"loss": 3.0, "val_loss": val_loss})
        assert model.stop_training == (epoch == 3), epoch
    assert callback.state.best_val_loss == 2.5 and callback.state.best_epoch == 2
    assert (run_path(config) / "best.keras").is_file()
    assert json.loads((run_path(config) / "history.json").read_text())[-1]["val_loss"] == 2.6


def test_time_budget_stops_training_and_leaves_the_epoch_open_for_resume(prepared_tiny, tmp_path):
    from pipeline.training import Checkpointer, TrainState
    config = small_config(prepared_tiny, tmp_path, "train.max_minutes=0.5")
    run_path(config).mkdir(parents=True)
    model = compile_model(build_model(config, 6000, 6000), config)
    callback = Checkpointer(run_path(config), config, TrainState(seconds=29.0), steps_per_epoch=100)
    callback.set_model(model)
    callback.on_train_begin()
    callback.on_step_dispatched(0)
    assert not model.stop_training and not callback.out_of_budget()
    callback.state.seconds = 30.0
    callback.on_step_dispatched(1)
    assert model.stop_training and callback.out_of_budget()
    callback.on_epoch_end(0, {"loss": 3.0, "val_loss": 2.9})
    state = json.loads((run_path(config) / "checkpoint" / "state.json").read_text())
    assert (state["epoch"], state["step_in_epoch"], state["global_step"]) == (0, 2, 2)
    assert state["history"][-1]["partial"] is True and state["seconds"] >= 30.0
    assert (run_path(config) / "best.keras").is_file()


def test_no_training_callback_makes_each_step_wait_for_its_logs(prepared_tiny, tmp_path):
    # Keras (JAX, PyTorch) converts a batch's logs in a worker thread, and lets the host run ahead of the device,
    # only if every callback is async_safe or leaves the per-batch hooks alone; Keras's TerminateOnNaN and a
    # Checkpointer counting steps in on_train_batch_end made every step wait for its values (a device sync)
    from pipeline.distribution import Distribution
    from pipeline.training import Checkpointer, CorpusValidation, Precompile, TrainState, training_callbacks
    config = small_config(prepared_tiny, tmp_path, "train.max_minutes=5")
    checkpointer = Checkpointer(run_path(config), config, TrainState())
    workers = Distribution(mode="data_parallel", replicas=2, workers=2)       # the workers' joint stop included
    listed = training_callbacks(config, run_path(config), checkpointer, CorpusValidation({"a": 0}, {"a": (1, 1)}),
                                workers, Precompile([], []), 2)
    assert {type(c).__name__ for c in listed} >= {"Precompile", "StopOnNaN", "CorpusValidation", "Checkpointer",
                                                   "StopTogether", "EpochProgress"}
    base = keras.callbacks.Callback
    waiting = [type(callback).__name__ for callback in listed if not getattr(callback, "async_safe", False)
               and (type(callback).on_train_batch_end is not base.on_train_batch_end
                    or type(callback).on_batch_end is not base.on_batch_end)]
    assert waiting in ([], ["TensorBoard"]), waiting    # TensorBoard: TensorFlow only, which never dispatches async


def test_step_hooks_run_in_the_loop_and_a_nan_loss_still_stops_training():
    import threading
    from nan_fits import fit_until_nan

    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    counter = fit_until_nan(model, np.full((400, 4), np.nan, "float32"), np.zeros((400, 1), "float32"), steps=50)
    # TensorFlow's Keras stops at the NaN step; JAX's and PyTorch's some steps later (those dispatched ahead)
    assert 1 <= counter.steps < 50 and counter.threads == {threading.main_thread()}, counter.steps


def _train_on(config, initial, batches, optimizer=None):
    """A fresh model with `initial` weights after one train_on_batch per (inputs, targets, weight) batch."""
    model = compile_model(build_model(config, 6000, 6000), config)
    if optimizer is not None:
        model.compile(optimizer=optimizer, loss=model.loss)
    model.set_weights(initial)
    for x, y, w in batches:
        model.train_on_batch(x, y, sample_weight=w)
    return model.get_weights()


def test_gradient_accumulation_equals_one_batch_of_the_union(prepared_tiny, tmp_path):
    from pipeline.datasets import batch_shape, gather_batch, group_weights
    # one embedding matrix (tiny.yaml's sharing), so TensorFlow's gradients are dense on both sides
    config = small_config(prepared_tiny, tmp_path, "model.dropout=0.0", "model.share_embeddings=true")
    accumulating = small_config(prepared_tiny, tmp_path, "model.dropout=0.0", "model.share_embeddings=true",
                                "train.accumulate_steps=3")
    en, it = load_split(prepared_path(config), "valid")
    batching = Batching((21,), batch_size=8, accumulate_steps=3)
    groups = [[np.arange(0, 8), np.arange(8, 11), np.arange(11, 19)], [np.arange(30, 38), np.arange(40, 46), np.arange(50, 52)]]
    micro = [rows for group in groups for rows in group]      # different row and token counts; padded to 8 rows
    weights = group_weights(it, micro, 3)
    assert not np.allclose(weights, 1.0)
    micro_batches = [(*gather_batch(en, it, rows, batch_shape(en, it, rows, batching)), np.full((8, 1), w, "float32"))
                     for rows, w in zip(micro, weights)]
    plain_batches = [(x, y, None) for x, y, _ in micro_batches]
    unions = [np.concatenate(group) for group in groups]
    union_batches = [(*gather_batch(en, it, rows, (len(rows), 20, 22)), None) for rows in unions]
    keras.utils.set_random_seed(0)
    initial = build_model(config, 6000, 6000).get_weights()

    def gap(a, b):
        return max(float(np.abs(x - y).max()) for x, y in zip(a, b))

    sgd = lambda k: keras.optimizers.SGD(0.5, gradient_accumulation_steps=k)   # the update is the gradient itself
    big = _train_on(config, initial, union_batches[:1], sgd(None))
    assert gap(big, initial) > 1e-2
    assert gap(_train_on(accumulating, initial, micro_batches[:3], sgd(3)), big) < 1e-6
    # the training optimizer (Adam, Noam schedule counted in updates), two updates: equal up to float noise,
    # which Adam's normalisation magnifies only where a gradient is near zero
    big = _train_on(config, initial, union_batches)
    exact = _train_on(accumulating, initial, micro_batches)
    differs = np.concatenate([np.abs(x - y).ravel() for x, y in zip(exact, big)])
    assert differs.max() < 2e-4 and np.mean(differs > 1e-6) < 1e-3, (differs.max(), np.mean(differs > 1e-6))
    assert gap(_train_on(accumulating, initial, plain_batches), big) > 2e-3     # a plain mean of batch means


def test_masked_loss_ignores_empty_rows_and_scales_with_the_row_weight(prepared_tiny):
    from pipeline.objectives import MaskedSparseCrossEntropy
    config, _ = prepared_tiny
    en, it = load_split(prepared_path(config), "valid")
    y = it[:4, 1:]
    logits = keras.random.normal((4, y.shape[1], 50), seed=0)
    padded_y = np.concatenate([y, np.zeros_like(y[:2])])
    padded_logits = keras.ops.concatenate([logits, keras.random.normal((2, y.shape[1], 50), seed=1)])
    loss = MaskedSparseCrossEntropy(0.1)
    mean = float(loss(y % 50, logits))
    assert float(loss(padded_y % 50, padded_logits)) == pytest.approx(mean, rel=1e-6)
    assert float(loss(y % 50, logits, sample_weight=np.full((4, 1), 2.5, "float32"))) == pytest.approx(2.5 * mean, rel=1e-6)


def test_train_with_token_batches_and_accumulation_counts_updates_and_shapes(prepared_tiny, tmp_path, capsys):
    from pipeline.training import format_summary
    config = small_config(prepared_tiny, tmp_path, "train.batch_tokens=600", "train.accumulate_steps=2",
                          "train.buckets=3", "train.epochs=1", "train.max_steps=5", "train.checkpoint_every_steps=0")
    summary = train(config, verbose=2)
    assert (summary["total_steps"], summary["updates"]) == (10, 5)
    assert summary["batch_shapes"] == len(summary["bucket_boundaries"]) == 3
    # the epoch was cut short by the budget: its progress line counts the 10 steps run, not the epoch's length
    (ran, length), = [map(int, line.split(" - ")[0].split("/")) for line in capsys.readouterr().out.splitlines()
                      if re.match(r"\s*\d+/\d+ - ", line)]
    assert ran == 10 < length
    assert "3 batch shapes" in format_summary(summary) and np.isfinite(summary["best_val_loss"])
    state = json.loads((run_path(config) / "checkpoint" / "state.json").read_text())
    optimizer_steps = keras.saving.load_model(run_path(config) / "checkpoint" / "model.keras").optimizer.iterations
    assert state["global_step"] == 10 and int(optimizer_steps) == 5


def test_resuming_a_run_whose_budget_is_spent_just_writes_its_final_model(prepared_tiny, tmp_path):
    from pipeline.training import train

    config = small_config(prepared_tiny, tmp_path, "train.max_steps=3", "train.checkpoint_every_steps=3",
                          "train.final_bleu_sentences=0")
    train(config, verbose=0)
    (run_path(config) / "model.keras").unlink()
    summary = train(config, resume=True, verbose=0)        # was: AttributeError, the checkpointer had no model
    assert summary["total_steps"] == 3 and summary["steps"] == 0
    assert (run_path(config) / "model.keras").is_file()
    # a checkpoint taken after an epoch's last batch but before its end (older code could leave one): resuming
    # goes on with the next epoch, instead of fitting zero batches of this one
    from pipeline.training import TrainingData
    state_file = run_path(config) / "checkpoint" / "state.json"
    state = json.loads(state_file.read_text())
    state["step_in_epoch"] = TrainingData.load(config).epoch_steps
    state_file.write_text(json.dumps(state))
    train(config, resume=True, verbose=0)
    resumed = json.loads(state_file.read_text())
    assert (resumed["epoch"], resumed["step_in_epoch"], resumed["global_step"]) == (state["epoch"] + 1, 0, 3)
