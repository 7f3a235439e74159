"""Every shell command in README.md and docs/*.md runs as shown.

The rules, all of them:

1. Commands are the lines of ```bash fences: a trailing `\\` joins the next line, `#` starts a
   comment, `&&` separates commands run one after the other. One fence is one script: its commands
   run in order in a fresh copy of the repository (what they write lands there, never in the
   checkout), with `../shared` beside the copy when the checkout has one.
2. `pip install` is not run (it would change this environment): it must parse, the files it names
   (`-c`, `-r`) must exist and the extras it asks of this project must be defined in pyproject.toml.
3. PLACEHOLDER: a command line naming `path/to/` stands for the reader's own data and is skipped.
4. SHARED_DATA: a command line naming `../shared/` runs only where that folder is beside the checkout.
5. Long runs are cut: `pytest tests/` gets `--co -q` (it is the suite this test belongs to),
   `pytest suites/` without `--co` gets `--grounding-limit 3` (a larger limit is cut to 3),
   `python benchmarks/*.py` gets `--help`.
6. WORKED_EXAMPLE: a ```python fence whose first line is `# conftest.py` is written to the copy's
   `conftest.py` before the commands of the same page run, so the detector it defines can be named.
7. Success: pytest exits 0 or 1 (1 = misses or a failed gate: what a benchmark run reports) and a run
   of suites/ ends with the grounding summary; any other command exits 0.

Pipes, redirections and `;` are not allowed in a documented command: say it in prose instead.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import tomllib

from helpers import REPO, SHARED_DATA

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
PLACEHOLDER = "path/to/"
SHARED_PREFIX = "../shared/"
LIMIT = ["--grounding-limit", "3"]
TIMEOUT_S = 300
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)
NOT_SIMPLE = {"|", "||", ";", ">", ">>", "<", "&"}


@dataclass
class Script:
    page: Path
    line: int
    commands: list[tuple[str, list[str]]]  # (the command as written, its words)
    conftest: str = ""
    skipped: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def logical_lines(text: str) -> list[str]:
    """Join `\\` continuations; drop blank lines."""
    lines, pieces = [], []
    for raw in text.splitlines():
        continued = raw.rstrip().endswith("\\")
        pieces.append(raw.rstrip()[:-1].strip() if continued else raw.strip())
        if not continued:
            line = " ".join(p for p in pieces if p)
            if line:
                lines.append(line)
            pieces = []
    if any(pieces):
        lines.append(" ".join(p for p in pieces if p))
    return lines


def split_commands(line: str) -> list[list[str]]:
    """Words of each `&&`-separated command, comments dropped."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars="&|;<>")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    commands, current = [], []
    for word in lexer:
        if word == "&&":
            commands.append(current)
            current = []
        elif word in NOT_SIMPLE:
            raise ValueError(f"{line!r}: {word!r} is not allowed in a documented command (see this module's docstring)")
        else:
            current.append(word)
    if current:
        commands.append(current)
    return commands


def scripts_of(page: Path) -> list[Script]:
    text = page.read_text(encoding="utf-8")
    conftest = next(
        (body for kind, body in FENCE.findall(text) if kind == "python" and body.startswith("# conftest.py")), ""
    )
    found = []
    for match in FENCE.finditer(text):
        if match.group(1) != "bash":
            continue
        script = Script(page, text.count("\n", 0, match.start()) + 1, [], conftest)
        for line in logical_lines(match.group(2)):
            if PLACEHOLDER in line:
                script.skipped.append(f"PLACEHOLDER: {line}")
                continue
            if SHARED_PREFIX in line and not SHARED_DATA.is_dir():
                script.skipped.append(f"SHARED_DATA: {line}")
                continue
            script.commands.extend((" ".join(words), words) for words in split_commands(line))
        found.append(script)
    return found


def all_scripts() -> list[Script]:
    seen, unique = set(), []
    for page in PAGES:
        for script in scripts_of(page):
            key = (tuple(c for c, _ in script.commands), script.conftest if script.commands else "")
            if script.commands and key not in seen:  # README and docs share the Quickstart: run it once
                seen.add(key)
                unique.append(script)
    return unique


SCRIPTS = all_scripts()


