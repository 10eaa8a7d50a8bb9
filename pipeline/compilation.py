"""Compiled programs: a persistent cache on disk, their count and cost, and compiling them all at once.

XLA compiles one program per batch shape (training and validation alike). On a GPU that is seconds to
a minute each, so a short run could spend its budget compiling (issue 35: Transformer-base, 170 s for
6 programs on an H200). Three things keep it off the budget:

- a persistent cache (`enable_persistent_cache`), on by default: a second run of a config, `--resume`,
  evaluation and the service load the programs instead of compiling them again.
  Where: `$NMT_COMPILATION_CACHE` if set (`off` turns it off), else `$XDG_CACHE_HOME/ita-nmt/xla/<backend>`
  (`~/.cache/ita-nmt/xla/<backend>`). JAX's own cache; on TensorFlow, XLA's `--tf_xla_persistent_cache_directory`
  (programs compiled with `jit_compile`). Entries are keyed by the program and the device, so one folder
  serves every config and machine kind;
- `precompile_jax`: before the first step, every training and validation program is lowered in turn and
  handed to XLA on a pool of threads as soon as it is lowered (XLA compiles without Python's lock), so a
  device with many cores compiles them side by side; a training step is two programs, the gradients per
  batch shape and the optimizer's update once for all shapes (`split_train_step`), so the update is not
  compiled again for every shape; the programs are kept (`ProgramStore`, under the cache's `programs/`), so
  a later run of the same model loads them without tracing or lowering either;
- `CompileLog` measures it: programs compiled, programs loaded from the cache, and seconds (tracing,
  lowering and XLA), reported in `train_summary.json` and the summary line.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import hashlib
import io
import json
import os
import pickle
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

CACHE_ENV = "NMT_COMPILATION_CACHE"
_OFF = ("", "0", "off", "none", "false")
MAX_CACHE_BYTES = 4 << 30           # JAX's cache, TensorFlow's and the program store each; least recently used out
_state: dict[str, Any] = {"enabled": None}


def cache_root() -> Path | None:
    """The persistent cache's folder for all backends, or None when `$NMT_COMPILATION_CACHE` turns it off."""
    value = os.environ.get(CACHE_ENV)
    if value is not None:
        return None if value.strip().lower() in _OFF else Path(value).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ita-nmt" / "xla"


def enable_persistent_cache(backend: str | None = None) -> Path | None:
    """Turn on this backend's persistent compilation cache (once per process); its folder, or None (off,
    or a backend without one: PyTorch runs op by op)."""
    if _state["enabled"] is not None:
        return _state["enabled"] or None
    if backend is None:
        import keras
        backend = keras.backend.backend()
    root = cache_root()
    folder = None
    if root is not None and backend in ("jax", "tensorflow"):
        folder = root / backend
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            print(f"compilation cache {folder}: cannot be created ({exc.strerror}); compiling without it")
            folder = None
    if folder is not None and backend == "jax":
        import jax
        jax.config.update("jax_compilation_cache_dir", str(folder))
        # JAX's default minimum compile time (1 s) stays: a small program compiles faster than it loads
        try:        # JAX bounds its cache only with filelock; asked to without it, it fails every read and write
            import filelock  # noqa: F401
            jax.config.update("jax_compilation_cache_max_size", MAX_CACHE_BYTES)   # least recently used go first
        except ImportError:
            prune_least_recent(folder.glob("*"))                                  # bounded here, at each start
    elif folder is not None:
        set_tensorflow_cache_flag()
        if "tf_xla_persistent_cache_directory" not in os.environ.get("TF_XLA_FLAGS", ""):
            folder = None
        else:                                  # TensorFlow bounds its cache not at all: here, at each start
            prune_least_recent(folder.glob("xla_compile_cache__*"), MAX_CACHE_BYTES)
    _state["enabled"] = folder or False
    return folder


def set_tensorflow_cache_flag() -> None:
    """Point TensorFlow's XLA at the persistent cache (`TF_XLA_FLAGS`). TensorFlow reads that variable once,
    when it starts, so the scripts call this before anything imports it (`scripts/_bootstrap.py`)."""
    root = cache_root()
    flags = os.environ.get("TF_XLA_FLAGS", "")
    if root is None or "tf_xla_persistent_cache_directory" in flags or "tensorflow" in sys.modules:
        return
    if os.environ.get("KERAS_BACKEND", "tensorflow") != "tensorflow":
        return
    folder = root / "tensorflow"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return
    os.environ["TF_XLA_FLAGS"] = f"{flags} --tf_xla_persistent_cache_directory={folder}".strip()


