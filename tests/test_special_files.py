"""Special files where a file is expected (issue 52): a link to /dev/zero or a FIFO given as a report, a
predictions file, an option's file or a dataset's annotation file is one clear message, never a read until
memory runs out, a hang or a traceback. Every run here has a timeout, so that a regression fails instead of
hanging. docs/security.md ("Files that are not regular files") says what this class guarantees."""

import os
import shutil
import subprocess
import sys

import pytest

from helpers import FIXTURES, REPO, SERIAL

KINDS = ["dev-zero", "fifo"]


def _special(path, kind):
    if kind == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        os.mkfifo(path)
    return path


def _cli(*args, cwd):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "pytest_grounding", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


COMMANDS = [
    ["summary", "R"],
    ["compare", "R", "R"],
    ["report", "R", "--html", "out.html"],
    ["merge", "R", "--json", "merged.json"],
    ["export", "R", "--hf-eval-results", "out"],
    ["rescore", "R", "--json", "rescored.json"],
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("command", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_a_cli_command_given_a_special_file_says_so_in_one_line(tmp_path, kind, command):
    report = _special(tmp_path / "run.json", kind)
    result = _cli(*[str(report) if arg == "R" else arg for arg in command], cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "MemoryError" not in result.stderr
    assert f"{report}: " in result.stderr and "not a regular file" in result.stderr


OPTIONS = [
    ("--grounding-baseline", "{}"),
    ("--grounding-errata", "{}"),
    ("--grounding-presets", "{}"),
    ("--grounding-published", "{}"),
    ("--grounding-perturb", "paraphrase:file={}"),
    ("--detector", "replay:path={}"),
]


@pytest.fixture
def suite(pytester):
    from helpers import make_project

    return make_project(pytester)


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("option", OPTIONS, ids=[f"{flag} {v.split(':')[0]}".strip("{} ") for flag, v in OPTIONS])
def test_an_option_naming_a_special_file_is_a_usage_error(suite, tmp_path, kind, option):
    flag, value = option
    path = _special(tmp_path / "given.file", kind)
    detector = [] if flag == "--detector" else ["--detector", "center"]
    args = ["--dataset", str(FIXTURES / "mini"), *detector, f"{flag}={value.format(path)}"]
    result = suite.runpytest_subprocess(*args, timeout=90)
    err = result.stderr.str()
    assert result.ret == 4, err
    assert "INTERNALERROR" not in result.stdout.str() + err and "Traceback" not in err
    assert flag in err and "not a regular file" in err
    assert f"{path}: " in err or "/dev/zero: " in err  # a path option is resolved: the link's target is named


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@SERIAL
@pytest.mark.parametrize("kind", KINDS)
def test_resume_from_a_special_file_is_a_usage_error(suite, tmp_path, kind, workers):
    path = _special(tmp_path / "preds.jsonl", kind)
    args = ["--dataset", str(FIXTURES / "mini"), "--detector", "center", "--grounding-resume"]
    args.append(f"--grounding-predictions={path}")
    result = suite.runpytest_subprocess(*args, *workers, timeout=90)
    err = result.stderr.str()
    assert result.ret == 4, err
    assert "INTERNALERROR" not in result.stdout.str() + err and "not a regular file" in err


def _dataset_with(tmp_path, kind):
    dataset = tmp_path / "ssp"
    shutil.copytree(FIXTURES / "screenspot-pro", dataset)
    (annotation,) = (dataset / "annotations").glob("*.json")
    annotation.unlink()
    _special(annotation, kind)
    return dataset, annotation


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@SERIAL
@pytest.mark.parametrize("kind", KINDS)
def test_a_dataset_whose_annotation_file_is_special_is_one_dataset_error(suite, tmp_path, kind, workers):
    dataset, annotation = _dataset_with(tmp_path, kind)
    result = suite.runpytest_subprocess("--dataset", str(dataset), "--detector", "center", *workers, timeout=90)
    out = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in out and "MemoryError" not in out
    assert result.ret in (1, 2, 4, 5), out
    assert annotation.name in out and "not a regular file" in out


@pytest.mark.parametrize("kind", KINDS)
def test_validate_names_a_special_annotation_file(tmp_path, kind):
    dataset, _annotation = _dataset_with(tmp_path, kind)
    result = _cli("validate", str(dataset), cwd=tmp_path)
    assert "Traceback" not in result.stderr and "MemoryError" not in result.stderr
    assert result.returncode != 0 and "not a regular file" in result.stdout + result.stderr


# --- the answer cache never writes through a link ----------------------------------------------------------------


def test_the_answer_cache_never_writes_through_a_linked_entry_folder(tmp_path):
    from pytest_grounding.store.answers import FileAnswerStore

    store = FileAnswerStore(tmp_path / "cache")
    key = "e6" + "2" * 62
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / f"{key}.json"
    victim.write_text("precious")
    (tmp_path / "cache" / "answers").mkdir(parents=True)
    store.path(key).parent.symlink_to(outside)
    assert store.get(key) is None
    assert store.put(key, {"completion": {"x": 1}}) is False  # counted as an answer not stored
    assert store.write_errors == 1
    assert victim.read_text() == "precious" and sorted(p.name for p in outside.iterdir()) == [victim.name]


def test_the_answer_cache_replaces_a_linked_entry_never_writes_through_it(tmp_path):
    from pytest_grounding.store.answers import FileAnswerStore

    store = FileAnswerStore(tmp_path / "cache")
    key = "e7" + "3" * 62
    victim = tmp_path / "victim.json"
    victim.write_text("precious")
    store.path(key).parent.mkdir(parents=True)
    store.path(key).symlink_to(victim)
    assert store.put(key, {"completion": {"x": 1}})
    assert victim.read_text() == "precious" and not store.path(key).is_symlink()
    assert store.get(key)["completion"] == {"x": 1}


def _within(seconds, function, *args):
    """function(*args)'s result or exception, or a failure once `seconds` pass (a daemon thread: a hang fails)."""
    import threading

    outcome = []

    def call():
        try:
            outcome.append(("value", function(*args)))
        except Exception as exc:
            outcome.append(("raised", exc))

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, f"{function.__name__} still reading after {seconds} s"
    return outcome[0]


@pytest.mark.parametrize("kind", KINDS)
def test_the_curation_and_board_readers_refuse_a_special_file_at_once(tmp_path, kind):
    from pytest_grounding.cli.curation import document, errata_review
    from pytest_grounding.render import live

    path = _special(tmp_path / "annotations.json", kind)
    how, what = _within(10, document.load, path)
    assert how == "raised" and "not a regular file" in str(what)
    assert _within(10, live.read_running, path) == ("value", None)
    how, what = _within(10, errata_review.load_state, path)
    assert how == "raised" and "not a regular file" in str(what)


@pytest.mark.parametrize("kind", KINDS)
def test_compare_only_ids_naming_a_special_file_says_so(project, tmp_path, kind):
    report = tmp_path / "run.json"
    project.runpytest("--dataset", str(FIXTURES / "mini"), "--detector", "center", "--grounding-json", str(report))
    ids = _special(tmp_path / "ids.txt", kind)
    result = _cli("compare", str(report), str(report), "--only-ids", str(ids), cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"--only-ids {ids}: " in result.stderr and "not a regular file" in result.stderr
