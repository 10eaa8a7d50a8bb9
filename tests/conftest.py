import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SHARED_CORPUS = ROOT.parent / "shared" / "data" / "ita-eng" / "ita.txt.gz"


@pytest.fixture(scope="session")
def tiny_config_path() -> Path:
    return ROOT / "configs" / "tiny.yaml"


@pytest.fixture(scope="session")
def prepared_tiny(tmp_path_factory, tiny_config_path):
    """The bundled sample prepared once with the tiny config: (config, report)."""
    from pipeline.config import load_config
    from pipeline.prepare import prepare

    config = load_config(tiny_config_path, workdir=str(tmp_path_factory.mktemp("tiny")))
    report = prepare(config, progress=False)
    return config, report
