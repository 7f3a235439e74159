"""`python -m pytest_grounding fake-server` (detectors/fake_server.py): a stand-in OpenAI-compatible
server answering the image's centre in a preset's form; and no silent preset for a served model
(detectors/vlm/matching.py): no preset= picks one by the model id and says so, an id no preset
matches stops the run with one message naming presets."""

import re
import subprocess
import sys

import pytest

from helpers import FIXTURES, SERIAL, make_project, needs_openai, read_json
from pytest_grounding.detectors.fake_server import FakeServer, answer_text, centre_in_frame
from pytest_grounding.detectors.vlm.matching import NoPresetMatches
from pytest_grounding.detectors.vlm.parse import extract, to_pixels
from pytest_grounding.detectors.vlm.preprocess import Frame
from pytest_grounding.detectors.vlm.presets import all_presets, served_pick

MINI = str(FIXTURES / "mini")


@pytest.mark.parametrize("name", sorted(all_presets()))
def test_each_presets_answer_is_read_back_as_the_centre(name):
    preset = all_presets()[name]
    size = (1036, 756)
    try:
        found = extract(answer_text(preset.extractors, *centre_in_frame(preset.transform, size)), preset.extractors)
    except ModuleNotFoundError as exc:  # a parser from an extra (ui-tars): the core install has none
        pytest.skip(f"{name}: {exc}")
    assert found is not None, name
    x, y = to_pixels(*found.values[:2], Frame(original=size, model=size), preset.transform)
    assert abs(x - size[0] / 2) <= 1 and abs(y - size[1] / 2) <= 1, (name, x, y)


def test_a_model_id_picks_its_preset_and_an_unknown_one_is_refused():
    assert served_pick("openai", None, "ByteDance-Seed/UI-TARS-1.5-7B").name == "uitars-1.5-point"
    assert served_pick("openai", "auto", "Qwen/Qwen2.5-VL-7B-Instruct").name == "qwen2.5-vl"
    assert served_pick("openai", None, "fake/gemini-box2d").name == "gemini-box2d"  # a whole name wins
    assert served_pick("openai", "qwen3-vl", "anything").by_model is None  # named: taken as given
    assert served_pick("openai", None, None) is None  # the server's model id decides, later
    with pytest.raises(NoPresetMatches, match=r"no preset= given .*'my-llava-13b'.*preset=NAME \(closest: [a-z]"):
        served_pick("vllm", None, "my-llava-13b")
    with pytest.raises(NoPresetMatches, match=r"preset=auto and no preset matches the model id 'my-llava-13b'"):
        served_pick("vllm", "auto", "my-llava-13b")  # it was given: auto, not none


def assert_every_answer_read(document):
    """Every sample with an image was answered and read (a hit or a miss: no wrong format, no HTTP
    error); the mini fixture's two broken images are errors of their own."""
    readable = [r for r in document["samples"] if "image" not in (r.get("error") or "")]
    assert len(readable) >= 6, document["samples"][:2]
    assert {r["outcome"] for r in readable} <= {"hit", "miss"}, [r.get("error") or r.get("raw") for r in readable]


@pytest.fixture
def project(pytester):
    return make_project(pytester)


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
@needs_openai
@SERIAL
def test_a_run_against_the_stand_in_with_no_preset_says_which_the_model_id_picked(project, tmp_path, workers):
    with FakeServer(preset="qwen2.5-vl") as server:
        report = tmp_path / "r.json"
        result = project.runpytest(
            f"--dataset={MINI}",
            "--detector",
            f"openai:base_url={server.url}",
            "--grounding-json",
            str(report),
            *workers,
        )
    out = result.stdout.str()
    assert "qwen2.5-vl" in out and "picked by the model id fake/qwen2.5-vl" in out, out[-3000:]
    assert_every_answer_read(read_json(report))


