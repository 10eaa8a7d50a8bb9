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
