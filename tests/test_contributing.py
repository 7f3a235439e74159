"""CONTRIBUTING.md's map of the package is held against the code, and so are the directions its
imports may take: the map cannot drift, and a pure part cannot start importing pytest."""

import ast
import re
from pathlib import Path

from helpers import REPO

PACKAGE = REPO / "pytest_grounding"
# Folders whose modules the map names one by one; the others it names as folders.
ITEMISED = ("core", "evaluate", "analysis", "render", "store", "plugin")


def mapped_paths():
    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    block = text.split("## Layout", 1)[1].split("```text", 1)[1].split("```", 1)[0]
    paths, stack = set(), []
    for line in block.splitlines():
        match = re.match(r"( *)(\S+)", line)
        if not match or len(match.group(1)) > 12 or not match.group(2).endswith(("/", ".py", ".json")):
            continue  # a description's second line, or not a path
        depth = len(match.group(1)) // 4
        stack[depth:] = [match.group(2).rstrip("/")]
        paths.add("/".join(stack))
    return paths


def package_paths():
    found = {"pytest_grounding"}
    for path in PACKAGE.iterdir():
        if path.name.startswith((".", "_")) and path.name not in ("__init__.py", "__main__.py"):
            continue
        if (path.is_dir() and (path / "__init__.py").is_file()) or path.suffix in (".py", ".json"):
            found.add(f"pytest_grounding/{path.name}")
        elif path.is_dir() and path.name == "schema":
            found.add("pytest_grounding/schema")
    for folder in ITEMISED:
        for path in (PACKAGE / folder).iterdir():
            if path.name == "__init__.py" and len(path.read_text(encoding="utf-8").splitlines()) <= 2:
                continue  # a docstring alone: the folder's line in the map says it
            if path.suffix == ".py" or (path / "__init__.py").is_file():
                found.add(f"pytest_grounding/{folder}/{path.name}")
            if folder == "plugin" and path.is_dir() and (path / "__init__.py").is_file():
                # plugin/'s rooms (which process runs them) are itemised too
                for module in path.glob("*.py"):
                    if module.name != "__init__.py":
                        found.add(f"pytest_grounding/plugin/{path.name}/{module.name}")
    return found


def test_the_map_names_every_part_of_the_package_and_nothing_else():
    mapped = {p for p in mapped_paths() if p.startswith("pytest_grounding")}
    actual = package_paths()
    assert actual - mapped == set(), "in the package but not in CONTRIBUTING.md's map"
    assert {p for p in mapped - actual if not (REPO / p).exists()} == set(), "in the map but gone"


def test_the_maps_other_folders_exist():
    for path in mapped_paths():
        if not path.startswith("pytest_grounding"):
            assert (REPO / path).exists(), path


# -- the layers -------------------------------------------------------------------------------------
# Every folder of the package and every module at its top, on one floor; a part imports only from its
# own floor or lower ones (peers on a floor may import each other, without circles). `__init__.py`
# (the public API: core's types, the Detector protocol, LocateQuery) stands beside the folders it
# re-exports; `types.py` re-exports core alone; `__main__.py` hands over to `cli`; `testing` (test
# support for the tests, benchmarks and docs) stands above everything.
LAYERS = {
    "core": 0,
    "types.py": 0,
    "datasets": 1,
    "evaluate": 1,
    "store": 1,
    "perturb": 1,
    "detectors": 1,
    "__init__.py": 1,
    "analysis": 2,
    "sections": 3,
    "render": 4,
    "plugin": 5,
    "cli": 6,
    "inspect": 6,  # another tool's entry point (inspect_ai's task), a consumer like cli/
    "__main__.py": 6,
    "testing": 7,  # test support (the tiny checkpoint): nothing in the package may import it
}
# Folders of data alone (no module may appear in them) and data files at the top.
DATA = {"schema", "published.json"}
# PENDING: the upward imports among analysis/, sections/ and render/ that the document change removes
# (issue 55: the section registry on the run plan, rendering helpers lent through the page object).
# Each pair names the modules that still import upward. Delete an entry (and this list) once it lands:
# `test_pending_upward_imports_still_exist` fails as soon as an entry is no longer needed.
PENDING = {
    # analysis/metrics.py, document.py, tracked.py ask the process-global section registry
    ("analysis", "sections"),
    # sections/agentic.py, baseline.py, replay.py, robustness.py import render/ for their text
    ("sections", "render"),
}
# A lazy import by name ("pytest_grounding.x.y:attr"): the registries' built-in targets.
LAZY_TARGET = re.compile(r"pytest_grounding(?:\.\w+)+(?::[\w.]+)?")


def part_of(module: tuple[str, ...]) -> str:
    """The top-level part a module (its dotted name's parts, `pytest_grounding` first) belongs to."""
    if len(module) == 1:
        return "__init__.py"
    return module[1] if (PACKAGE / module[1]).is_dir() else f"{module[1]}.py"


