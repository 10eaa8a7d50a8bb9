"""How much matmul work a training step does, and how much a device could do: FLOP/s and MFU.

The count is the usual analytic one (as in the PaLM paper's MFU): matmuls only, on non-padding tokens,
forward + backward = 3 x forward, 2 FLOPs per multiply-add. Padding, softmax, norms and the optimizer are
not counted, so MFU here is a share of useful work, lower than a profiler's utilisation.
"""
from __future__ import annotations

import numpy as np

# Dense bfloat16 tensor-core peaks from the vendors' data sheets (FLOP/s), by a lower-case substring of the
# device's name; the most specific first. The H100 and H200 lent to this project measured about 790-800
# TFLOP/s on an 8192^3 bfloat16 matmul (`bench/bench_train_gpu.py --peak` measures it on any device).
BF16_PEAKS = [("h200", 989.4e12), ("h100 pcie", 756.0e12), ("h100", 989.4e12), ("a100", 312.0e12),
              ("l40s", 362.1e12), ("l4", 121.0e12), ("a10g", 70.0e12), ("a10", 125.0e12), ("rtx 4090", 165.2e12),
              ("rtx 3090", 71.0e12), ("v100", 125.0e12), ("t4", 65.0e12)]


def train_flops(d_model: int, ff_dim: int, encoder_layers: int, decoder_layers: int, target_vocab: int,
                source_lengths: np.ndarray, target_lengths: np.ndarray) -> float:
    """Matmul FLOPs of one training step over these sentences (non-padding tokens only).

    Multiply-adds per source token: each encoder layer 4d^2 (attention projections) + 2*d*ff (feed-forward),
    plus each decoder layer's cross-attention keys and values, 2d^2; per target token: each decoder layer
    6d^2 (self-attention 4d^2, cross-attention query and output 2d^2) + 2*d*ff, plus the output projection
    d*V. Attention scores and their weighted sums add 2*d*Lq*Lk per layer and sentence (encoder Ls*Ls,
    decoder Lt*Lt and Lt*Ls). FLOPs = 2 per multiply-add, times 3 for forward and backward.
    """
    src, tgt = np.asarray(source_lengths, np.float64), np.asarray(target_lengths, np.float64)
    d, ff = d_model, ff_dim
    per_source = encoder_layers * (4 * d * d + 2 * d * ff) + decoder_layers * 2 * d * d
    per_target = decoder_layers * (6 * d * d + 2 * d * ff) + d * target_vocab
    attention = 2 * d * (encoder_layers * src * src + decoder_layers * (tgt * tgt + tgt * src))
    return 6 * float(src.sum() * per_source + tgt.sum() * per_target + attention.sum())


def config_train_flops(config, target_vocab: int, source_lengths: np.ndarray, target_lengths: np.ndarray) -> float:
    """`train_flops` for a config's model."""
    m = config.model
    return train_flops(m.d_model, m.ff_dim, m.encoder_layers, m.decoder_layers, target_vocab,
                       source_lengths, target_lengths)


def device_name() -> str:
    """The first accelerator's name (e.g. "NVIDIA H100 80GB HBM3"), else "cpu"."""
    import keras

    backend = keras.backend.backend()
    try:
        if backend == "jax":
            import jax
            device = jax.devices()[0]
            return "cpu" if device.platform == "cpu" else str(getattr(device, "device_kind", device.platform))
        if backend == "torch":
            import torch
            return torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"
        if backend == "tensorflow":
            import tensorflow as tf
            gpus = tf.config.list_physical_devices("GPU")
            return tf.config.experimental.get_device_details(gpus[0]).get("device_name", "gpu") if gpus else "cpu"
    except Exception:            # a device query is informative only; never stop training for it
        return "unknown"
    return "cpu"


def bf16_peak(name: str) -> float | None:
    """The data-sheet dense bfloat16 peak (FLOP/s) of a device by its name, or None when unknown (CPUs)."""
    lowered = name.lower()
    return next((peak for key, peak in BF16_PEAKS if key in lowered), None)