@dataclass
class CompileLog:
    """What compiling cost while it is open (JAX: exact, from `jax.monitoring`; other backends: nothing is
    counted, `measured` is False). `programs` counts every XLA program compiled or loaded, including
    the small ones Keras runs op by op while building; `loaded` of them came from the persistent cache."""
    programs: int = 0
    loaded: int = 0
    largest: list[tuple[float, str]] = field(default_factory=list)
    measured: bool = False
    spans: list[tuple[float, float]] = field(default_factory=list)
    phases: dict[str, float] = field(default_factory=dict)       # summed seconds: trace, lower, compile

    @property
    def seconds(self) -> float:
        """Wall-clock seconds in which something was being traced, lowered or compiled: programs compiled
        side by side count once."""
        total, reach = 0.0, float("-inf")
        for start, end in sorted(self.spans):
            if end > reach:
                total += end - max(start, reach)
                reach = end
        return total

    def summary(self) -> dict[str, Any]:
        return {"compile_seconds": round(self.seconds, 1), "compiled_programs": self.programs - self.loaded,
                "programs_from_cache": self.loaded, "compile_measured": self.measured}


_EVENTS = ("/jax/core/compile/jaxpr_trace_duration", "/jax/core/compile/jaxpr_to_mlir_module_duration",
           "/jax/core/compile/backend_compile_duration")
_open_logs: list[CompileLog] = []
_lock = threading.Lock()


def _on_duration(event: str, seconds: float, **kwargs: Any) -> None:
    if event not in _EVENTS:
        return
    end = time.monotonic()
    with _lock:
        for log in _open_logs:
            log.spans.append((end - seconds, end))
            phase = ("trace", "lower", "compile")[_EVENTS.index(event)]
            log.phases[phase] = log.phases.get(phase, 0.0) + seconds
            if event == _EVENTS[2]:
                log.programs += 1
                log.largest.append((seconds, str(kwargs.get("fun_name", "?"))))


def _record(start: float, end: float, loaded: int = 0) -> None:
    """Count time spent readying programs outside JAX's own events (loading stored programs)."""
    with _lock:
        for log in _open_logs:
            log.spans.append((start, end))
            log.programs += loaded
            log.loaded += loaded


def _on_event(event: str, **kwargs: Any) -> None:
    if event == "/jax/compilation_cache/cache_hits":
        _thread.cache_hit = True
        with _lock:
            for log in _open_logs:
                log.loaded += 1


@contextlib.contextmanager
def compile_log() -> Iterator[CompileLog]:
    """`with compile_log() as log:` counts the compiling done inside (see `CompileLog`)."""
    import keras

    log = CompileLog(measured=keras.backend.backend() == "jax")
    if log.measured:
        _listen()
        with _lock:
            _open_logs.append(log)
    try:
        yield log
    finally:
        with _lock:
            if log in _open_logs:
                _open_logs.remove(log)
        log.largest = sorted(log.largest, reverse=True)[:20]


def _listen() -> None:
    if _state.get("listening"):
        return
    from jax import monitoring
    monitoring.register_event_duration_secs_listener(_on_duration)
    monitoring.register_event_listener(_on_event)
    _state["listening"] = True


class ExecutableUnpickler(pickle.Unpickler):
    """Loads a stored program: JAX's own unpickler, restricted to JAX's, numpy's and ml_dtypes' classes."""

    ALLOWED = ("jax", "jaxlib", "numpy", "ml_dtypes", "builtins", "collections", "functools", "enum", "copyreg")

    def __init__(self, file: Any, backend: Any, devices: Any):
        from jax.experimental.serialize_executable import _JaxPjrtUnpickler
        super().__init__(file)
        self._jax = _JaxPjrtUnpickler(io.BytesIO(b""), backend, devices)

    def persistent_load(self, pid: Any) -> Any:
        return self._jax.persistent_load(pid)

    def find_class(self, module: str, name: str) -> Any:
        if module.split(".")[0] in self.ALLOWED and not (module == "builtins" and name in ("eval", "exec", "open",
                                                                                     "compile", "__import__")):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"a stored program may not hold {module}.{name}")


