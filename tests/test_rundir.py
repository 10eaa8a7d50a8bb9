"""The run directory's one owner, `import pipeline` registering the classes, and unusable paths in one line."""
import os
import subprocess
import sys

import pytest

from pipeline.rundir import PathProblem, RunDir, check_output_dir, check_output_file, run_path

from conftest import ROOT


def test_run_dir_layout(tmp_path):
    run = RunDir(tmp_path)
    assert run.config_file == tmp_path / "config.yaml" and run.vectorizers_file == tmp_path / "vectorizers.pkl"
    assert run.model_file("best") == tmp_path / "best.keras" and run.model_file("model") == tmp_path / "model.keras"
    assert run.checkpoint_state == tmp_path / "checkpoint" / "state.json"
    assert run.model_file("averaged") == tmp_path / "averaged.keras"
    assert run.kept_checkpoint(1500) == tmp_path / "checkpoint" / "step-00001500.weights.h5"
    with pytest.raises(ValueError, match="model must be one of best, model, averaged, got 'last'"):
        run.model_file("last")


def test_output_paths_that_cannot_be_used(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(PathProblem, match=f"output file {tmp_path}: is a directory, expected a file"):
        check_output_file(tmp_path, "output file")
    with pytest.raises(PathProblem, match=f"its directory {tmp_path / 'missing'} does not exist"):
        check_output_file(tmp_path / "missing" / "out.txt", "output file")
    with pytest.raises(PathProblem, match=f"{afile} is a file, expected a directory"):
        check_output_file(afile / "out.txt", "output file")
    with pytest.raises(PathProblem, match=f"export directory {afile}: is a file, expected a directory"):
        check_output_dir(afile, "export directory")
    with pytest.raises(PathProblem, match=f"{afile} is a file, expected a directory"):
        check_output_dir(afile / "sub" / "dir", "export directory")
    assert check_output_dir(tmp_path / "new" / "dir", "export directory") == tmp_path / "new" / "dir"


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere, so permissions cannot be tested as root")
def test_unwritable_paths(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    with pytest.raises(PathProblem, match="no permission"):
        check_output_file(locked / "out.txt", "output file")
    with pytest.raises(PathProblem, match="no permission"):
        check_output_dir(locked / "export", "export directory")


def run_script(name, *args):
    return subprocess.run([sys.executable, str(ROOT / "scripts" / name), *map(str, args)], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})


def test_scripts_name_unusable_paths_in_one_line(trained_tiny, tmp_path):
    run = run_path(trained_tiny)
    afile = tmp_path / "afile"
    afile.write_text("x")
    cases = [
        (("translate.py", "--run", run, "--output", tmp_path, "Hi."), f"output file {tmp_path}: is a directory"),
        (("evaluate.py", "--run", run, "--split", "valid", "--out", tmp_path / "no" / "r.json"),
         f"report file {tmp_path / 'no' / 'r.json'}: its directory {tmp_path / 'no'} does not exist"),
        (("translate.py", "--run", afile, "Hi."), f"run directory {afile}: is a file, expected a directory"),
        (("prepare.py", "--workdir", afile, "--quiet"), f"{afile} is a file, expected a directory"),
        (("plot.py", "--run", run, "--out", afile), f"plot directory {afile}: is a file, expected a directory"),
    ]
    for args, message in cases:
        result = run_script(*args)
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-1500:]
        assert message in lines[-1], (args, lines[-1])


def test_resume_names_the_config_keys_that_differ(trained_tiny):
    from pipeline.config import load_config
    from pipeline.training import train

    saved = RunDir(run_path(trained_tiny)).load_config()
    config = load_config(ROOT / "configs" / "tiny.yaml", ["model.d_model=48", "train.batch_size=16"],
                         saved.workdir)
    with pytest.raises(ValueError, match=r"differs in .*model.d_model: 32 -> 48.*train.batch_size: 32 -> 16"):
        train(config, resume=True)


REGISTRATION = """
import sys
sys.path.insert(0, sys.argv[2])
import pipeline
assert "keras" not in sys.modules and "tensorflow" not in sys.modules, "import pipeline must stay cheap"
import keras
import pipeline.serializable  # registers the package's classes
model = keras.saving.load_model(sys.argv[1])
print(type(model).__name__, keras.backend.backend(), "tensorflow" in sys.modules)
"""


@pytest.mark.parametrize("backend", ["tensorflow", "jax"])
def test_importing_serializable_registers_every_class_and_import_pipeline_stays_cheap(trained_tiny, backend):
    result = subprocess.run([sys.executable, "-c", REGISTRATION, str(run_path(trained_tiny) / "best.keras"), str(ROOT)],
                            capture_output=True, text=True, timeout=300, cwd="/",
                            env={**os.environ, "KERAS_BACKEND": backend, "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["Seq2SeqTransformer", backend, str(backend == "tensorflow")]
