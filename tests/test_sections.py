"""Report sections (pytest_grounding/sections): the registry, coverage of every output by every
section (each renders there or says why not: drift is a failing test), the shipped schema equal
to the sections' assembly, a project's own section through the hook, and one run with epochs, a
sweep axis and the answer cache whose figures show in the terminal, the markdown summary, the
HTML page and MLflow (serially and under xdist)."""

import importlib.util
import json
import random
import subprocess
import sys
import threading

import pytest

from helpers import FIXTURES, SERIAL, LoopbackServer, make_project, needs_openai, read_json
from pytest_grounding.analysis import metrics, tracked
from pytest_grounding.render.html import render
from pytest_grounding.render.markdown import report_markdown
from pytest_grounding.sections import OUTPUTS, SCHEMA, Section, base, registry
from pytest_grounding.sections import schema as schema_mod

MINI = str(FIXTURES / "mini")
FEW = ["-k", "m01 or m02 or m03"]
# what summarize writes into every block itself; every other key of a block is a section's
CORE_BLOCK = {
    "task",
    "detector",
    "label",  # a spec's label= (issue 51)
    "samples",
    "scored",
    "hits",
    "misses",
    "wrong_format",
    "errors",
    "accuracy",
    "mean_iou",
    "with_box",
    "truncated",
    "ci95",
    "macro_app_accuracy",
    "macro_app_ci95",
    "macro_dataset_accuracy",
    "macro_dataset_ci95",
    "latency_ms",
    "mean_attempts",
    "by",
}


# -- the registry's coverage ------------------------------------------------------------------------


def builtins():
    return registry.builtin_sections().sections()


def registered():
    """Every registered section: the built-ins and the installed packages' (no frozen list)."""
    return registry.default().sections()


@pytest.mark.parametrize("section", registered(), ids=lambda s: s.name)
def test_every_section_renders_in_every_output_or_says_why_not(section):
    assert section.name and section.title, "a section has a name and a title"
    assert set(section.not_in) <= set(OUTPUTS), f"{section.name}: not_in names an unknown output"
    for output in OUTPUTS:
        renders, declared = section.renders_in(output), output in section.not_in
        assert renders or declared, f"section {section.name!r} neither renders in {output} nor says why in not_in"
        assert not (renders and declared), f"section {section.name!r} renders in {output} yet declares it does not"
        if declared:
            assert len(section.not_in[output]) > 20, "the reason is a sentence"


def test_a_section_missing_an_output_is_found():
    class Half(Section):
        name = "half"
        title = "Half"

        def terminal(self, view):
            return ["  half"]

    found = base.coverage(Half())
    assert found.renders == ("terminal", "html")  # the terminal lines are also its HTML (html_inline)
    assert not Half().renders_in("markdown") and not Half().renders_in(SCHEMA)


def test_the_built_ins_are_registered_lazily_by_name():
    fresh = registry.builtin_sections()
    assert set(fresh.names()) == set(registry.BUILTIN)
    assert fresh._loaded == {}  # nothing imported until asked
    assert fresh.section("epochs").name == "epochs"
    with pytest.raises(LookupError, match="Did you mean 'epochs'"):
        fresh.section("epoch")


def test_a_section_named_otherwise_than_registered_is_refused():
    fresh = registry.builtin_sections()
    fresh.register("other", "pytest_grounding.sections.cache:SECTION")
    with pytest.raises(ValueError, match="names itself 'cache'"):
        fresh.section("other")


def test_every_key_of_a_summary_block_is_core_or_a_section_s():
    """Runs summarize over records that give every detector-level section figures it can make
    from plain records (refusals, locate, cache, epochs) and checks no other key appears."""
    names = {s.name for s in builtins()}
    rec = {
        "detector": "d",
        "dataset": "ds",
        "element_type": "icon",
        "app": "a",
        "app_category": "c",
        "platform": "p",
        "size": "<32",
        "image": "s.png",
        "latency_ms": 1.0,
        "iou": None,
    }
    records = [
        {**rec, "uid": "u1-e1", "epoch": 1, "outcome": "hit", "point": [1, 1], "meta": {"answer_cache": "stored"}},
        {**rec, "uid": "u1-e2", "epoch": 2, "outcome": "miss", "point": [5, 5], "meta": {"answer_cache": "hit"}},
        {**rec, "uid": "u2-e1", "epoch": 1, "outcome": "hit", "point": None, "negative": True, "refusal": True},
    ]
    assert "epochs" not in metrics.summarize(records)["d"], "analysis knows no section: they are passed in"
    block = registry.summarize(records)["d"]
    assert {"epochs", "cache", "refusals"} <= set(block)
    assert set(block) - CORE_BLOCK <= names


# -- the schema ---------------------------------------------------------------------------------------


