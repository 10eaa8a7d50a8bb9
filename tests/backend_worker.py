"""Run in a subprocess by test_backends.py: train, save and reload on the backend named by KERAS_BACKEND.

usage: backend_worker.py WORKDIR OUT.npz [--mirrored]
"""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

if "--mirrored" in sys.argv:
    import tensorflow as tf
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

import numpy as np  # noqa: E402
import keras  # noqa: E402

from pipeline.config import load_config  # noqa: E402
from pipeline.datasets import load_split  # noqa: E402
from pipeline.serializable import load_model
from pipeline.training import train  # noqa: E402
from pipeline.rundir import prepared_path, run_path

workdir, out = sys.argv[1], sys.argv[2]
overrides = ["model.d_model=32", "model.num_heads=4", "model.ff_dim=64", "model.encoder_layers=1",
             "model.decoder_layers=1", "train.batch_size=32", "train.epochs=1", "train.max_steps=6",
             "train.jit_compile=false", "model.share_embeddings=false"]
if "--mirrored" in sys.argv:
    overrides.append("train.distribute=mirrored")
config = load_config(Path(__file__).resolve().parent.parent / "configs" / "tiny.yaml", overrides, workdir)
summary = train(config, verbose=0)
model = load_model(run_path(config), "model")
en, it = load_split(prepared_path(config), "valid")
logits = np.asarray(model({"encoder_inputs": en[:8], "decoder_inputs": it[:8, :-1]}, training=False))
np.savez(out, logits=logits, loss=summary["best_val_loss"] or np.nan, steps=summary["total_steps"])
print("backend", keras.backend.backend(), "tensorflow imported:", "tensorflow" in sys.modules)
if "--mirrored" in sys.argv:
    import tensorflow as tf
    print("replicas", len(tf.config.list_logical_devices("CPU")))