# ---- the extractor itself -----------------------------------------------------------------------


def test_extractor_joins_continuations_splits_and_drops_comments():
    text = 'pip install -e ".[dev]" && pytest suites/   # the benchmark\npytest suites/ --detector ocr \\\n  -n 2\n\n'
    lines = logical_lines(text)
    assert lines == [
        'pip install -e ".[dev]" && pytest suites/   # the benchmark',
        "pytest suites/ --detector ocr -n 2",
    ]
    assert split_commands(lines[0]) == [["pip", "install", "-e", ".[dev]"], ["pytest", "suites/"]]
    assert split_commands('pytest suites/ -k "gridcalc and icon"') == [["pytest", "suites/", "-k", "gridcalc and icon"]]
    with pytest.raises(ValueError, match="not allowed"):
        split_commands("pytest suites/ --co -q | head")


def test_a_long_documented_run_is_cut_to_three_samples():
    assert cut_limit(["suites/", "--grounding-limit", "40", "-q"]) == ["suites/", "--grounding-limit", "3", "-q"]
    assert cut_limit(["suites/", "--grounding-limit=2"]) == ["suites/", "--grounding-limit=2"]
    assert cut_limit(["suites/", "--grounding-limit=300"]) == ["suites/", "--grounding-limit=3"]


def test_the_pages_have_commands_to_run():
    pages = {script.page.name for script in SCRIPTS}
    assert {"README.md", "getting-started.md", "synthetic.md", "ci.md"} <= pages
    assert sum(len(script.commands) for script in SCRIPTS) >= 10


# ---- running them -------------------------------------------------------------------------------


def cut_limit(args: list[str]) -> list[str]:
    """A --grounding-limit above 3 cut to 3 (rule 5): the command's shape runs, not its length."""
    out, words = [], iter(args)
    for word in words:
        if word == "--grounding-limit":
            value = next(words, "3")
            out += [word, value if value.isdigit() and int(value) <= 3 else "3"]
        elif word.startswith("--grounding-limit="):
            value = word.partition("=")[2]
            out.append(word if value.isdigit() and int(value) <= 3 else "--grounding-limit=3")
        else:
            out.append(word)
    return out


def prepared(words: list[str]) -> tuple[list[str], str]:
    """(argv to run, kind) after rule 5."""
    program, args = words[0], list(words[1:])
    if program == "python" and args[:2] == ["-m", "pytest"]:
        program, args = "pytest", args[2:]
    if program == "pytest":
        argv = [sys.executable, "-m", "pytest", *args]
        if args and args[0].startswith("tests"):
            return [*argv, "--co", "-q"], "pytest"
        if args and args[0].startswith("suites") and "--co" not in args and "--collect-only" not in args:
            argv = [*argv[:3], *cut_limit(args)]  # a documented first look (--grounding-limit 40) runs 3 here
            if not any(a.startswith("--grounding-limit") for a in args):
                argv += LIMIT
            return argv, "suite"
        return argv, "pytest"
    if program == "python":
        if args and args[0].startswith("benchmarks/"):
            args.append("--help")
        return [sys.executable, *args], "other"
    return [program, *args], "other"


def check_pip_install(words: list[str], root: Path) -> None:
    assert words[:2] == ["pip", "install"], words
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    extras = set(project.get("optional-dependencies", {}))
    args = iter(words[2:])
    for word in args:
        if word in ("-c", "-r", "--constraint", "--requirement"):
            assert (root / next(args)).is_file(), f"{words}: no such file"
        elif word.startswith("-"):
            continue
        else:
            target, _, asked = word.partition("[")
            ours = target in (".", project["name"]) or (root / target).resolve() == root
            if ours and asked:
                missing = set(asked.rstrip("]").split(",")) - extras
                assert not missing, f"{words}: pyproject.toml defines no extra {missing}"


@pytest.fixture
def copy_of_repo(tmp_path):
    root = tmp_path / "repo"
    shutil.copytree(
        REPO,
        root,
        ignore=shutil.ignore_patterns(
            ".git", "site", "out", "*.egg-info", "__pycache__", ".pytest_cache", ".benchmarks", ".grounding-cache"
        ),
    )
    if SHARED_DATA.parent.is_dir():
        (tmp_path / "shared").symlink_to(SHARED_DATA.parent, target_is_directory=True)
    return root