def test_the_shipped_schema_is_the_sections_assembly():
    shipped = schema_mod.read_shipped()
    assert schema_mod.text(schema_mod.assemble(shipped)) == schema_mod.SHIPPED.read_text(encoding="utf-8"), (
        "python -m pytest_grounding.sections.schema --write"
    )
    block = shipped["$defs"]["detectorSummary"]["properties"]
    owned = {s.name for s in builtins() if s.level == "detector" and s.schema() is not None}
    assert set(block) - CORE_BLOCK == owned, "every non-core key of a block's schema is a section's"


def test_a_changed_fragment_makes_the_assembly_differ(monkeypatch):
    shipped = schema_mod.read_shipped()
    fresh = registry.builtin_sections()
    cache = fresh.section("cache")
    monkeypatch.setattr(type(cache), "schema", lambda self: {"type": "object"})
    assert schema_mod.assemble(shipped, fresh) != shipped


def test_the_schema_command_checks_the_file():
    done = subprocess.run([sys.executable, "-m", "pytest_grounding.sections.schema"], capture_output=True, text=True)
    assert done.returncode == 0 and "matches the sections" in done.stdout, done.stdout + done.stderr


# -- a project's own section ------------------------------------------------------------------------------

PROJECT_SECTION = """
from pytest_grounding.sections import Section

class Clicks(Section):
    name = "clicks"
    title = "Clicks"
    def figures(self, found):
        return {"points": sum(1 for r in found.records if r.get("point"))}
    def terminal(self, view):
        found = view.found("clicks")
        return [f"  clicks: {found['points']} points"] if found else []
    def markdown(self, document):
        return [f"clicks of {k}: {f['points']}" for k, f in self.blocks(document)]
    def metrics(self, document, key):
        found = self.found_in(document, key) or {}
        if found:
            yield "clicks.points", float(found["points"])
    not_in = {"schema": "a project's section: the shipped schema is the built-ins' own"}

def pytest_grounding_register_sections(registry):
    registry.register("clicks", Clicks())
"""


@SERIAL
def test_a_project_registers_its_own_section_through_the_hook(pytester, tmp_path, workers):
    make_project(pytester, conftest=PROJECT_SECTION)
    report = tmp_path / "r.json"
    args = [f"--dataset={MINI}", "--detector", "center", "--grounding-json", str(report), "--grounding-misses"]
    result = pytester.runpytest(*args, "xfail", *FEW, *workers)
    assert result.ret == 0, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(["*clicks: 3 points*"])
    document = read_json(report)
    assert document["summary"]["center"]["clicks"] == {"points": 3}
    assert "clicks" not in registry.default().names(), "the session's sections live on its plan, no global"
    # a report read back with the project's registry handed in renders its part
    fresh = registry.builtin_sections()
    namespace: dict = {}
    exec(PROJECT_SECTION, namespace)
    namespace["pytest_grounding_register_sections"](fresh)
    assert "clicks of center: 3" in report_markdown(document, sections=fresh)
    assert "clicks of center" not in report_markdown(document)
    (run,) = tracked.tracked_runs(document, fresh.sections())
    assert run.metrics["clicks.points"] == 3.0


BROKEN_SECTION = """
from pytest_grounding.sections import Section

class Broken(Section):
    name = "broken"
    def figures(self, found):
        raise RuntimeError("figures broke")
    def terminal(self, view):
        raise RuntimeError("terminal broke")
    def markdown(self, document):
        raise RuntimeError("markdown broke")
    def html(self, document, page):
        raise RuntimeError("html broke")
    def metrics(self, document, key):
        raise RuntimeError("metrics broke")
    not_in = {"schema": "a project's section"}

def pytest_grounding_register_sections(registry):
    registry.register("broken", Broken())
"""


@SERIAL
def test_a_project_section_that_raises_leaves_its_part_out_and_the_run_whole(pytester, tmp_path, workers):
    make_project(pytester, conftest=BROKEN_SECTION)
    report, page = tmp_path / "r.json", tmp_path / "r.html"
    args = [f"--dataset={MINI}", "--detector", "center", "--grounding-json", str(report), "--grounding-html", str(page)]
    result = pytester.runpytest(*args, "--grounding-misses", "xfail", *FEW, *workers)
    assert result.ret == 0, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(["*grounding summary*", "*report section 'broken': figures() raised RuntimeError*"])
    assert "INTERNALERROR" not in result.stdout.str()
    document = read_json(report)
    assert "broken" not in document["summary"]["center"] and document["summary"]["center"]["samples"] > 0
    assert page.is_file()


# -- one run, every output --------------------------------------------------------------------------------

RIGHT = {"red": (42, 42), "blue": (284, 200), "green": (252, 52)}
WRONG = (168, 126)
READ_MLFLOW = """
import json, sys
from mlflow.tracking import MlflowClient
client = MlflowClient(tracking_uri=sys.argv[1])
experiment = client.get_experiment_by_name("pytest-grounding")
runs = client.search_runs([experiment.experiment_id])
print(json.dumps({r.data.tags["mlflow.runName"]: r.data.metrics for r in runs}))
"""


