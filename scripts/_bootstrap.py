"""Make `pipeline` importable when a script runs from a checkout without `pip install -e .`, and keep this folder
off the import path: Python puts a script's own folder first, where `translate.py` would shadow translate-toolkit's
`translate` package (which reads TBX glossaries) for every import after this one."""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != HERE]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pipeline.compilation import set_tensorflow_cache_flag  # noqa: E402  (neither imports Keras)
from pipeline.extras import choose_backend  # noqa: E402

choose_backend()                 # TensorFlow where installed, else JAX, else PyTorch
set_tensorflow_cache_flag()      # TensorFlow reads its XLA flags once, when it starts: before anything imports it
