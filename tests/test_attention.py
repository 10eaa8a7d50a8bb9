"""The fused attention path (`keras.ops.dot_product_attention`) equals the explicit einsum path, masks included."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT
from pipeline.rundir import prepared_path

CASES = ("encoder_self", "decoder_self", "cross")


def attention_case(case: str, dtype: str = "float32"):
    """A MultiHeadAttention layer and (query, source, mask, causal) for one kind of attention, with padding."""
    import keras

    from pipeline.layers import MultiHeadAttention, attention_mask

    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    layer = MultiHeadAttention(4, 8, dropout=0.3, dtype=dtype)
    query = rng.normal(size=(3, 7, 32)).astype("float32")      # odd lengths: cuDNN trains on even ones only
    target_mask = np.array([[1] * 7, [1] * 4 + [0] * 3, [1] * 2 + [0] * 5], bool)
    source = query if case != "cross" else rng.normal(size=(3, 9, 32)).astype("float32")
    source_mask = target_mask if case != "cross" else np.array([[1] * 9, [1] * 5 + [0] * 4, [1] + [0] * 8], bool)
    layer.build(query.shape, source.shape)
    return layer, query, source, attention_mask(target_mask, source_mask), case == "decoder_self"


def max_differences(dtype: str = "float32") -> dict[str, dict[str, float]]:
    """Per case: largest |fused - explicit| and |fused - fused without the mask| (which must be large)."""
    from keras import ops

    out = {}
    for case in CASES:
        layer, query, source, mask, causal = attention_case(case, dtype)
        fused = ops.convert_to_numpy(ops.cast(layer(query, source, mask, causal=causal), "float32"))
        explicit, weights = layer(query, source, mask, causal=causal, return_scores=True)
        explicit = ops.convert_to_numpy(ops.cast(explicit, "float32"))
        unmasked = ops.convert_to_numpy(ops.cast(layer(query, source, ops.ones_like(mask)), "float32"))
        out[case] = {"fused_vs_explicit": float(np.abs(fused - explicit).max()),
                     "mask_matters": float(np.abs(fused - unmasked).max()),
                     "weights_shape": list(weights.shape)}
    return out


def test_fused_attention_equals_the_explicit_path_with_padding_and_causal_masks():
    differences = max_differences()
    for case in CASES:
        assert differences[case]["fused_vs_explicit"] < 1e-5, (case, differences[case])
        assert differences[case]["mask_matters"] > 1e-2, (case, differences[case])   # the masks are in play
    assert differences["cross"]["weights_shape"] == [3, 4, 7, 9]


def test_fused_causal_attention_ignores_later_and_padded_keys():
    from keras import ops

    layer, query, source, mask, _ = attention_case("decoder_self")
    changed = query.copy()
    changed[:, 3:] += 5.0               # later positions (and, in rows 1 and 2, padded ones) change
    a = ops.convert_to_numpy(layer(query, query, mask, causal=True))
    b = ops.convert_to_numpy(layer(changed, changed, mask, causal=True))
    assert np.allclose(a[:, :3], b[:, :3], atol=1e-5) and not np.allclose(a[0, 3:], b[0, 3:], atol=1e-2)


def test_mixed_bfloat16_fused_attention_stays_close_to_the_explicit_path():
    differences = max_differences("mixed_bfloat16")
    for case in CASES:
        assert differences[case]["fused_vs_explicit"] < 5e-2, (case, differences[case])


def test_fused_attention_equals_the_explicit_path_on_jax():
    pytest.importorskip("jax")
    code = ("import json, sys; sys.path.insert(0, 'tests'); from test_attention import max_differences; "
            "print(json.dumps(max_differences()))")
    env = {**os.environ, "KERAS_BACKEND": "jax", "PYTHONPATH": str(ROOT), "JAX_PLATFORMS": "cpu"}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=180)
    assert result.returncode == 0, result.stderr[-2000:]
    differences = json.loads(result.stdout.strip().splitlines()[-1])
    for case in CASES:
        assert differences[case]["fused_vs_explicit"] < 1e-5, (case, differences[case])
        assert differences[case]["mask_matters"] > 1e-2, (case, differences[case])


CUDNN_RULES = '''
import json, sys
sys.path.insert(0, "tests")
import numpy as np
import keras
from keras import ops
from jax._src.cudnn.fused_attention_stablehlo import (AttentionLayout, check_is_flash_attention, check_layout,
                                                      combine_bias_and_mask)
import pipeline.layers as layers
from test_attention import CASES, attention_case

BTNH = AttentionLayout.BTNH
calls, refused = [], []
keras_attention, jax_attention = keras.ops.dot_product_attention, getattr(layers, "fused_attention", None)


def cudnn_checks(query, key, value, bias, kv_seqlen):
    """The checks jax.nn.dot_product_attention(implementation="cudnn") makes before it calls cuDNN, with the
    even-length rule of masked patterns in training that JAX 0.11.2 applied to key lengths on an H100."""
    check_layout(query, key, value, bias, None, kv_seqlen, None, None, None, None, BTNH)
    check_is_flash_attention(query, key, value, BTNH.value, 90000, True, True)


import jax
jax_dot_product_attention = jax.nn.dot_product_attention


def recording_jax(query, key, value, *args, key_value_seq_lengths=None, implementation=None, **kwargs):
    """What reaches JAX on the cuDNN path, checked as cuDNN would check it, then run by XLA (no GPU here)."""
    try:
        cudnn_checks(query, key, value, None, key_value_seq_lengths)
    except (ValueError, NotImplementedError) as exc:
        refused.append(str(exc))
    seen.append([int(x) for x in np.asarray(key_value_seq_lengths)])
    return jax_dot_product_attention(query, key, value, *args, key_value_seq_lengths=key_value_seq_lengths,
                                     implementation="xla", **kwargs)



def recording_keras(query, key, value, bias=None, mask=None, **kwargs):
    bias = combine_bias_and_mask(bias, mask, query.dtype)
    try:
        check_layout(query, key, value, bias, None, None, None, None, None, None, BTNH)
    except (ValueError, NotImplementedError) as exc:
        refused.append(str(exc))
    calls.append("keras")
    return keras_attention(query, key, value, bias=None, mask=mask, **kwargs)


keras.ops.dot_product_attention = recording_keras
keras.mixed_precision.set_global_policy("mixed_bfloat16")    # as training sets it: every sublayer in bfloat16
out = {}
for case in CASES:
    layer, query, source, mask, causal = attention_case(case, "mixed_bfloat16")
    default = layer(query, source, mask, causal=causal)           # CPU: the keras.ops path
    explicit, _ = layer(query, source, mask, causal=causal, return_scores=True)
    assert str(default.dtype) == "bfloat16", default.dtype
    # the cuDNN path's arguments (recording_jax), with the same kernel choice forced to XLA (no GPU here)
    seen = []

    def forced(q, k, v, m, scale, causal=False, implementation=None):
        jax.nn.dot_product_attention = recording_jax              # only here: Keras's own path calls it too
        try:
            return jax_attention(q, k, v, m, scale, causal, implementation="xla")
        finally:
            jax.nn.dot_product_attention = jax_dot_product_attention

    if jax_attention is None:           # no cuDNN path at all
        refused.append("no cuDNN path (pipeline.layers.fused_attention)")
        continue
    layers.fused_attention = forced
    cudnn_path = layer(query, source, mask, causal=causal)
    layers.fused_attention = jax_attention
    as_float = lambda x: np.asarray(ops.convert_to_numpy(ops.cast(x, "float32")))
    out[case] = {"keras_vs_explicit": float(np.abs(as_float(default) - as_float(explicit)).max()),
                 "cudnn_path_vs_explicit": float(np.abs(as_float(cudnn_path) - as_float(explicit)).max()),
                 "lengths": seen[0]}
print(json.dumps({"calls": calls, "refused": refused, "cases": out}))
'''


def test_attention_arguments_meet_cudnn_layout_rules_and_the_cudnn_path_equals_the_explicit_one():
    """What cuDNN's flash attention refused on every layer on a GPU (a key mask broadcast over queries:
    "Bias must have same seq length as QKV, got 1 and 100") is checked here on a CPU with JAX's own checks:
    the mask reaching `keras.ops.dot_product_attention` has full query and key lengths, and the arguments of
    the cuDNN path (key lengths, no bias) pass `check_layout` and `check_is_flash_attention` as in training;
    run with the kernel forced to XLA, that path equals the explicit attention under mixed_bfloat16."""
    pytest.importorskip("jax")
    env = {**os.environ, "KERAS_BACKEND": "jax", "PYTHONPATH": str(ROOT), "JAX_PLATFORMS": "cpu"}
    result = subprocess.run([sys.executable, "-c", CUDNN_RULES], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=180)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["refused"] == [], report["refused"]
    assert report["calls"] == ["keras"] * len(CASES)
    for case in CASES:
        figures = report["cases"][case]
        assert figures["keras_vs_explicit"] < 5e-2 and figures["cudnn_path_vs_explicit"] < 5e-2, (case, figures)
    assert report["cases"]["cross"]["lengths"] == [9, 5, 1]
    assert report["cases"]["encoder_self"]["lengths"] == [7, 4, 2]


def test_nmt_attention_xla_turns_the_cudnn_kernel_off(monkeypatch):
    """Where cuDNN's flash attention would apply (a bfloat16 query, head dimension 64, a Hopper-class device),
    `NMT_ATTENTION=xla` sends attention to XLA's kernel instead: the escape hatch for a broken cuDNN."""
    from types import SimpleNamespace

    from pipeline import layers

    monkeypatch.setattr(layers, "_cudnn_attention_device", lambda: 256)
    query = SimpleNamespace(shape=(2, 5, 8, 64), dtype="bfloat16")         # as a JAX array reports them
    monkeypatch.delenv("NMT_ATTENTION", raising=False)
    assert layers.cudnn_attention_applies(query)
    assert not layers.cudnn_attention_applies(SimpleNamespace(shape=(2, 5, 8, 64), dtype="float32"))
    monkeypatch.setenv("NMT_ATTENTION", "xla")
    assert not layers.cudnn_attention_applies(query)
    monkeypatch.setenv("NMT_ATTENTION", "cudnn")            # forced, but only JAX has it: this process is TensorFlow
    assert not layers.cudnn_attention_applies(query)
    monkeypatch.setenv("NMT_ATTENTION", "flash")
    with pytest.raises(ValueError, match="environment variable NMT_ATTENTION: must be one of auto, xla, cudnn, "
                                         "got 'flash'"):
        layers.cudnn_attention_applies(query)


