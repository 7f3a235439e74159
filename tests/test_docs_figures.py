"""One source for every duration the docs quote (docs/_figures.json, written into docs/figures.md
as a checked-in table that cannot drift): the README and the pages a new user reads first quote
none of their own, and no page quotes a duration next to a timed command that is not the file's;
the README's two commands are the quick start's (the `ocr` extra, then `[dev]` and the tests) and
`.ci/run` runs the README's test command as its two tiers (fast, then slow)."""

import json
import re

import pytest

from helpers import REPO

FIGURES = json.loads((REPO / "docs" / "_figures.json").read_text(encoding="utf-8"))
FIRST_PAGES = ("README.md", "docs/getting-started.md", "docs/index.md", "CONTRIBUTING.md")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
# a duration in prose: "about 2 minutes", "in 110 s", "20 min", "1,276 tests in 110 s"
DURATION = re.compile(r"\b(?:about|in|takes?|took)\s+~?\d[\d,.]*\s*(?:minutes?|min|seconds?|s|h|hours?)\b", re.I)


def prose(path):
    return FENCE.sub("", (REPO / path).read_text(encoding="utf-8"))


def load_hooks():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "grounding_docs_hooks", REPO / "docs" / "_hooks" / "grounding_docs.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_timing_says_what_ran_where_and_when():
    keys = [t["key"] for t in FIGURES["timings"]]
    assert len(keys) == len(set(keys)) and {"default_run", "smoke", "tests_fast", "tests_all"} <= set(keys)
    for timing in FIGURES["timings"]:
        assert isinstance(timing["seconds"], (int, float)) and timing["seconds"] > 0, timing
        for field in ("command", "what", "machine", "load", "date", "source"):
            assert str(timing[field]).strip(), (timing["key"], field)


def test_the_figures_page_renders_every_timing_from_the_file():
    hooks = load_hooks()
    page = (REPO / "docs" / "figures.md").read_text(encoding="utf-8")
    assert hooks.TIMINGS_MARKER in page
    rendered = hooks.on_page_markdown(page, None, None, None)
    for text in (page, rendered):  # the checked-in page (GitHub shows it as is) and the built one
        for timing in FIGURES["timings"]:
            assert f'id="timing-{timing["key"]}"' in text
            assert hooks.duration(timing["seconds"]) in text
    assert rendered.count('id="timing-default_run"') == 1


def test_the_checked_in_timings_table_is_the_one_the_file_makes():
    """docs/figures.md holds the table of docs/_figures.json; drift fails here (regenerate: python
    docs/_hooks/grounding_docs.py)."""
    hooks = load_hooks()
    page = (REPO / "docs" / "figures.md").read_text(encoding="utf-8")
    found = hooks.checked_in_block(page, hooks.TIMINGS_MARKER, hooks.TIMINGS_END)
    assert found == hooks.timings_block(), "run: python docs/_hooks/grounding_docs.py"


EVERY_PAGE = sorted(
    [p.relative_to(REPO).as_posix() for p in (REPO / "docs").rglob("*.md")] + ["README.md", "CONTRIBUTING.md"]
)


@pytest.mark.parametrize("path", EVERY_PAGE)
def test_no_page_quotes_a_timed_command_with_another_duration(path):
    conflicts = load_hooks().timing_conflicts((REPO / path).read_text(encoding="utf-8"))
    assert not conflicts, f"{path}: (quoted, timing, docs/_figures.json's) {conflicts}: link docs/figures.md instead"


def test_the_timing_check_can_fail():
    hooks = load_hooks()
    said = "The suite in `tests/` runs on 2 cores (`.ci/run`, about\n  2 minutes): end to end."
    (tests_all,) = [t["seconds"] for t in FIGURES["timings"] if t["key"] == "tests_all"]
    assert tests_all != 120  # the quote below disagrees with the file
    assert hooks.timing_conflicts(said) == [("about 2 minutes", "tests_all", hooks.duration(tests_all))]
    right = f"The suite in `tests/` runs on 2 cores (`.ci/run`, {hooks.duration(tests_all)})."
    assert hooks.timing_conflicts(right) == []
    other = "The suite in `tests/` runs everywhere.\n\nA cached rerun took 17.5 s."  # another paragraph
    assert hooks.timing_conflicts(other) == []


@pytest.mark.parametrize("path", FIRST_PAGES)
def test_the_first_pages_quote_no_duration_of_their_own(path):
    found = DURATION.findall(prose(path))
    assert not found, f"{path} quotes {found}: keep durations in docs/_figures.json (docs/figures.md shows them)"


def test_the_check_can_fail():
    assert DURATION.findall("it takes about 2 minutes on 2 cores; 1,276 tests in 110 s")


def test_the_readme_quick_start_is_a_first_look_the_whole_run_then_the_tests_as_ci_runs_them():
    """Issue 61: the first command gives a number soon (the first 40 samples: the `smoke` timing) on
    CPU builds only, the whole run is the next line, the tests come after in their own fence."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme[readme.index("## Quickstart") :]
    fences = re.findall(r"```bash\n(.*?)\n```", block, re.S)
    first, whole = fences[0].splitlines()[:2]
    assert '-e ".[ocr-cpu]"' in first and "[dev]" not in first and "-c constraints.txt" in first
    smoke = next(t["command"] for t in FIGURES["timings"] if t["key"] == "smoke")
    assert first.endswith(f"&& {smoke}") and whole == "pytest suites/"
    second = fences[1].splitlines()[0]
    assert '-e ".[dev]"' in second and "-c constraints.txt" in second
    test_command = second.split("&&", 1)[1].strip()
    ci = [line.strip() for line in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    ci = [line for line in ci if line and not line.startswith("#")]
    # .ci/run runs the README's command as its two tiers, the fast one first: each test once.
    assert test_command == "pytest tests/ -n 2"
    assert ci[-1] == "python -m pytest tests/ -n 2 -m slow --durations=25", ci[-1]
    assert 'python -m pytest tests/ -n 2 -m "not slow" --durations=25' in ci[:-1]
    assert any('-c constraints.txt -e ".[dev]"' in line for line in ci)


def test_the_timings_are_written_by_the_benchmark_script(tmp_path, monkeypatch):
    """benchmarks/time_commands.py times an entry's command and records it with its machine, load
    and date: the file's figures come from a measurement, not from a hand."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("time_commands", REPO / "benchmarks" / "time_commands.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    figures = tmp_path / "_figures.json"
    command = 'python -c "import time; time.sleep(1.2)"'
    figures.write_text(json.dumps({"about": "x", "timings": [{"key": "nap", "command": command, "seconds": 99}]}))
    monkeypatch.setattr(script, "FIGURES", figures)
    monkeypatch.setattr(script, "REPO", tmp_path)
    assert script.main(["nap", "--write"]) == 0
    (entry,) = json.loads(figures.read_text())["timings"]
    assert 1 <= entry["seconds"] <= 120 and entry["command"] == command  # 1.2 s of sleep, on a machine of any load
    assert "cores" in entry["machine"] and "load average" in entry["load"] and entry["date"]
    assert entry["source"].startswith("benchmarks/time_commands.py")