class ProgramStore:
    """Compiled JAX programs on disk, each under a key that names everything it was built from (the kind of
    step, the model's, optimizer's and loss's configs, the precision, the argument shapes, the source of the
    modules that define the model, and the JAX, jaxlib and Keras versions, the device kind and count), so a
    later run loads a program without tracing or lowering it. A program is machine code, trusted as JAX's
    own cache is; the folder is the user's, and loading admits only JAX's, numpy's and ml_dtypes' classes."""

    def __init__(self, folder: Path):
        self.folder = folder

    @staticmethod
    def fingerprint(model: Any) -> str:
        """What, besides the arguments, decides a Keras training or validation program of `model`."""
        import jax
        import jaxlib
        import keras

        from pipeline.extras import attention_choice

        sources = sorted(Path(__file__).parent.glob("*.py"))      # layers, model, objectives, ... (this package)
        device = jax.devices()[0]
        parts = {"jax": jax.__version__, "jaxlib": jaxlib.__version__, "keras": keras.__version__,
                 "device": [device.platform, str(getattr(device, "device_kind", "")), jax.device_count()],
                 "model": model.get_config(), "optimizer": model.optimizer.get_config(),
                 "loss": getattr(model.loss, "get_config", lambda: repr(model.loss))(),
                 "policy": keras.mixed_precision.global_policy().name,
                 "attention": attention_choice(),                 # NMT_ATTENTION: cuDNN's kernel or XLA's
                 "sources": [hashlib.sha256(path.read_bytes()).hexdigest() for path in sources]}
        return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()

    def path(self, fingerprint: str, kind: str, signature: Any) -> Path:
        digest = hashlib.sha256(f"{fingerprint}|{kind}|{signature}".encode()).hexdigest()[:40]
        return self.folder / f"{kind}-{digest}.program"

    def load(self, path: Path) -> Any | None:
        """The program stored at `path`, or None (absent, or unreadable: it is then compiled again)."""
        if not path.is_file():
            return None
        import jax
        from jax.stages import Compiled

        try:
            backend = jax.devices()[0].client
            with path.open("rb") as file:
                unloaded, args_info_flat, no_kwargs, in_tree, out_tree = ExecutableUnpickler(
                    file, backend, backend.devices()).load()
            program = Compiled(unloaded.load(), [], in_tree.unflatten(args_info_flat), out_tree, no_kwargs=no_kwargs)
            os.utime(path)              # recently used: pruned last
            return program
        except Exception as exc:        # a stale or damaged entry costs a compile, never the run
            print(f"stored program {path.name}: not loaded ({type(exc).__name__}); compiling it again")
            return None

    def save(self, path: Path, compiled: Any) -> None:
        import jax
        from jax.experimental.serialize_executable import _JaxPjrtPickler

        from pipeline.io_utils import atomic_file

        try:
            unloaded = compiled._executable._unloaded_executable
            args_info_flat, in_tree = jax.tree_util.tree_flatten(compiled.args_info)
            with atomic_file(path, suffix=".program") as tmp, open(tmp, "wb") as file:
                _JaxPjrtPickler(file).dump((unloaded, args_info_flat, compiled._no_kwargs, in_tree,
                                            compiled.out_tree))
        except Exception as exc:        # not every program serialises (e.g. host callbacks): keep it in memory
            print(f"stored program {path.name}: not saved ({type(exc).__name__}: {exc})")
            return
        self.prune()

    def prune(self, limit: int = MAX_CACHE_BYTES) -> None:
        """Delete the least recently used programs while the store holds more than `limit` bytes."""
        prune_least_recent(self.folder.glob("*.program"), limit)


def prune_least_recent(paths: Iterable[Path], limit: int = MAX_CACHE_BYTES) -> None:
    """Delete the least recently modified of these files while they hold more than `limit` bytes together."""
    files = sorted((p for p in paths if p.is_file()), key=lambda p: p.stat().st_mtime)
    total = sum(p.stat().st_size for p in files)
    for old in files:
        if total <= limit:
            break
        total -= old.stat().st_size
        old.unlink(missing_ok=True)


def signature(batch: Any) -> tuple:
    """A batch's shapes and dtypes: which program it needs."""
    import keras
    return tuple((tuple(x.shape), str(x.dtype)) for x in keras.tree.flatten(batch))


@dataclass
class Precompiled:
    """What `precompile_jax` did: programs built (`compiled`), loaded from the store (`loaded`), and its wall time."""
    compiled: int = 0
    loaded: int = 0
    seconds: float = 0.0

    @property
    def programs(self) -> int:
        return self.compiled + self.loaded