def package_modules() -> dict[tuple[str, ...], Path]:
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        modules[parts[:-1] if path.name == "__init__.py" else parts] = path
    return modules


def imports_of(path: Path, modules) -> set[tuple[str, ...]]:
    """The package's modules one module imports: at module level, in functions, under TYPE_CHECKING,
    relative or absolute, and the registries' lazy "module:attr" targets. `from pkg import name`
    counts as importing the submodule `name` where one exists, else `pkg` itself."""
    own = path.relative_to(REPO).with_suffix("").parts
    package = own[:-1]
    names: list[list[str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = list(package[: len(package) - node.level + 1]) if node.level else []
            target = base + (node.module.split(".") if node.module else [])
            names += [[*target, alias.name] for alias in node.names]
        elif isinstance(node, ast.Import):
            names += [alias.name.split(".") for alias in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = LAZY_TARGET.fullmatch(node.value.strip())
            if match and ":" in node.value:
                names.append(node.value.split(":")[0].split("."))
    found = set()
    for name in names:
        if name[:1] != ["pytest_grounding"]:
            continue
        while tuple(name) not in modules:
            name = name[:-1]
        if tuple(name) != own:
            found.add(tuple(name))
    return found


def import_graph():
    modules = package_modules()
    return {module: imports_of(path, modules) for module, path in modules.items()}


def test_every_part_of_the_package_has_a_floor():
    """An unknown folder or top-level module fails: a new part must be placed before it is imported."""
    parts = {p.name for p in PACKAGE.iterdir() if not p.name.startswith(".") and p.name != "__pycache__"}
    assert parts - set(LAYERS) - DATA == set(), "a part of the package on no floor: add it to LAYERS"
    assert (set(LAYERS) | DATA) - parts == set(), "on a floor here, gone from the package"
    for data in DATA:
        assert not list((PACKAGE / data).rglob("*.py")), f"{data} holds data alone"


def upward_imports() -> dict[tuple[str, str], list[str]]:
    found: dict[tuple[str, str], list[str]] = {}
    for module, imported in import_graph().items():
        here = part_of(module)
        for target in imported:
            there = part_of(target)
            if LAYERS[there] > LAYERS[here]:
                found.setdefault((here, there), []).append(f"{'.'.join(module)} imports {'.'.join(target)}")
    return found


def test_imports_go_down_the_floors():
    wrong = {pair: lines for pair, lines in upward_imports().items() if pair not in PENDING}
    assert wrong == {}


def test_pending_upward_imports_still_exist():
    """PENDING names only what still imports upward: once the document change lands, delete its entries."""
    assert PENDING - set(upward_imports()) == set(), "no longer imported upward: delete from PENDING"


def circles(graph: dict) -> list[list]:
    """The strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    on_stack: set = set()
    found = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_circle_between_parts_or_modules():
    """Peers on one floor may import each other, never in a circle; and no two modules import each
    other, directly or round a loop (the options' vocabulary and the settings that use it included)."""
    graph = import_graph()
    kept = {
        module: {t for t in targets if (part_of(module), part_of(t)) not in PENDING}
        for module, targets in graph.items()
    }
    parts: dict[str, set[str]] = {}
    for module, targets in kept.items():
        parts.setdefault(part_of(module), set()).update(part_of(t) for t in targets if part_of(t) != part_of(module))
    assert circles(parts) == []
    # A package's __init__ and the modules it gathers belong together: Python imports the package first.
    modules = {m: {t for t in targets if not (len(t) < len(m) and m[: len(t)] == t)} for m, targets in kept.items()}
    assert [[".".join(m) for m in circle] for circle in circles(modules)] == []


def test_the_parts_below_the_plugin_import_no_pytest():
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(REPO).with_suffix("").parts
        if LAYERS[part_of(module if path.name != "__init__.py" else module[:-1])] >= LAYERS["plugin"]:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names += [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            if any(name.split(".")[0] in ("pytest", "_pytest", "xdist") for name in names):
                wrong.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert wrong == []


def test_importing_the_plugin_leaves_what_only_some_runs_use_unimported():
    """Every pytest process (each xdist worker too) imports the plugin: what a replay, the
    reproduction check, the report, the controller's preflight or a detector needs is imported
    where it is used."""
    import subprocess
    import sys

    lazy = (
        "pytest_grounding.analysis.reproduce",
        "pytest_grounding.analysis.document",
        "pytest_grounding.detectors.replay",
        "pytest_grounding.detectors.preflight",
        "urllib.request",
        "httpx",
        "numpy",
        "PIL.Image",
    )
    script = f"import sys, pytest, pytest_grounding.plugin\nprint([m for m in {lazy!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == "[]"
