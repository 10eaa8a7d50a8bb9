"""The layout rules a reader relies on, checked on the source: no import circle in the package, no private names
across modules in tests and benchmarks, run-layout names only in `pipeline/rundir.py` (the package, the scripts and
the benchmarks alike), defaults stated once."""
import ast
import dataclasses
import inspect
from pathlib import Path

import yaml

from conftest import ROOT

RUNDIR = ROOT / "pipeline" / "rundir.py"
LAYOUT_OWNERS = (RUNDIR,)


def python_files(*folders: str) -> list[Path]:
    return sorted(path for folder in folders for path in (ROOT / folder).rglob("*.py"))


def private_uses(path: Path) -> list[str]:
    """`x._name` on anything but self, cls or super(), and `from pipeline... import _name`, with line numbers."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            base = node.value
            own = (isinstance(base, ast.Name) and base.id in ("self", "cls")) or (
                isinstance(base, ast.Call) and isinstance(base.func, ast.Name) and base.func.id == "super")
            if not own:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(base)}.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("pipeline", "conftest"):
            found += [f"{path.relative_to(ROOT)}:{node.lineno}: from {node.module} import {alias.name}"
                      for alias in node.names if alias.name.startswith("_") and not alias.name.startswith("__")]
    return found


def package_imports(root: Path) -> dict[str, set[str]]:
    """Each module of `root`/pipeline -> the package's modules it imports, at module level or inside a function
    (`from pipeline.a import b` counts `pipeline.a.b` where that is a module, else `pipeline.a`)."""
    package = root / "pipeline"
    modules = {".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__"): path
               for path in package.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets |= {f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules else node.module
                            for alias in node.names}
        graph[name] = {target for target in targets if target in modules and target != name}
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The circles of an import graph: one path back to its start for each strongly connected group of modules."""
    index, low, stack, on_stack, circles = {}, {}, [], set(), []

    def visit(node: str) -> None:                      # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return circles


def test_the_package_has_no_import_circle():
    """Lower layers never import higher ones, not even inside a function; function-level imports count."""
    assert import_circles(package_imports(ROOT)) == []


def test_the_circle_scan_finds_what_it_looks_for(tmp_path):
    for name, text in {"__init__.py": "", "a.py": "from pipeline.b import x\n",
                       "b.py": "def f():\n    from pipeline import c\n", "c.py": "import pipeline.a\n",
                       "d.py": "from pipeline.a import y\n"}.items():
        (tmp_path / "pipeline").mkdir(exist_ok=True)
        (tmp_path / "pipeline" / name).write_text(text)
    assert import_circles(package_imports(tmp_path)) == [["pipeline.a", "pipeline.b", "pipeline.c"]]


def test_no_test_or_benchmark_uses_a_private_name_of_another_module():
    assert [use for path in python_files("tests", "bench") for use in private_uses(path)] == []


def test_the_private_name_scan_finds_what_it_looks_for(tmp_path):
    sample = ROOT / "tests" / "_scan_sample.py"      # private_uses reports paths relative to the repository
    sample.write_text("from pipeline.decoding import _pad\nx = engine._decode\ny = self._own\nz = super()._fine\n")
    try:
        assert [use.split(": ", 1)[1] for use in private_uses(sample)] == [
            "from pipeline.decoding import _pad", "engine._decode"]
    finally:
        sample.unlink()


def layout_names() -> dict[str, str]:
    """The layout owners' module-level names of files and directories: `*_FILE` and `*_DIR` string constants."""
    names = {}
    for node in (node for owner in LAYOUT_OWNERS for node in ast.parse(owner.read_text(encoding="utf-8")).body):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id.endswith(("_FILE", "_DIR")):
                    names[target.id] = node.value.value
    return names


def layout_literals(path: Path, names: dict[str, str]) -> list[str]:
    """Run-layout names written out in `path`: a file name anywhere in code (docstrings aside), a directory
    name where a path is joined (`path / "checkpoint"`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    files = {value for name, value in names.items() if name.endswith("_FILE")}
    dirs = {value for name, value in names.items() if name.endswith("_DIR")}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value in files and id(node) not in docstrings:
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            for side in (node.left, node.right):
                if isinstance(side, ast.Constant) and side.value in dirs | files:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: / {side.value!r}")
    return found


def test_run_layout_names_appear_only_in_rundir():
    names = layout_names()
    assert {"CONFIG_FILE", "VECTORIZERS_FILE", "PREPARED_DIR", "RUN_DIR", "CHECKPOINT_DIR", "CT2_DIR",
            "CT2_SETTINGS_FILE", "EVAL_DIR"} <= set(names)
    files = [path for path in python_files("pipeline", "scripts", "bench") if path not in LAYOUT_OWNERS]
    assert sorted({use for path in files for use in layout_literals(path, names)}) == []


def test_the_layout_scan_finds_what_it_looks_for():
    sample = ROOT / "tests" / "_scan_sample.py"
    sample.write_text('"""Writes config.yaml."""\nbest = run / "checkpoint"\nname = "config.yaml"\nextra = "eval"\n')
    try:
        assert [use.split(": ", 1)[1] for use in layout_literals(sample, layout_names())] == [
            "/ 'checkpoint'", "'config.yaml'"]
    finally:
        sample.unlink()


def test_tiny_config_sets_only_values_that_differ_from_the_defaults():
    from pipeline.config import Config, flatten

    defaults = flatten(Config().to_dict())
    written = flatten(yaml.safe_load((ROOT / "configs" / "tiny.yaml").read_text(encoding="utf-8")))
    assert {key: value for key, value in written.items() if defaults.get(key) == value} == {}


def test_the_model_class_defaults_are_the_config_defaults():
    from pipeline.config import ModelConfig
    from pipeline.model import Seq2SeqTransformer

    parameters = inspect.signature(Seq2SeqTransformer.__init__).parameters
    for field in dataclasses.fields(ModelConfig):
        assert parameters[field.name].default == field.default, field.name


def test_scripts_only_parse_arguments_and_call_the_library():
    """A script is its arguments and one call into `pipeline`: no function of scripts/ over 40 lines."""
    long = [f"{path.relative_to(ROOT)}: {node.name}() has {node.end_lineno - node.lineno + 1} lines"
            for path in python_files("scripts") for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > 40]
    assert long == []
