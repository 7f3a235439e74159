"""CONTRIBUTING.md's map of the package is held against the code, and so are the directions its
imports may take: the map cannot drift, and a pure part cannot start importing pytest."""

import ast
import re

from helpers import REPO

PACKAGE = REPO / "pytest_grounding"
# Folders whose modules the map names one by one; the others it names as folders.
ITEMISED = ("core", "evaluate", "analysis", "render", "store", "plugin")
# What each part may import from the package (besides itself); `None`: anything.
MAY_IMPORT = {
    "core": set(),
    "evaluate": {"core"},
    "analysis": {"core"},
    "render": {"core", "analysis", "store"},
    "store": {"core"},
    "datasets": {"core"},
    "detectors": {"core", "evaluate", "analysis", "datasets"},
    "plugin": None,
    "cli": None,
}


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


def imported_parts(path):
    """The package's top folders a module imports (absolute or relative, at any depth)."""
    module = path.relative_to(REPO).with_suffix("").parts
    package = module if path.name == "__init__.py" else module[:-1]
    if path.name == "__init__.py":
        package = module[:-1]
    parts = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[: len(package) - node.level + 1])
                target = base + (node.module.split(".") if node.module else [])
                names = [[*target, alias.name] for alias in node.names] if not node.module else [target]
            else:
                names = [(node.module or "").split(".")]
        elif isinstance(node, ast.Import):
            names = [alias.name.split(".") for alias in node.names]
        else:
            continue
        for name in names:
            if name[:1] == ["pytest_grounding"] and len(name) > 1:
                parts.add(name[1])
            if name[:1] == ["pytest"] and len(name) == 1:
                parts.add("pytest")
    return parts


def test_imports_go_one_way():
    wrong = []
    for part, allowed in MAY_IMPORT.items():
        if allowed is None:
            continue
        for path in sorted((PACKAGE / part).rglob("*.py")):
            for imported in imported_parts(path) - {part} - allowed:
                if imported in MAY_IMPORT or imported == "pytest":
                    wrong.append(f"{path.relative_to(REPO)} imports {imported}")
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
