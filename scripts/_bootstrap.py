"""Make `pipeline` importable when a script runs from a checkout without `pip install -e .`."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pipeline.compilation import set_tensorflow_cache_flag  # noqa: E402  (neither imports Keras)
from pipeline.extras import choose_backend  # noqa: E402

choose_backend()                 # TensorFlow where installed, else JAX, else PyTorch
set_tensorflow_cache_flag()      # TensorFlow reads its XLA flags once, when it starts: before anything imports it
