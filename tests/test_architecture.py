"""Package structure: imports point one way and files keep to one job.

The import graph is read from the source with ``ast`` (every ``import`` and ``from`` at any depth,
lazy imports inside functions included), so a cycle hidden behind a function-level import still
counts. A package is the first component under ``factscout``; a top-level module is its own node.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "factscout"
MAX_LINES = 500
JUSTIFICATION = "over 500 lines because"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _node(module: str) -> str | None:
    """The graph node of a ``factscout.*`` module: its first component under ``factscout``."""
    parts = module.split(".")
    if parts[0] != "factscout" or len(parts) < 2:
        return None
    return parts[1]


def _imported(path: Path) -> set[str]:
    """Every factscout module that ``path`` imports."""
    module = _module_name(path)
    return imports_in(path.read_text(encoding="utf-8"), module, is_package=path.name == "__init__.py")


def parse(source: str) -> ast.Module:
    """``ast.parse``, retried: CPython 3.11's AST validator keeps one recursion counter per
    interpreter, so a parse racing another thread's (the Ray client's, left by earlier tests) can
    fail with "AST constructor recursion depth mismatch" (python/cpython#106905, fixed in 3.12)."""
    for attempt in range(5):
        try:
            return ast.parse(source)
        except SystemError:
            if attempt == 4:
                raise
    raise AssertionError("unreachable")


def imports_in(source: str, module: str, *, is_package: bool = False) -> set[str]:
    """The factscout modules imported anywhere in ``source`` (the text of ``module``), relative
    imports resolved; ``from a import b`` counts as ``a`` and as ``a.b`` (b may be a module)."""
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return {name for name in found if name.startswith("factscout.")}


def package_edges() -> dict[tuple[str, str], set[str]]:
    """(from package, to package) -> the files that make the edge."""
    edges: dict[tuple[str, str], set[str]] = defaultdict(set)
    for path in sorted(SRC.rglob("*.py")):
        source = _node(_module_name(path))
        if source is None:
            continue
        for target_module in _imported(path):
            target = _node(target_module)
            if target is None or target == source:
                continue
            # `from factscout import x` names a module x: keep only real nodes.
            if not (SRC / target).is_dir() and not (SRC / f"{target}.py").exists():
                continue
            edges[(source, target)].add(str(path.relative_to(SRC.parent)))
    return edges


def _cycles(edges: dict[tuple[str, str], set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one package (Tarjan)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for source, target in edges:
        graph[source].add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph[node]):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def test_no_import_cycles_between_packages():
    edges = package_edges()
    problems = []
    for component in _cycles(edges):
        members = set(component)
        lines = [f"cycle among {', '.join(component)}:"]
        for (source, target), files in sorted(edges.items()):
            if source in members and target in members:
                lines.append(f"  {source} -> {target}: {', '.join(sorted(files))}")
        problems.append("\n".join(lines))
    assert not problems, "package import cycles:\n" + "\n".join(problems)


def test_runtime_packages_never_import_scale():
    """scale/ registers its Ray backends into retrieve/ and rewrite/ (never the other way)."""
    edges = package_edges()
    wrong = {edge: files for edge, files in edges.items() if edge in {("retrieve", "scale"), ("rewrite", "scale")}}
    assert not wrong, wrong


# text/ (the sentence splitter and the sentence encoders) is a low layer every stage builds on: it
# may import only these factscout packages and modules, never a pipeline stage or the dataset loaders.
TEXT_MAY_IMPORT = {"errors", "registry", "nn"}


def test_text_is_a_leaf_package():
    edges = package_edges()
    wrong = {edge: files for edge, files in edges.items() if edge[0] == "text" and edge[1] not in TEXT_MAY_IMPORT}
    assert not wrong, f"text/ may import only {sorted(TEXT_MAY_IMPORT)}: {wrong}"


def test_nothing_imports_the_dataset_loaders_to_split_sentences():
    """``sentences_of`` lives in ``text/``: splitting sentences never pulls in ``datasets/``."""
    users = [
        str(path.relative_to(SRC.parent))
        for path in sorted(SRC.rglob("*.py"))
        if "sentences_of" in path.read_text(encoding="utf-8")
        and any(_node(m) == "datasets" for m in _imported(path))
        and _node(_module_name(path)) != "datasets"
    ]
    assert not users, users


def test_no_file_over_500_lines_without_a_reason():
    too_long = []
    for path in sorted(SRC.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").count("\n")
        if lines <= MAX_LINES:
            continue
        docstring = ast.get_docstring(parse(path.read_text(encoding="utf-8"))) or ""
        if JUSTIFICATION not in " ".join(docstring.split()):
            too_long.append(f"{path.relative_to(SRC.parent)}: {lines} lines")
    assert not too_long, (
        f"files over {MAX_LINES} lines whose module docstring does not say why "
        f"('{JUSTIFICATION} ...'):\n" + "\n".join(too_long)
    )


def test_the_cycle_finder_reports_each_cycle_once():
    assert _cycles({("a", "b"): {"x"}, ("b", "c"): {"y"}, ("c", "a"): {"z"}, ("c", "d"): {"w"}}) == [["a", "b", "c"]]
    assert _cycles({("a", "b"): {"x"}}) == []


def test_lazy_and_relative_imports_count():
    source = (
        "import numpy\n"
        "def f():\n"
        "    from factscout.scale import jobs\n"
        "    if True:\n"
        "        from ..retrieve import bm25\n"
        "        from . import actions\n"
    )
    assert imports_in(source, "factscout.rewrite.bfs") == {
        "factscout.scale",
        "factscout.scale.jobs",
        "factscout.retrieve",
        "factscout.retrieve.bm25",
        "factscout.rewrite",
        "factscout.rewrite.actions",
    }
