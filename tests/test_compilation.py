"""pipeline.compilation and pipeline.flops: the cache's place, the compile-time count, the program store's
restricted loading and pruning, the FLOP count and device peaks. (The whole path, a second run compiling at least
10x less, is tested in test_jax_only.py.)"""
import ast
import io
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT
from pipeline.compilation import CompileLog, ExecutableUnpickler, ProgramStore, cache_root
from pipeline.extras import choose_backend
from pipeline.flops import bf16_peak, train_flops


def test_cache_root_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("NMT_COMPILATION_CACHE", str(tmp_path / "c"))
    assert cache_root() == tmp_path / "c"
    for off in ("off", "0", "", "none"):
        monkeypatch.setenv("NMT_COMPILATION_CACHE", off)
        assert cache_root() is None
    monkeypatch.delenv("NMT_COMPILATION_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "ita-nmt" / "xla"


def test_compile_seconds_count_programs_compiled_side_by_side_once():
    log = CompileLog(measured=True, spans=[(0.0, 4.0), (1.0, 5.0), (4.5, 6.0), (10.0, 11.0)])
    assert log.seconds == pytest.approx(7.0)                 # [0, 6] and [10, 11]
    assert CompileLog().seconds == 0.0


def test_choose_backend_prefers_an_explicit_choice_then_tensorflow(monkeypatch):
    monkeypatch.setenv("KERAS_BACKEND", "torch")
    assert choose_backend() == "torch"
    monkeypatch.delenv("KERAS_BACKEND")
    assert choose_backend() == "tensorflow"                   # installed here (the test extra)
    assert "KERAS_BACKEND" not in os.environ


class Shell:
    def __reduce__(self):
        return (os.system, ("echo stored program ran a command",))


def test_a_stored_program_loads_only_jax_numpy_and_ml_dtypes_classes(tmp_path, capsys):
    pytest.importorskip("jax")
    import jax

    path = tmp_path / "train-0.program"
    path.write_bytes(pickle.dumps(Shell()))
    assert ProgramStore(tmp_path).load(path) is None          # refused, reported, compiled again
    assert "not loaded (UnpicklingError)" in capsys.readouterr().out
    backend = jax.devices("cpu")[0].client
    with pytest.raises(pickle.UnpicklingError, match="may not hold posix.system|may not hold os.system"):
        ExecutableUnpickler(io.BytesIO(pickle.dumps(Shell())), backend, backend.devices()).load()
    allowed = pickle.dumps({"shape": np.zeros(3, np.int32)})
    assert ExecutableUnpickler(io.BytesIO(allowed), backend, backend.devices()).load()["shape"].shape == (3,)


def test_the_program_store_prunes_the_least_recently_used(tmp_path):
    store = ProgramStore(tmp_path)
    for n in range(5):
        (tmp_path / f"p{n}.program").write_bytes(b"x" * 100)
        os.utime(tmp_path / f"p{n}.program", (1000 + n, 1000 + n))
    store.prune(limit=250)
    assert sorted(p.name for p in tmp_path.glob("*.program")) == ["p3.program", "p4.program"]


def test_tensorflow_s_cache_is_pruned_when_it_is_turned_on(monkeypatch, tmp_path):
    from pipeline import compilation

    folder = tmp_path / "tensorflow"
    folder.mkdir()
    for n in range(5):
        path = folder / f"xla_compile_cache__{n}__XLA_CPU_JIT.pb"
        path.write_bytes(b"x" * 100)
        os.utime(path, (1000 + n, 1000 + n))
    monkeypatch.setenv("NMT_COMPILATION_CACHE", str(tmp_path))
    monkeypatch.setenv("TF_XLA_FLAGS", f"--tf_xla_persistent_cache_directory={folder}")   # as _bootstrap sets it
    monkeypatch.setattr(compilation, "_state", {"enabled": None})
    monkeypatch.setattr(compilation, "MAX_CACHE_BYTES", 250)
    assert compilation.enable_persistent_cache("tensorflow") == folder
    assert sorted(path.name.split("__")[1] for path in folder.iterdir()) == ["3", "4"]   # it bounds itself not at all


def test_stored_programs_of_one_attention_kernel_are_not_loaded_for_the_other(monkeypatch, tiny_config_path):
    """`NMT_ATTENTION=xla` (the way round a cuDNN that refuses a shape) must not load the cuDNN programs that a
    run without it stored: the kernel is part of the programs' key."""
    pytest.importorskip("jax")
    from pipeline.config import load_config
    from pipeline.model import build_model
    from pipeline.training import compile_model

    small = ["model.d_model=32", "model.num_heads=4", "model.ff_dim=64", "model.encoder_layers=1",
             "model.decoder_layers=1"]
    model = compile_model(build_model(load_config(tiny_config_path, small, None), 300, 300),
                          load_config(tiny_config_path, small, None))
    monkeypatch.delenv("NMT_ATTENTION", raising=False)
    default = ProgramStore.fingerprint(model)
    monkeypatch.setenv("NMT_ATTENTION", "xla")
    assert ProgramStore.fingerprint(model) != default
    monkeypatch.setenv("NMT_ATTENTION", "auto")
    assert ProgramStore.fingerprint(model) == default


def test_train_flops_by_hand():
    # d 2, ff 4, one layer each side, vocabulary 10; one sentence of 3 source and 2 target tokens
    per_source = 1 * (4 * 4 + 2 * 2 * 4) + 1 * 2 * 4                   # 40 multiply-adds
    per_target = 1 * (6 * 4 + 2 * 2 * 4) + 2 * 10                      # 60
    attention = 2 * 2 * (1 * 9 + 1 * (4 + 6))                          # 76
    expected = 6 * (3 * per_source + 2 * per_target + attention)
    assert train_flops(2, 4, 1, 1, 10, np.array([3]), np.array([2])) == expected


def test_device_peaks_by_name():
    assert bf16_peak("NVIDIA H100 80GB HBM3") == pytest.approx(989.4e12)
    assert bf16_peak("NVIDIA H100 PCIe") == pytest.approx(756e12)
    assert bf16_peak("NVIDIA H200") == pytest.approx(989.4e12)
    assert bf16_peak("cpu") is None


JAX_CACHE_WITHOUT_FILELOCK = '''
import sys
sys.modules["filelock"] = None                 # as on a machine without it (jax[cpu] does not pull it in)
import jax, jax.numpy as jnp
from pipeline.compilation import enable_persistent_cache
folder = enable_persistent_cache("jax")
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
jax.jit(lambda x: jnp.tanh(x) @ x.T + 1.5)(jnp.ones((8, 8))).block_until_ready()
print(sorted(p.name for p in folder.iterdir()))
'''


def test_jax_persistent_cache_works_without_filelock(tmp_path):
    """JAX bounds its cache only with filelock installed; asked to without it, every read and write fails with
    a warning and nothing is cached. Without filelock the cache is bounded by pruning instead, and works."""
    pytest.importorskip("jax")
    env = {**os.environ, "KERAS_BACKEND": "jax", "JAX_PLATFORMS": "cpu", "PYTHONPATH": str(ROOT),
           "NMT_COMPILATION_CACHE": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", JAX_CACHE_WITHOUT_FILELOCK], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "filelock" not in result.stderr, result.stderr[-2000:]
    assert any(name.startswith("jit_") for name in ast.literal_eval(result.stdout.strip().splitlines()[-1])), result.stdout


SPLIT_STEP = '''
import json, sys
import numpy as np
import jax
import keras
from pipeline.compilation import split_train_step
from pipeline.config import load_config
from pipeline.datasets import format_dataset
from pipeline.layers import Dropout
from pipeline.model import build_model
from pipeline.training import compile_model

keras.utils.set_random_seed(7)
report = {}
rng = np.random.default_rng(0)
# mixed_float16 trains with a LossScaleOptimizer (here in float32: XLA:CPU has no float16 x float16 -> float32 dot):
# its scale grows after 2 finite steps in "loss_scale"; in "overflow" the scale is inf, so are the gradients, and
# every step is skipped (the scale halved: still inf)
SCALES = {"loss_scale": dict(dynamic_growth_steps=2), "overflow": dict(initial_scale=float("inf"))}
for case, accumulate in (("1", 1), ("2", 2), ("loss_scale", 1), ("overflow", 1)):
    config = load_config(sys.argv[1], [*sys.argv[2:], f"train.accumulate_steps={accumulate}"], None)
    model = compile_model(build_model(config, 300, 300), config)
    if case in SCALES:
        model.optimizer = keras.optimizers.LossScaleOptimizer(model.optimizer, **SCALES[case])
    ids = lambda length: np.where(np.arange(length) < rng.integers(3, length, (8, 1)), rng.integers(3, 300, (8, length)), 0)
    batches = []
    for _ in range(3):
        inputs, targets = format_dataset(ids(11).astype("int32"), ids(9).astype("int32"))
        batches.append((inputs, targets) + ((rng.uniform(0.5, 1.5, (8, 1)).astype("float32"),) if accumulate > 1 else ()))
    model._symbolic_build(data_batch=batches[0])
    state = model._get_jax_state(trainable_variables=True, non_trainable_variables=True, optimizer_variables=True,
                                 metrics_variables=True)
    copy = lambda tree: jax.tree.map(lambda x: np.array(x), tree)
    fused, split = copy(state), copy(state)
    train_step = jax.jit(model.train_step)
    gradients, update = split_train_step(model)
    for batch in batches:
        fused_logs, fused = train_step(fused, batch)
        trainable, non_trainable, optimizer_variables, metrics = split
        grads, split_logs, non_trainable, metrics = gradients(trainable, non_trainable, optimizer_variables, metrics, batch)
        trainable, optimizer_variables = update(trainable, optimizer_variables, grads)
        split = (trainable, non_trainable, optimizer_variables, metrics)
    pairs = list(zip(jax.tree.leaves((fused_logs, fused)), jax.tree.leaves((split_logs, split))))
    report[case] = {"optimizer": type(model.optimizer).__name__, "leaves": len(pairs), "worst": max(float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64)))) for a, b in pairs),
                          "moved": float(np.max(np.abs(np.asarray(fused[0][1]) - np.asarray(state[0][1])))),
                          "iterations": [int(np.asarray(v)) for v, var in zip(fused[2], model.optimizer.variables) if var.name == "iteration"],
                          "scale": [float(np.asarray(v)) for v, var in zip(fused[2], model.optimizer.variables) if "scale" in var.name]}
layer = Dropout(0.25, seed=3)
x = np.ones((64, 512), "float32")
first, second = np.asarray(layer(x, training=True)), np.asarray(layer(x, training=True))
again = np.asarray(Dropout(0.25, seed=3)(x, training=True))
report["dropout"] = {"zeros": float(np.mean(first == 0)), "kept": sorted(set(first[first != 0].tolist())),
                     "differs": bool(np.any(first != second)), "repeatable": bool(np.array_equal(first, again)),
                     "inference": bool(np.array_equal(np.asarray(layer(x, training=False)), x))}
print(json.dumps(report))
'''


def test_split_training_step_equals_keras_step_and_dropout_draws_philox_masks(tiny_config_path):
    """The precompiled training step is two programs (gradients per batch shape, one optimizer update): three
    steps of it give the same logs, weights, optimizer and seed states as Keras's own fused `train_step`, with
    and without gradient accumulation (loss weights), and with mixed_float16's dynamic loss scaling. JAX dropout (Philox bits) drops `rate` of the elements,
    scales the rest by 1/(1-rate), draws a new mask per call, repeats for a seed, and is off at inference."""
    pytest.importorskip("jax")
    small = ["model.d_model=32", "model.num_heads=4", "model.ff_dim=64", "model.encoder_layers=1",
             "model.decoder_layers=1", "data.max_length=12", "train.warmup_steps=2"]
    env = {**os.environ, "KERAS_BACKEND": "jax", "JAX_PLATFORMS": "cpu", "PYTHONPATH": str(ROOT),
           "NMT_COMPILATION_CACHE": "off"}
    result = subprocess.run([sys.executable, "-c", SPLIT_STEP, str(tiny_config_path), *small], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "donated buffers were not usable" not in result.stderr, result.stderr[-3000:]    # a warning per program
    import json
    report = json.loads(result.stdout.strip().splitlines()[-1])
    for case in ("1", "2", "loss_scale", "overflow"):
        assert report[case]["leaves"] > 20 and report[case]["worst"] < 1e-5, report
    for case in ("1", "2", "loss_scale"):
        assert report[case]["moved"] > 1e-4, report
    assert report["1"]["iterations"] == report["2"]["iterations"] == [3], report
    assert sorted(report["loss_scale"]["iterations"]) == [0, 3], report       # Adam's; the wrapper's own stays 0
    assert report["loss_scale"]["optimizer"] == "LossScaleOptimizer", report
    assert report["loss_scale"]["leaves"] > report["1"]["leaves"], report          # the loss scale's own state
    assert report["loss_scale"]["scale"] == [2.0 ** 16], report                    # grown once, after 2 steps
    assert report["overflow"]["moved"] == 0 and report["overflow"]["scale"] == [float("inf")], report  # skipped
    dropout = report["dropout"]
    assert abs(dropout["zeros"] - 0.25) < 0.01 and dropout["kept"] == [pytest.approx(1 / 0.75)], dropout
    assert dropout["differs"] and dropout["repeatable"] and dropout["inference"], dropout