def precompile_jax(model: Any, train_batches: Iterable[Any], test_batches: Iterable[Any],
                   threads: int | None = None) -> Precompiled:
    """Give the Keras JAX trainer ready programs for these example batches (one per batch shape; structures as
    the trainer receives them), training and validation: loaded from the `ProgramStore` when a run built them
    before (no tracing, no lowering), else lowered in turn and compiled side by side on `threads` threads (XLA
    compiles without Python's lock; default: the cores, at most one per program), each handed to XLA as soon
    as it is lowered, and stored. A training step is two programs (`split_train_step`): the gradients, one
    program per batch shape, and the optimizer's update, one program for every shape. The trainer's step
    functions are then replaced by ones that run the programs of each batch's shape (a shape without one goes
    to Keras's own step, compiled as usual). Call it once the model is compiled and built (a callback's
    `on_train_begin`). Needs the persistent cache's folder; without it, nothing is done."""
    import jax

    folder = _state.get("enabled")
    if not folder:
        return Precompiled()
    started = time.perf_counter()
    _listen()                                   # tells a program compiled here from one JAX's cache handed back
    store = ProgramStore(folder / "programs")
    fingerprint = store.fingerprint(model)
    abstract = lambda tree: jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype), tree)
    train_state = abstract(model._get_jax_state(trainable_variables=True, non_trainable_variables=True,
                                                optimizer_variables=True, metrics_variables=True))
    test_state = abstract(model._get_jax_state(trainable_variables=True, non_trainable_variables=True,
                                               metrics_variables=True))
    gradients, update = split_train_step(model)
    trainable, _, optimizer_variables, _ = train_state
    train_batches = list(train_batches)
    # (kind, key, function, abstract arguments): the update first, then the costlier programs first
    wanted = [("update", signature((trainable, optimizer_variables)), update,
               (trainable, optimizer_variables, trainable))] if train_batches else []
    wanted += [("gradients", signature(batch), gradients, (*train_state, abstract(batch))) for batch in train_batches]
    wanted += [("test", signature(batch), jax.jit(model.test_step, donate_argnums=0), (test_state, abstract(batch)))
               for batch in test_batches]
    paths = [store.path(fingerprint, kind, (repr(jax.tree.structure(arguments[:-1])), key))
             for kind, key, _, arguments in wanted]
    programs: dict[str, dict[tuple, Any]] = {"update": {}, "gradients": {}, "test": {}}
    workers = max(1, min(len(wanted), threads or usable_cores()))
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:     # loading, too, runs outside Python's lock
        stored = list(pool.map(store.load, paths))
    done = Precompiled(loaded=sum(program is not None for program in stored))
    _record(start, time.monotonic(), loaded=done.loaded)
    missing = []
    for (kind, key, function, arguments), path, program in zip(wanted, paths, stored):
        if program is not None:
            programs[kind][key] = program
        else:
            missing.append((kind, key, function, arguments, path))
    if missing:
        with _without_jax_cache():
            built = compile_side_by_side([lambda f=function, a=arguments: f.lower(*a)
                                          for _, _, function, arguments, _ in missing], _compile_fresh, workers)
        for (kind, key, _, _, path), (program, fresh) in zip(missing, built):
            programs[kind][key] = program
            if fresh:
                store.save(path, program)
        done.compiled = len(missing)
    model.make_train_function()
    model.make_test_function()                  # validation's, made now so it can be replaced too
    update_program = next(iter(programs["update"].values()), None)
    training = {key: _training_step(program, update_program) for key, program in programs["gradients"].items()}
    model.train_function = _dispatch(training, model.train_function)
    model.test_function = _dispatch(programs["test"], model.test_function)
    done.seconds = time.perf_counter() - started
    return done


def compile_side_by_side(lowerings: Sequence[Callable[[], Any]], compiler: Callable[[Any], Any] | None = None,
                         threads: int | None = None) -> list[Any]:
    """JAX programs compiled side by side: each of `lowerings` (a call that traces and lowers one program) runs
    in turn in this thread, and each lowered program goes at once to a pool of `threads` threads (default: the
    cores this process may use, at most one per program) that calls `compiler` on it (default:
    `Lowered.compile`). XLA compiles without Python's lock, so lowering (Python) overlaps the compiles and a host
    with many cores compiles the programs at once instead of one after another. Results in the order of
    `lowerings`."""
    compiler = compiler or (lambda lowered: lowered.compile())
    if not lowerings:
        return []
    workers = max(1, min(len(lowerings), threads or usable_cores()))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        futures = [pool.submit(compiler, lower()) for lower in lowerings]
        return [future.result() for future in futures]


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity, e.g. a container's CPU set), else all of them."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):            # no affinity on this platform
        return os.cpu_count() or 1