@needs_openai
def test_an_unknown_model_with_no_preset_stops_the_run_with_one_message(project):
    with FakeServer(model="acme/mystery-vl-9b") as server:
        result = project.runpytest(f"--dataset={MINI}", "--detector", f"openai:base_url={server.url}")
        assert server.requests == 0  # stopped before any sample was sent
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    said = [line for line in result.stderr.lines if "no preset matches the model id 'acme/mystery-vl-9b'" in line]
    assert len(said) == 1 and "closest:" in said[0], result.stderr.str()[-2000:]


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
@needs_openai
def test_errors_and_cut_answers_are_errors_and_wrong_formats(project, tmp_path):
    report = tmp_path / "r.json"
    with FakeServer(errors=1.0) as failing:
        project.runpytest(
            f"--dataset={MINI}",
            "--detector",
            f"openai:base_url={failing.url},retries=0",
            "--grounding-limit=3",
            "--grounding-json",
            str(report),
            "--grounding-max-errors=1",
        )
    assert {r["outcome"] for r in read_json(report)["samples"]} == {"error"}
    with FakeServer(cut=1.0) as cutting:
        project.runpytest(
            f"--dataset={MINI}",
            "--detector",
            f"openai:base_url={cutting.url}",
            "--grounding-limit=3",
            "--grounding-json",
            str(report),
        )
    assert {r["outcome"] for r in read_json(report)["samples"]} == {"wrong_format"}


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="errors=2"):
        FakeServer(errors=2.0)
    with pytest.raises(LookupError, match=r"(?i)did you mean"):
        FakeServer(preset="qwen2.5-v")


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@needs_openai
@SERIAL
def test_the_command_serves_a_run_end_to_end(project, tmp_path, workers):
    command = [sys.executable, "-m", "pytest_grounding", "fake-server", "--preset", "uitars-1.5-point", "--delay", "0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = process.stdout.readline()
        url = re.search(r"(http://127\.0\.0\.1:\d+/v1)", first)
        assert url, first + process.stderr.read()
        report = tmp_path / "r.json"
        result = project.runpytest(
            f"--dataset={MINI}",
            "--detector",
            f"openai:base_url={url.group(1)}",
            "--grounding-json",
            str(report),
            *workers,
        )
        assert_every_answer_read(read_json(report)), result.stdout.str()[-2000:]
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
@needs_openai
@pytest.mark.parametrize(
    "frame,named",
    [("rel1000", "rel1000"), ("swapped", "swapped"), ("resized-by-server:max_pixels=200704", "resized-by-server")],
)
def test_fake_server_frame_plays_a_frame_error_the_check_names(project, tmp_path, frame, named):
    """`fake-server --frame NAME` (issue 46's worked example): the frame check finds the frame it
    answers in and stops the run (with a budget it is waited for: before any dataset sample; without,
    it stops the run when its verdict comes, exit 4 either way)."""
    pytest.importorskip("ui_tars")  # the default preset's parser
    with FakeServer(frame=frame) as server:
        budget = "--grounding-budget=requests=100"
        result = project.runpytest(f"--dataset={MINI}", "--detector", f"openai:base_url={server.url}", budget)
        assert server.requests == 12  # the calibration screens only
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()[-2000:]
    assert f"answers in frame '{named}" in result.stdout.str() + result.stderr.str()
    with FakeServer(frame=frame) as server:
        result = project.runpytest(f"--dataset={MINI}", "--detector", f"openai:base_url={server.url}")
        assert server.requests >= 12  # the calibration screens and the samples sent beside them
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()[-2000:]
    assert f"answers in frame '{named}" in result.stdout.str() + result.stderr.str()


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@needs_openai
def test_fake_server_in_the_presets_frame_passes_the_check(project, tmp_path):
    pytest.importorskip("ui_tars")
    with FakeServer(frame="as-preset") as server:
        result = project.runpytest(f"--dataset={MINI}", "--detector", f"openai:base_url={server.url}")
    assert "answers in the preset's frame (12 requests)" in result.stdout.str(), result.stdout.str()[-2000:]
    with pytest.raises(ValueError, match="never sees the original"):
        FakeServer(frame="original-pixels")
    with pytest.raises(ValueError, match="unknown frame"):
        FakeServer(frame="sideways")


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@needs_openai
def test_a_warned_frame_error_prints_the_rescore_that_fixes_it_and_the_diagnosis_agrees(project, tmp_path):
    """Issue 61: with --grounding-frame-check=warn the run goes on, and the rescore is printed where a
    person looks: the note, the diagnosis, the whole command after the outputs; the stand-in sees
    fixtures/mini's coloured squares, so the diagnosis after the run names the frame too."""
    pytest.importorskip("ui_tars")
    report = tmp_path / "r.json"
    with FakeServer(frame="rel1000") as server:
        result = project.runpytest(
            f"--dataset={MINI}",
            "--grounding-limit=6",
            "--detector",
            f"openai:base_url={server.url}",
            "--grounding-frame-check=warn",
            "--grounding-json",
            str(report),
            "--grounding-predictions",
            str(tmp_path / "p.jsonl"),
        )
    out = result.stdout.str()
    assert "(--grounding-frame-check=warn: the run goes on; its answers read in that frame afterwards: " in out
    assert "`python -m pytest_grounding rescore PREDICTIONS --frame rel1000 --json OUT.json`" in out
    assert "frame diagnosis  answers fit frame rel1000" in out
    predictions, rescored = tmp_path / "p.jsonl", tmp_path / "p-rel1000.json"
    command = f"python -m pytest_grounding rescore {predictions} --frame rel1000 --json {rescored}"
    assert f"answers in frame rel1000 (the diagnosis after the run): rescore its answers with `{command}`" in out
    document = read_json(report)
    block = next(iter(document["summary"].values()))
    assert block["diagnosis"]["frame"]["suggestion"] == ["--frame", "rel1000"]
    from pytest_grounding.cli.main import main

    assert (
        main(["rescore", str(tmp_path / "p.jsonl"), "--frame", "rel1000", "--json", str(tmp_path / "p-rel1000.json")])
        == 0
    )
    assert next(iter(read_json(tmp_path / "p-rel1000.json")["summary"].values()))["hits"] == 5  # m06 names purple


def test_the_frame_check_s_suggestion_stands_in_where_the_diagnosis_names_none():
    from pytest_grounding.analysis.frame_hint import rescore_lines, suggestion_of

    block = {"detector": "openai:base_url=x", "diagnosis": {"frame": {"name": "unknown", "suggestion": []}}}
    checks = {"openai:base_url=x": {"frame": "rel1000", "suggestion": ["--frame", "rel1000"]}}
    assert suggestion_of(block, checks) == "--frame rel1000" and suggestion_of(block, {}) == "-"
    lines = rescore_lines({"k": block}, checks, [("predictions", "runs/p.jsonl")])
    assert lines == [
        "grounding frame: detector openai@x answers in frame rel1000 (the frame check before the run): "
        "rescore its answers with `python -m pytest_grounding rescore runs/p.jsonl --frame rel1000 --json "
        "runs/p-rel1000.json`"
    ]
