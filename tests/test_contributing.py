"""CONTRIBUTING.md's map of the package is held against the code, and so are the directions its
imports may take: the map cannot drift, and a pure part cannot start importing pytest."""

import ast
import functools
import re
from pathlib import Path

import pytest

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
# Inside a folder with subfolders, its rooms on floors the same way: each subfolder, and "" for the
# folder's own modules. A module imports only from its own room or a lower floor; two rooms on one
# floor never import each other. A new subfolder fails until it is placed here.
ROOMS = {
    # compat: the hosts' internals (pytest, xdist, pytest-benchmark); common: what every process shares
    # (the plan, settings, specs, the detector pool, the wire); controller and worker: the two sides of
    # a run, peers that never import each other (what they share is in common/ or crosses the wire);
    # plugin's own modules on top: the hooks, the stash keys, collection and fixtures that wire them.
    "plugin": {"compat": 0, "common": 1, "controller": 2, "worker": 2, "": 3},
    # vlm: the prompts, parsers and presets of vision-language models; replay: recorded answers;
    # strategies wrap any detector.
    "detectors": {"vlm": 0, "replay": 0, "": 1, "strategies": 2},
    "datasets": {"synth": 0, "": 1},
    # draw: the kit (canvas, widgets, themes, fonts); archetypes: the screens made from it; the generator on top.
    "datasets/synth": {"draw": 0, "archetypes": 1, "": 2},
    # common: what every output shares (a detector's headline lines, the tables, the board's cells).
    "render": {"common": 0, "html": 1, "": 2},
    "cli": {"curation": 0, "": 1},
}
# The same, for rooms: upward imports between rooms a change still has to remove. Empty: none.
PENDING_ROOMS: set[tuple[str, str]] = set()
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


@functools.cache
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
    assert upward_imports() == {}


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
    kept = import_graph()
    parts: dict[str, set[str]] = {}
    for module, targets in kept.items():
        parts.setdefault(part_of(module), set()).update(part_of(t) for t in targets if part_of(t) != part_of(module))
    assert circles(parts) == []
    # A package's __init__ and the modules it gathers belong together: Python imports the package first.
    modules = {m: {t for t in targets if not (len(t) < len(m) and m[: len(t)] == t)} for m, targets in kept.items()}
    assert [[".".join(m) for m in circle] for circle in circles(modules)] == []


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
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


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
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


def folder_of(module: tuple[str, ...]) -> str:
    """The deepest folder a module is in, below the package ("" for the package's own modules); a
    package's __init__ is in its own folder."""
    is_package = (PACKAGE.parent.joinpath(*module)).is_dir()
    return "/".join(module[1:] if is_package else module[1:-1])


def room_of(folder: str, parent: str) -> str | None:
    """Which room of `parent` a folder is in ("" for parent's own modules), None when outside it."""
    if folder == parent:
        return ""
    prefix = f"{parent}/" if parent else ""
    if not folder.startswith(prefix):
        return None
    return folder[len(prefix) :].split("/")[0]


def pending(here: str, there: str) -> bool:
    """An import from folder `here` to folder `there` that a PENDING entry allows for now."""
    return any(room_of(here, a) is not None and there == b for a, b in PENDING_ROOMS)


def folder_imports() -> dict[tuple[str, str], list[str]]:
    """Imports between two folders (a package's __init__ imported from inside it does not count: Python
    imports it first anyway)."""
    found: dict[tuple[str, str], list[str]] = {}
    for module, targets in import_graph().items():
        here = folder_of(module)
        for target in targets:
            there = folder_of(target)
            inside = module[: len(target)] == target and PACKAGE.parent.joinpath(*target).is_dir()
            if there != here and not inside:
                found.setdefault((here, there), []).append(f"{'.'.join(module)} imports {'.'.join(target)}")
    return found


def test_every_subfolder_has_a_room():
    """Every folder with subfolders orders them in ROOMS, and names each of them there."""
    folders = {"/".join(p.parent.relative_to(PACKAGE).parts) for p in PACKAGE.rglob("__init__.py")}
    with_rooms = {f.rpartition("/")[0] for f in folders if "/" in f}
    assert with_rooms == set(ROOMS), "a folder with subfolders and no ROOMS entry (or one gone)"
    for parent, rooms in ROOMS.items():
        subfolders = {f.rpartition("/")[2] for f in folders if f.rpartition("/")[0] == parent}
        assert set(rooms) == subfolders | {""}, parent


def test_imports_go_down_the_rooms_of_every_folder():
    """plugin/'s controller and worker never import each other; compat/ and common/ import neither;
    and so on for every folder with subfolders."""
    wrong = []
    for (here, there), lines in sorted(folder_imports().items()):
        for parent, rooms in ROOMS.items():
            a, b = room_of(here, parent), room_of(there, parent)
            if a is None or b is None or a == b or pending(here, there):
                continue
            if rooms[b] >= rooms[a]:
                wrong += [f"{parent or 'pytest_grounding'}: {a or '.'} -> {b or '.'}: {line}" for line in lines]
    assert wrong == []


def test_pending_room_imports_still_exist():
    """PENDING_ROOMS names only what still imports upward: delete an entry once its imports are gone."""
    imported = folder_imports()
    for a, b in PENDING_ROOMS:
        assert any(room_of(h, a) is not None and t == b for h, t in imported), f"{a} no longer imports {b}"


def test_no_circle_between_any_two_folders():
    """Two folders never import each other, directly or round a loop: plugin/controller and
    plugin/worker, datasets/synth and its archetypes, a folder and its subfolders, anywhere."""
    graph: dict[str, set[str]] = {}
    for here, there in folder_imports():
        if not pending(here, there):
            graph.setdefault(here, set()).add(there)
            graph.setdefault(there, set())
    assert circles(graph) == []


def test_pytesters_in_process_runs_keep_the_libraries_they_import_and_forget_their_own_modules(pytester, monkeypatch):
    """tests/conftest.py (CONTRIBUTING.md): a library first imported inside one in-process run is the
    same module object in the next run (a second copy broke omegaconf and torch.distributed), while the
    run's own modules are forgotten as pytester forgets them."""
    import sys

    sys.modules.pop("wave", None)  # a standard-library module no test of ours imports: first imported below
    pytester.makepyfile(
        own_helper="VALUE = 1\n",
        test_probe="""
            import os, sys
            import wave
            import own_helper

            def test_record():
                with open(os.environ["PROBE_OUT"], "a") as out:
                    out.write(f"{id(sys.modules['wave'])} {id(own_helper)}\\n")
        """,
    )
    seen = pytester.path / "seen.txt"
    monkeypatch.setenv("PROBE_OUT", str(seen))
    for _ in range(2):
        pytester.inline_run("-p", "no:cacheprovider").assertoutcome(passed=1)
        assert "own_helper" not in sys.modules and "wave" in sys.modules
    first, second = (line.split()[0] for line in seen.read_text().splitlines())
    assert first == second == str(id(sys.modules["wave"]))