def split_train_step(model: Any) -> tuple[Any, Any]:
    """Keras's JAX `train_step` as two jitted functions, which together compute what it does:

    - `gradients(trainable, non_trainable, optimizer_variables, metrics_variables, batch)` ->
      `(grads, logs, non_trainable, metrics_variables)`: the forward and backward pass and the metrics, one
      program per batch shape;
    - `update(trainable, optimizer_variables, grads)` -> `(trainable, optimizer_variables)`: the optimizer's
      step (loss-scale and gradient-accumulation logic included), one program whatever the batch's shape.

    The update is a few elementwise kernels per weight, so a fused step compiled it again for every batch
    shape: on this 2-core CPU, a seventh of each training program's compile and half of its lowering."""
    import jax
    from keras.src.trainers.data_adapters import data_adapter_utils

    def gradients(trainable, non_trainable, optimizer_variables, metrics_variables, batch):
        x, y, sample_weight = data_adapter_utils.unpack_x_y_sample_weight(batch)
        (_, (unscaled_loss, y_pred, non_trainable, metrics_variables)), grads = jax.value_and_grad(
            model.compute_loss_and_updates, has_aux=True)(
            trainable, non_trainable, metrics_variables, x, y, sample_weight, training=True,
            optimizer_variables=optimizer_variables)
        logs, metrics_variables = model._update_metrics_variables(metrics_variables, unscaled_loss, x, y, y_pred,
                                                                  sample_weight)
        return grads, logs, non_trainable, metrics_variables

    def update(trainable, optimizer_variables, grads):
        return model.optimizer.stateless_apply(optimizer_variables, grads, trainable)

    # the gradients are not donated to the update: no output has their buffers to reuse (JAX would warn)
    return jax.jit(gradients, donate_argnums=(1, 3)), jax.jit(update, donate_argnums=(0, 1))


_thread = threading.local()


@contextlib.contextmanager
def _without_jax_cache():
    """JAX's persistent cache off for a while (it is read once per process, hence the resets): the programs
    compiled for the store are compiled here, not handed back by it. One that JAX's cache handed back was
    itself deserialised, and on XLA:CPU such a program does not serialise whole again (a later load fails
    when it runs: "Function ... not found")."""
    import jax
    from jax._src import compilation_cache

    compilation_cache.reset_cache()
    jax.config.update("jax_enable_compilation_cache", False)
    try:
        yield
    finally:
        jax.config.update("jax_enable_compilation_cache", True)
        compilation_cache.reset_cache()


def _compile_fresh(lowered: Any) -> tuple[Any, bool]:
    """(program, whether XLA compiled it here rather than a cache handing it back: only those are stored)."""
    _thread.cache_hit = False
    program = lowered.compile()
    return program, not _thread.cache_hit


def _dispatch(programs: dict[tuple, Any], fallback: Any) -> Any:
    """A Keras JAX step function (state, iterator) -> (logs, state) that runs the program (or `_training_step`) of
    the batch's shape; a shape without one goes to `fallback`, Keras's own step."""
    if not programs or fallback is None:
        return fallback

    def step(state: Any, iterator: Any) -> Any:
        batch = next(iterator)
        program = programs.get(signature(batch))
        if program is None:
            return fallback(state, iter([batch]))
        return program(state, batch)

    return step


def _training_step(gradients: Any, update: Any) -> Any:
    """One batch shape's training step (state, batch) -> (logs, state), as Keras's: its gradient program, then
    the one update program (see `split_train_step`)."""
    def step(state: Any, batch: Any) -> Any:
        trainable, non_trainable, optimizer_variables, metrics_variables = state
        grads, logs, non_trainable, metrics_variables = gradients(trainable, non_trainable, optimizer_variables,
                                                                  metrics_variables, batch)
        trainable, optimizer_variables = update(trainable, optimizer_variables, grads)
        return logs, (trainable, non_trainable, optimizer_variables, metrics_variables)

    return step