def environment(root: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_XDIST", "PYTEST_CURRENT"))}
    env.update(PYTHONPATH=str(root), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return env


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS, ids=[s.label for s in SCRIPTS])
def test_documented_commands_run(script, copy_of_repo):
    if script.conftest:
        import pytest_grounding

        if not hasattr(pytest_grounding, "Prediction"):
            pytest.skip("the worked example imports `from pytest_grounding import ...`, not in this checkout yet")
        (copy_of_repo / "conftest.py").write_text(script.conftest, encoding="utf-8")
    for written, words in script.commands:
        if words[:2] == ["pip", "install"]:
            check_pip_install(words, copy_of_repo)
            continue
        argv, kind = prepared(words)
        result = subprocess.run(
            argv, cwd=copy_of_repo, env=environment(copy_of_repo), capture_output=True, text=True, timeout=TIMEOUT_S
        )
        output = result.stdout + result.stderr
        missing_extra = re.search(r"needs the '(\w+)' extra", output)
        if result.returncode == 4 and missing_extra:  # the core-only install: the page's extra is absent
            pytest.skip(f"{script.label}: `{written}` needs the {missing_extra.group(1)!r} extra, not installed here")
        allowed = (0, 1) if kind in ("pytest", "suite") else (0,)
        assert result.returncode in allowed, (
            f"{script.label}: `{written}` (run as {shlex.join(argv[1:])}) exited {result.returncode}:\n{output[-3000:]}"
        )
        if kind == "suite":
            assert "grounding summary" in result.stdout, f"{script.label}: `{written}` printed no summary"


# ---- the generated options page -----------------------------------------------------------------


def load_docs_hooks():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "grounding_docs_hooks", REPO / "docs" / "_hooks" / "grounding_docs.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_options_page_lists_every_option_with_its_help_in_its_group():
    import html

    from pytest_grounding.plugin.common.settings import all_options, option_groups

    table = load_docs_hooks().options_table()
    for option in all_options():
        assert f"<code>{html.escape(option.flag)}" in table
        assert html.escape(option.doc or option.help).split("`")[0][:60] in table  # the whole text
        if option.ini:
            assert f"<code>{option.ini}</code>" in table
    headings = [table.index(f'id="{name}"') for name, _, _ in option_groups()]
    assert [name for name, _, _ in option_groups()] == ["selection", "scoring", "verdict", "outputs"]
    assert headings == sorted(headings)
    assert table.index('id="selection"') < table.index('id="dataset"') < table.index('id="scoring"')


def test_the_checked_in_options_table_is_the_one_the_declarations_make():
    """docs/options.md holds the generated table (a review sees it change); drift fails here, in CI.
    Fix: python docs/_hooks/grounding_docs.py"""
    hooks = load_docs_hooks()
    page = (REPO / "docs" / "options.md").read_text(encoding="utf-8")
    assert hooks.checked_in_options(page) == hooks.options_block(), "run: python docs/_hooks/grounding_docs.py"


def test_the_options_table_is_regenerated_in_place(tmp_path):
    hooks = load_docs_hooks()
    page = tmp_path / "options.md"
    page.write_text(f"# Options\n\n{hooks.OPTIONS_MARKER}\nstale\n{hooks.OPTIONS_END}\n\n## Details\n")
    assert hooks.write_options_page(page) is True and hooks.write_options_page(page) is False
    text = page.read_text()
    assert "stale" not in text and "--grounding-min-accuracy" in text and text.endswith("## Details\n")


def test_options_page_reads_new_fields_defensively(monkeypatch):
    from dataclasses import dataclass

    import pytest_grounding.plugin.common.settings as settings

    @dataclass(frozen=True)
    class Future:  # what Option may become: a longer doc text, fields the page does not know
        flag: str
        help: str
        doc: str = ""
        group: str = "new"

    future = (Future("--grounding-new", "short", doc="a longer `text`"),)
    monkeypatch.setattr(settings, "option_groups", lambda: (("new", "what is new", future),))
    table = load_docs_hooks().options_table()
    assert "<code>--grounding-new</code>" in table and "a longer <code>text</code>" in table
