"""A fit that a NaN loss stops, through training's callback list (`StepCallbacks` + `StopOnNaN`): shared by
test_training.py (TensorFlow, this process) and jax_only_worker.py (JAX, where logs are read in worker threads)."""
import threading

import keras
import numpy as np

from pipeline.training import StepCallbacks, StopOnNaN


class StepCounter(keras.callbacks.Callback):
    """Counts `on_step_dispatched` calls and the threads they came from."""

    def __init__(self):
        super().__init__()
        self.steps, self.threads = 0, set()

    def on_step_dispatched(self, batch: int) -> None:
        self.steps += 1
        self.threads.add(threading.current_thread())


def fit_until_nan(model: keras.Model, x: np.ndarray, y: np.ndarray, steps: int, batch_size: int = 8) -> StepCounter:
    """`model` (compiled) fit on `steps` batches of (x, y) with StopOnNaN; the step counter after it stopped."""
    counter = StepCounter()
    listed = StepCallbacks([counter, StopOnNaN()], add_history=True, model=model, verbose=0, epochs=1, steps=steps)
    model.fit(x, y, batch_size=batch_size, epochs=1, steps_per_epoch=steps, verbose=0, callbacks=listed)
    return counter