def test_a_cudnn_failure_ends_with_the_way_round_it(prepared_tiny, tmp_path):
    """cuDNN's attention forced where it cannot run (`NMT_ATTENTION=cudnn`, JAX on this CPU: "cuDNN is not
    detected", raised in JAX's cuDNN code as a refusal on a GPU is): training fails with the traceback and a
    last line that says what to set instead, exit status 1. (XLA's kernel trains: every JAX test on this CPU.)"""
    pytest.importorskip("jax")
    config, _ = prepared_tiny
    workdir = tmp_path / "work"
    workdir.mkdir()
    os.symlink(prepared_path(config), workdir / "prepared")
    small = ["model.d_model=32", "model.num_heads=4", "model.ff_dim=64", "model.encoder_layers=1",
             "model.decoder_layers=1", "train.max_steps=2", "train.final_bleu_sentences=0"]
    command = [sys.executable, str(ROOT / "scripts" / "train.py"), "--config", str(ROOT / "configs" / "tiny.yaml"),
               "--workdir", str(workdir), "--verbose", "0", *[flag for value in small for flag in ("--set", value)]]
    env = {**os.environ, "KERAS_BACKEND": "jax", "JAX_PLATFORMS": "cpu", "NMT_COMPILATION_CACHE": "off"}
    failed = subprocess.run(command, env={**env, "NMT_ATTENTION": "cudnn"}, capture_output=True, text=True,
                            timeout=300)
    last = failed.stderr.strip().splitlines()[-1]
    assert failed.returncode == 1 and "Traceback" in failed.stderr, failed.stderr[-3000:]
    assert last.startswith("error: cuDNN's fused attention failed (") and "NMT_ATTENTION=xla" in last, last
    assert "(RuntimeError: cuDNN" in last, last              # JAX's own message, not the Keras layer's wrapper
    wrong = subprocess.run(command, env={**env, "NMT_ATTENTION": "flash"}, capture_output=True, text=True, timeout=300)
    assert wrong.returncode == 2 and wrong.stderr.strip().splitlines() == [
        "error: environment variable NMT_ATTENTION: must be one of auto, xla, cudnn, got 'flash'"], wrong.stderr[-2000:]
