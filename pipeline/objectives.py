"""What training optimises and reports: the warm-up schedule, the masked loss and the masked accuracy."""
from __future__ import annotations

import keras
from keras import ops

from pipeline.layers import PACKAGE


@keras.saving.register_keras_serializable(PACKAGE)
class NoamSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """lr = scale * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5) ("Attention Is All You Need").

    `step` counts optimizer updates: with gradient accumulation Keras passes the micro-batch
    count, which is divided by `accumulate_steps` here.
    """

    def __init__(self, d_model: int, warmup_steps: int = 4000, scale: float = 1.0, accumulate_steps: int = 1):
        self.d_model, self.warmup_steps, self.scale = d_model, warmup_steps, scale
        self.accumulate_steps = accumulate_steps

    def __call__(self, step):
        if self.accumulate_steps > 1:
            step = ops.floor_divide(step, self.accumulate_steps)
        step = ops.cast(step, "float32") + 1.0
        decay = ops.minimum(ops.rsqrt(step), step * (self.warmup_steps ** -1.5))
        return self.scale * (self.d_model ** -0.5) * decay

    def get_config(self):
        return {"d_model": self.d_model, "warmup_steps": self.warmup_steps, "scale": self.scale,
                "accumulate_steps": self.accumulate_steps}


@keras.saving.register_keras_serializable(PACKAGE)
class MaskedSparseCrossEntropy(keras.losses.Loss):
    """Token cross-entropy from logits, with label smoothing, averaged over non-padding targets.

    `call` gives each token its share of the batch mean (0 for padding) and the reduction adds
    them up, so a per-row `sample_weight` of shape (batch, 1) scales the batch's mean: that is how
    gradient accumulation weighs micro-batches by their token counts (`datasets.group_weights`).
    """

    def __init__(self, label_smoothing: float = 0.0, name: str = "masked_cross_entropy", **kwargs):
        kwargs["reduction"] = "sum_over_batch_size"     # see `call`; also for files saved with another
        super().__init__(name=name, **kwargs)
        self.label_smoothing = label_smoothing

    def call(self, y_true, y_pred):
        log_probs = ops.log_softmax(ops.cast(y_pred, "float32"), axis=-1)            # (batch, tgt, vocab)
        labels = ops.expand_dims(ops.cast(y_true, "int32"), -1)
        loss = -ops.squeeze(ops.take_along_axis(log_probs, labels, axis=-1), -1)      # (batch, tgt)
        if self.label_smoothing:
            loss = (1.0 - self.label_smoothing) * loss - self.label_smoothing * ops.mean(log_probs, axis=-1)
        mask = ops.cast(ops.not_equal(y_true, 0), "float32")
        # Each token carries its share of the batch mean (0 for padding), scaled by the element count that the
        # "sum_over_batch_size" reduction divides by; that reduction, unlike "sum", is also the one Keras divides
        # by the replica count under a tf.distribute strategy, whose replicas' gradients are summed.
        size = ops.cast(ops.size(mask), "float32")
        return loss * mask * (size / ops.maximum(ops.sum(mask), 1.0))                # (batch, tgt)

    def get_config(self):
        return {**super().get_config(), "label_smoothing": self.label_smoothing}


@keras.saving.register_keras_serializable(PACKAGE)
class MaskedAccuracy(keras.metrics.Metric):
    """Share of non-padding target tokens predicted exactly (token-weighted over all batches)."""

    def __init__(self, name: str = "masked_accuracy", **kwargs):
        super().__init__(name=name, **kwargs)
        self.hits = self.add_variable(shape=(), initializer="zeros", name="hits")
        self.total = self.add_variable(shape=(), initializer="zeros", name="total")

    def update_state(self, y_true, y_pred, sample_weight=None):
        mask = ops.not_equal(y_true, 0)
        hit = ops.logical_and(ops.equal(ops.cast(y_true, "int32"), ops.cast(ops.argmax(y_pred, -1), "int32")), mask)
        self.hits.assign_add(ops.sum(ops.cast(hit, "float32")))
        self.total.assign_add(ops.sum(ops.cast(mask, "float32")))

    def result(self):
        return self.hits / ops.maximum(self.total, 1.0)