class RandomModel:
    """Answers with the right square or a wrong point, at random: the epochs differ."""

    def __init__(self):
        self.lock = threading.Lock()
        self.asked = 0

    def reply(self, handler):
        length = int(handler.headers.get("Content-Length") or 0)
        body = json.loads(handler.rfile.read(length)) if length else None
        if handler.path.endswith("/models"):
            return 200, {"object": "list", "data": [{"id": "m", "object": "model"}]}
        text = body["messages"][-1]["content"][1]["text"].lower()
        word = next(c for c in RIGHT if c in text)
        with self.lock:
            self.asked += 1
        x, y = RIGHT[word] if random.random() < 0.5 else WRONG
        choice = {"index": 0, "message": {"role": "assistant", "content": f"({x},{y})"}, "finish_reason": "stop"}
        return 200, {"id": "c", "object": "chat.completion", "model": body["model"], "choices": [choice]}


@pytest.fixture
def served():
    model = RandomModel()
    server = LoopbackServer(model.reply)
    yield model, server
    server.close()


@pytest.mark.slow  # a pytest process of its own that imports MLflow: ~10 s
@needs_openai
@SERIAL
def test_epochs_sweep_and_cache_show_in_every_output(pytester, served, tmp_path, monkeypatch, workers):
    pytest.importorskip("ui_tars")
    if importlib.util.find_spec("mlflow") is None:  # never imported here: MLflow must not enter the test process
        pytest.skip("the mlflow extra")
    model, server = served
    make_project(pytester)
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    uri = (tmp_path / "mlruns").as_uri()
    report, page = tmp_path / "r.json", tmp_path / "r.html"
    spec = f"openai:base_url={server.url},model=m,preset=uitars-1.5-point,retries=0"
    result = pytester.runpytest_subprocess(
        f"--dataset={MINI}", "--detector", spec, "--grounding-epochs", "2", "--grounding-perturb", "invert",
        "--grounding-cache", str(tmp_path / "cache"), "--grounding-log", f"mlflow:{uri}",
        "--grounding-json", str(report), "--grounding-html", str(page), "--grounding-misses", "xfail", *FEW, *workers,
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-3000:]
    document = read_json(report)
    block = document["summary"][spec]
    # 3 samples, 2 epochs, the original and invert; and the frame check's 12 calibration screens (issue 46)
    assert block["epochs"]["epochs"] == 2 and model.asked == 12 + 12
    assert document["frame_check"][spec]["requests"] == 12
    assert block["cache"] == {"hits": 0, "stored": 6, "asked": 6}  # the block's: the originals
    (variant,) = block["robustness"]["variants"]
    assert variant["label"] == "invert"
    # the terminal
    result.stdout.fnmatch_lines(
        ["*epochs 2 over 3 samples: mean accuracy*", "*robustness (--grounding-perturb)*", "*cache: 0 hits, *stored*"]
    )
    # the markdown summary
    text = report_markdown(document)
    assert "### Repeated sampling" in text and "### Robustness" in text and "### Answer cache" in text
    assert f"| {block['cache']['stored']} |" in text
    # the HTML page (written by the run)
    html = page.read_text(encoding="utf-8")
    assert 'id="epochs"' in html and "<h2>Robustness</h2>" in html and 'id="cache"' in html
    assert "cache: 0 hits" in html and "epochs 2 over 3 samples" in html  # the detector's box too
    assert 'id="tolerance"' in html and 'id="frame-check"' in html and "### Accuracy against tolerance" in text
    # MLflow, read back by its own client
    done = subprocess.run([sys.executable, "-c", READ_MLFLOW, uri], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    logged = json.loads(done.stdout.splitlines()[-1])[spec]
    assert logged["epochs.mean_accuracy"] == pytest.approx(block["epochs"]["mean_accuracy"])
    assert logged["robustness.invert.delta"] == pytest.approx(variant["delta"])
    assert logged["robustness.invert.pairs"] == variant["pairs"]
    assert logged["cache.stored"] == block["cache"]["stored"]


def test_a_report_renders_in_every_output_from_the_sections(tmp_path):
    """A hand-made report with every detector section's figures: each section's part is in the
    markdown, the HTML and the tracker metrics."""
    block = {
        **{k: 0 for k in ("samples", "scored", "hits", "misses", "wrong_format", "errors", "with_box", "truncated")},
        "task": "grounding",
        "detector": "d",
        "accuracy": None,
        "mean_iou": None,
        "ci95": None,
        "macro_app_accuracy": None,
        "macro_dataset_accuracy": None,
        "latency_ms": {"n": 0, "p50": None, "p95": None, "mean": None, "total_s": 0.0},
        "by": {k: [] for k in metrics.SLICES},
        "cache": {"hits": 1, "stored": 2, "asked": 3},
        "agentic": {
            "samples": 2,
            "turns": {"mean": 1.5, "p95": 2, "max": 2},
            "crops": {"mean": 0.5, "p95": 1, "max": 1},
            "by_turns": [{"turns": 1, "scored": 1, "hits": 1, "accuracy": 1.0, "ci95": [0.2, 1.0]}],
            "ends": {"click": 2},
            "clicks": 2,
            "refusals": 0,
            "invalid_actions": 0,
            "loops": 0,
            "budget_exhausted": 0,
            "wrong_formats": 0,
        },
    }
    document = {"summary": {"d": block}, "run": {"detectors": {}}, "samples": []}
    text = report_markdown(document)
    assert "### Answer cache" in text and "### Agentic episodes" in text
    page, _, _ = render(document)
    assert 'id="cache"' in page and 'id="agentic"' in page
    (run,) = tracked.tracked_runs(document, registered())
    assert run.metrics["cache.asked"] == 3 and run.metrics["agentic.turns.mean"] == 1.5
    assert run.metrics["agentic.by_turns.1.accuracy.ci95_low"] == 0.2


# -- each section's example in every output it renders in -----------------------------------------------


def without(name):
    """Every registered section less one."""
    fresh = registry.SectionRegistry()
    for other in registry.default().names():
        if other != name:
            fresh.register(other, registry.default().get(other).target)
    return fresh


def outputs(document, active):
    """The document in each output, with `active` the sections' registry (the terminal: the whole
    summary as `merge` and `report` print it, run-level sections included)."""
    from pytest_grounding.analysis.result import RunResult
    from pytest_grounding.render import terminal

    shown = {**document, "run": {"datasets": [], **document["run"]}}
    result = RunResult.of_report(shown, sections=tuple(active.sections()))
    return {
        "terminal": terminal.summary_lines(result),
        "markdown": report_markdown(document, sections=active),
        "html": render(document, sections=active)[0],
        "tracker": tracked.tracked_runs(document, active.sections())[0].metrics,
    }


def test_every_registered_section_gives_an_example():
    assert [s.name for s in registered() if s.example() is None] == []


@pytest.mark.parametrize("section", registered(), ids=lambda s: s.name)
def test_each_section_s_example_shows_in_every_output_it_renders_in(section):
    """Rendered with every section and with every section but this one, each output the section
    renders in differs (its part is there, through the output's loop); its figures fit its schema
    fragment. (A run-level section whose terminal lines need a finished run's objects, the baseline's
    comparison, replayed findings, the reproduction verdicts, is tested by its feature's run.)"""
    document = section.example()
    found = outputs(document, registry.default())
    less = outputs(document, without(section.name))
    for output in ("markdown", "html", "tracker"):
        if section.renders_in(output):
            assert found[output] != less[output], f"{section.name}'s part is missing from the {output}"
    if type(section).terminal is not Section.terminal or section.name == "errata":
        assert found["terminal"] != less["terminal"], f"{section.name}'s lines are missing from the terminal"
    own = {k: v for k, v in found["tracker"].items() if k not in less["tracker"]}
    if section.renders_in("tracker"):
        assert own and all(k.startswith(f"{section.name}.") for k in own), own
    if section.renders_in(SCHEMA):
        jsonschema = pytest.importorskip("jsonschema")
        defs = schema_mod.read_shipped()["$defs"]
        parts = {section.name: section.schema()} if section.schema() is not None else {}
        parts.update(section.schema_report())
        for key, fragment in parts.items():
            in_block = section.level == "detector" and key == section.name
            if not in_block and key not in document:
                continue  # robustness_gates: the example sets no gate
            value = next(iter(document["summary"].values()))[key] if in_block else document[key]
            validator = jsonschema.Draft202012Validator({**fragment, "$defs": defs})
            assert [e.message for e in validator.iter_errors(value)] == [], key


def test_an_installed_package_s_section_comes_through_the_entry_point_group(tmp_path, monkeypatch):
    (tmp_path / "their_sections.py").write_text(
        "from pytest_grounding.sections import Section\n"
        "class Theirs(Section):\n"
        "    name = 'theirs'\n"
        "    title = 'Theirs'\n"
        "SECTION = Theirs()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))

    class EntryPoint:
        name, value = "theirs", "their_sections:SECTION"

    fresh = registry.builtin_sections()
    fresh.register_entry_points(registry.ENTRY_POINTS, [EntryPoint()])
    assert fresh.section("theirs").title == "Theirs"
    assert fresh.get("theirs").origin == "entry point their_sections:SECTION"
    assert [s.name for s in fresh.sections()][-1] == "theirs"  # order 100: after the built-ins
