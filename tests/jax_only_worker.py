"""Run by test_jax_only.py where TensorFlow cannot be imported: the command-line scripts and the Python API on a
trained run, in one process, so that Keras and JAX start once.

usage: jax_only_worker.py RUN_DIR OUT.json SENTENCE...
Each script runs as `python scripts/NAME.py ...` would (runpy, `__main__`, its own argv); a failing one stops the
worker with its exit status. Writes the CLI's and the API's greedy, beam-3 and sampled translations, the model's
logits on 8 validation pairs, the backend, whether TensorFlow can be found or imported, and whether it got imported.
"""
import contextlib
import importlib.util
import io
import json
import runpy
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
sys.path.insert(0, str(SCRIPTS))


def script(name: str, *args: str) -> str:
    """`python scripts/<name> args...` in this process: its standard output."""
    argv, sys.argv = sys.argv, [str(SCRIPTS / name), *args]
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(sys.argv[0], run_name="__main__")
    except SystemExit as exit:
        if exit.code:
            print(f"{name} {' '.join(args)}: exit status {exit.code}", file=sys.stderr)
            sys.exit(exit.code)
    finally:
        sys.argv = argv
    return out.getvalue()


run_dir, out, sentences = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
try:
    import tensorflow  # noqa: F401
    import_error = None
except ModuleNotFoundError as exc:
    import_error = str(exc)
result = {"tensorflow_spec": importlib.util.find_spec("tensorflow") is not None, "import_error": import_error}

result["cli"] = {
    "greedy": script("translate.py", "--run", str(run_dir), "--beam", "1", *sentences).splitlines(),
    "beam": script("translate.py", "--run", str(run_dir), "--beam", "3", *sentences).splitlines(),
    "sampled": script("translate.py", "--run", str(run_dir), "--sample", "--top-p", "0.9", "--seed", "1",
                      *sentences).splitlines()}

import keras  # noqa: E402

import pipeline.serializable  # noqa: E402,F401  (registers the model classes for keras.saving.load_model)
from pipeline.translate.keras_engine import KerasEngine  # noqa: E402

model = keras.saving.load_model(run_dir / "best.keras")        # the plain Keras way works too
translator = KerasEngine.from_run(run_dir)
from pipeline.datasets import load_split  # noqa: E402

english, italian = load_split(run_dir.parent / "prepared", "valid")
result["logits"] = keras.ops.convert_to_numpy(                 # for the TensorFlow process to compare its own with
    model({"encoder_inputs": english[:8], "decoder_inputs": italian[:8, :-1]}, training=False)).tolist()
result |= {"greedy": translator.translate(sentences, beam=1),
           "beam": translator.translate(sentences, beam=3),
           "sampled": translator.translate(sentences, sample=True, top_p=0.9, seed=1),
           "sampled_again": translator.translate(sentences, sample=True, top_p=0.9, seed=1),
           "loaded_class": type(model).__name__,
           "backend": keras.backend.backend()}


def nan_stops(trials: int = 5, steps: int = 300) -> list[int]:
    """Steps each of `trials` fits ran before StopOnNaN stopped it: a model that diverges within a few steps, fit
    with training's callback list, whose logs this backend converts in worker threads while the loop runs ahead
    (Keras's TerminateOnNaN synced the JAX state from there and crashed: "Array has been deleted")."""
    import numpy as np
    from nan_fits import fit_until_nan

    counts = []
    for _ in range(trials):
        net = keras.Sequential([keras.Input((64,)), keras.layers.Dense(512), keras.layers.Dense(1)])
        net.compile(optimizer="sgd", loss="mse")
        counts.append(fit_until_nan(net, np.ones((8 * steps, 64), "float32"), np.zeros((8 * steps, 1), "float32"),
                                    steps).steps)
    return counts


result["nan_stops"] = nan_stops()
script("evaluate.py", "--run", str(run_dir), "--split", "test", "--beam", "2")
script("plot.py", "--run", str(run_dir))
result["tensorflow_imported"] = sorted({name.split(".")[0] for name in sys.modules} & {"tensorflow", "tensorboard"})
Path(out).write_text(json.dumps(result), encoding="utf-8")
