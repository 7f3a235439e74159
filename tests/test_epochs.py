"""--grounding-epochs: the figures over repeated answers (analysis/epochs.py) against hand counts,
and whole runs against a served stand-in that answers at random (serially and under xdist), a
deterministic detector that runs once, and a resumed run that knows its epochs."""

import json
import random
import re
import threading
from collections import defaultdict

import pytest

from helpers import FIXTURES, NO_FRAME_CHECK, SERIAL, LoopbackServer, make_project, needs_openai, read_json, read_jsonl
from pytest_grounding.analysis import epochs
from pytest_grounding.core.types import Box, Sample, epoch_of, sample_uid, with_epochs

MINI = str(FIXTURES / "mini")
# these models count their requests: no frame check (its 12 requests; tests/test_frame_check.py tests it)
FEW = ["-k", "m01 or m02 or m03", "--grounding-frame-check=off"]


def rec(uid, epoch, outcome, point=None, image="s1.png", detector="d"):
    return {
        "detector": detector,
        "dataset": "ds",
        "uid": f"{uid}-e{epoch}",
        "image": image,
        "epoch": epoch,
        "outcome": outcome,
        "point": point,
        "refusal": False,
    }


# -- the pure figures ---------------------------------------------------------------------------


def test_figures_against_hand_counts():
    records = [
        # a: hit, miss, hit -> pass, majority: points (1,1) twice -> hit; changed
        rec("a", 1, "hit", [1, 1]),
        rec("a", 2, "miss", [9, 9]),
        rec("a", 3, "hit", [1, 1]),
        # b: miss x3, same point -> no pass, majority miss, stable
        rec("b", 1, "miss", [5, 5]),
        rec("b", 2, "miss", [5, 5]),
        rec("b", 3, "miss", [5, 5]),
        # c: all points differ: the tie goes to epoch 1 (a miss); pass (epoch 3 hit); changed
        rec("c", 1, "miss", [7, 7], image="s2.png"),
        rec("c", 2, "wrong_format", None, image="s2.png"),
        rec("c", 3, "hit", [2, 2], image="s2.png"),
        # d: an error epoch is left out: hit, (error), hit -> stable, pass, majority hit
        rec("d", 1, "hit", [3, 3], image="s2.png"),
        rec("d", 2, "error", None, image="s2.png"),
        rec("d", 3, "hit", [3, 3], image="s2.png"),
    ]
    found = epochs.figures(records)
    assert found["epochs"] == 3 and found["samples"] == 4 and found["scored_epochs"] == 11
    assert found["mean_accuracy"] == pytest.approx(5 / 11)
    assert found["pass_at_k"]["k"] == 3
    assert found["pass_at_k"]["hits"] == 3 and found["pass_at_k"]["accuracy"] == pytest.approx(3 / 4)
    assert found["majority"]["hits"] == 2 and found["majority"]["accuracy"] == pytest.approx(2 / 4)
    assert found["changed"] == 2 and found["stability"] == pytest.approx(2 / 4)
    for key in ("pass_at_k", "majority"):
        low, high = found[key]["ci95"]
        assert low <= found[key]["accuracy"] <= high
    low, high = found["mean_ci95"]
    assert low <= 5 / 11 <= high


def test_majority_tie_goes_to_the_first_answer_and_no_point_answers_count_alike():
    first = [rec("a", 1, "hit", [1, 1]), rec("a", 2, "miss", [2, 2])]
    assert epochs.majority(first)["epoch"] == 1
    second = [rec("a", 1, "miss", [2, 2]), rec("a", 2, "hit", [1, 1])]
    assert epochs.majority(second)["outcome"] == "miss"
    formats = [rec("a", 1, "hit", [1, 1]), rec("a", 2, "wrong_format"), rec("a", 3, "wrong_format")]
    assert epochs.majority(formats)["outcome"] == "wrong_format"


def test_no_epochs_no_block_and_detectors_apart():
    assert epochs.figures([{"detector": "d", "dataset": "ds", "uid": "a", "outcome": "hit"}]) is None
    records = [rec("a", 1, "hit", [1, 1], detector="x"), rec("a", 1, "miss", [1, 1], detector="y")]
    assert len(epochs.by_sample(records)) == 2


def test_with_epochs_adjacent_uids_and_back():
    sample = Sample("ds", "1", "one", FIXTURES / "x.png", "click", Box(0, 0, 1, 1))
    other = Sample("ds", "2", "two", FIXTURES / "x.png", "click", Box(0, 0, 1, 1))
    assert with_epochs([sample], 1) == [sample]
    repeated = with_epochs([sample, other], 2)
    assert [s.uid for s in repeated] == ["one-e1", "one-e2", "two-e1", "two-e2"]
    assert [epoch_of(s) for s in repeated] == [1, 2, 1, 2] and epoch_of(sample) is None
    assert sample_uid("one-e2", 2) == "one" and sample_uid("one-e2", None) == "one-e2"


# -- whole runs ---------------------------------------------------------------------------------

# the centre of each square in the 336x252 frame the server sees (mini: 160x120 screens, x2.1)
RIGHT = {"red": (42, 42), "blue": (284, 200), "green": (252, 52)}
WRONG = (168, 126)  # (80, 60) on the screen: inside none of the three squares


class RandomModel:
    """Answers each request with the right square or a wrong point, at random (unseeded)."""

    def __init__(self):
        self.chats = []
        self.lock = threading.Lock()

    def reply(self, handler):
        length = int(handler.headers.get("Content-Length") or 0)
        body = json.loads(handler.rfile.read(length)) if length else None
        if handler.path.endswith("/models"):
            return 200, {"object": "list", "data": [{"id": "m", "object": "model"}]}
        text = body["messages"][-1]["content"][1]["text"].lower()
        word = next(c for c in RIGHT if c in text)
        with self.lock:
            self.chats.append((word, body.get("seed")))
        x, y = RIGHT[word] if random.random() < 0.5 else WRONG
        return 200, {
            "id": "c",
            "object": "chat.completion",
            "model": body["model"],
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": f"({x},{y})"}, "finish_reason": "stop"}
            ],
        }


@pytest.fixture
def served():
    model = RandomModel()
    server = LoopbackServer(model.reply)
    yield model, server
    server.close()


def schema_problems(document):
    """The report against its JSON Schema (the epochs block and each record's epoch included)."""
    jsonschema = pytest.importorskip("jsonschema")
    from importlib.resources import files

    schema = json.loads(files("pytest_grounding").joinpath("schema/report.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document)]


def independent(records):
    """pass@k, the count of samples whose outcome changed and the mean, from the records alone."""
    per = defaultdict(list)
    for r in records:
        assert r["uid"].endswith(f"-e{r['epoch']}")
        per[r["id"]].append(r["outcome"])
    passed = sum("hit" in outcomes for outcomes in per.values())
    changed = sum(len(set(outcomes)) > 1 for outcomes in per.values())
    hits = sum(o == "hit" for outcomes in per.values() for o in outcomes)
    return len(per), passed, changed, hits / sum(len(o) for o in per.values())


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@needs_openai
@SERIAL
def test_epochs_against_a_server_answering_at_random(pytester, served, workers, tmp_path):
    pytest.importorskip("ui_tars")
    model, server = served
    make_project(pytester, ini=NO_FRAME_CHECK)  # the model counts its requests
    report, predictions = tmp_path / "r.json", tmp_path / "p.jsonl"
    spec = f"openai:base_url={server.url},model=m,preset=uitars-1.5-point"
    args = [f"--dataset={MINI}", "--detector", spec, "--grounding-epochs", "3", "--grounding-json", str(report)]
    args += ["--grounding-predictions", str(predictions), "--grounding-misses", "xfail", *FEW, *workers]
    result = pytester.runpytest(*args)
    assert result.ret == 0, result.stdout.str()
    document = read_json(report)
    records = document["samples"]
    assert len(records) == 9 and sorted(r["epoch"] for r in records) == [1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert sorted((r["id"], r["epoch"]) for r in records) == [(f"m0{i}", k) for i in (1, 2, 3) for k in (1, 2, 3)]
    assert all(r["raw"] in ("({},{})".format(*RIGHT[w]) for w in RIGHT) or r["raw"] == "(168,126)" for r in records)
    # distinct requests, each epoch its own seed
    seeds = defaultdict(list)
    for word, seed in model.chats:
        seeds[word].append(seed)
    assert {word: sorted(s) for word, s in seeds.items()} == {word: [1, 2, 3] for word in RIGHT}
    found = document["summary"][spec]["epochs"]
    samples, passed, changed, mean = independent(records)
    assert found["epochs"] == 3 and found["samples"] == samples == 3
    assert found["pass_at_k"]["k"] == 3 and found["pass_at_k"]["hits"] == passed
    assert found["pass_at_k"]["accuracy"] == pytest.approx(passed / 3)
    assert found["changed"] == changed and found["stability"] == pytest.approx(changed / 3)
    assert found["mean_accuracy"] == pytest.approx(mean)
    assert len(read_jsonl(predictions)) == 9
    assert schema_problems(document) == []
    result.stdout.fnmatch_lines(["*epochs 3 over 3 samples: mean accuracy*pass@3*majority*"])
    # resumed with 5 epochs in the file: the other 4 run again, the report holds the 9
    lines = predictions.read_text().splitlines(keepends=True)
    done = {(r["id"], r["epoch"]) for r in map(json.loads, lines[:5])}
    predictions.write_text("".join(lines[:5]))
    again = pytester.runpytest(*args, "--grounding-resume")
    assert again.ret == 0, again.stdout.str()
    outcomes = again.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("xfailed", 0) == 4, again.stdout.str()
    assert len(model.chats) == 9 + 4
    resumed = read_json(report)["samples"]
    assert sorted((r["id"], r["epoch"]) for r in resumed) == [(f"m0{i}", k) for i in (1, 2, 3) for k in (1, 2, 3)]
    assert len(done) == 5 and read_json(report)["summary"][spec]["epochs"]["scored_epochs"] == 9


def test_a_deterministic_detector_runs_one_epoch_with_one_note(pytester, tmp_path):
    make_project(pytester, ini=NO_FRAME_CHECK)  # the model counts its requests
    report = tmp_path / "r.json"
    result = pytester.runpytest(
        f"--dataset={MINI}", "--detector", "center", "--grounding-epochs", "3", "--grounding-json", str(report), *FEW
    )
    out = result.stdout.str()
    assert out.count("is deterministic") == 2, out  # once in the header, once in the summary
    records = read_json(report)["samples"]
    assert sorted(r["id"] for r in records) == ["m01", "m02", "m03"]
    assert not any(re.search(r"-e\d$", r["uid"]) for r in records)
    assert all("epoch" not in r for r in records) and "epochs" not in read_json(report)["summary"]["center"]
    assert "--grounding-epochs 3: detector center is deterministic" in " ".join(read_json(report)["notes"])


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@needs_openai
def test_shards_of_an_epochs_run_keep_a_sample_s_epochs_together_and_merge(pytester, served, tmp_path):
    pytest.importorskip("ui_tars")
    from pytest_grounding.cli.main import main

    _model, server = served
    make_project(pytester, ini=NO_FRAME_CHECK)  # the model counts its requests
    spec = f"openai:base_url={server.url},model=m,preset=uitars-1.5-point"
    paths = []
    for k in (1, 2):
        path = tmp_path / f"shard-{k}.json"
        result = pytester.runpytest(
            f"--dataset={MINI}", "--detector", spec, "--grounding-epochs", "3", "--grounding-shard", f"{k}/2",
            "--grounding-json", str(path), "--grounding-misses", "xfail", *FEW,
        )  # fmt: skip
        assert path.is_file(), result.stdout.str()
        paths.append(path)
    shares = [{r["id"] for r in read_json(path)["samples"]} for path in paths]
    assert not shares[0] & shares[1] and shares[0] | shares[1] == {"m01", "m02", "m03"}
    for path in paths:  # every epoch of a sample in the shard that has the sample
        records = read_json(path)["samples"]
        assert sorted(r["epoch"] for r in records) == sorted([1, 2, 3] * len({r["id"] for r in records}))
    out = tmp_path / "merged.json"
    assert main(["merge", *map(str, paths), "--json", str(out)]) in (0, 1)
    merged = read_json(out)
    records = merged["samples"]
    assert len(records) == 9
    found = merged["summary"][spec]["epochs"]
    samples, passed, changed, mean = independent(records)
    assert found["samples"] == samples == 3 and found["pass_at_k"]["hits"] == passed
    assert found["changed"] == changed and found["mean_accuracy"] == pytest.approx(mean)


@needs_openai
def test_a_deterministic_detector_beside_a_sampled_one_runs_its_first_epoch_only(pytester, served, tmp_path):
    pytest.importorskip("ui_tars")
    model, server = served
    make_project(pytester, ini=NO_FRAME_CHECK)  # the model counts its requests
    report = tmp_path / "r.json"
    spec = f"openai:base_url={server.url},model=m,preset=uitars-1.5-point"
    result = pytester.runpytest(
        f"--dataset={MINI}", "--detector", spec, "--detector", "center", "--grounding-epochs", "2",
        "--grounding-json", str(report), "--grounding-misses", "xfail", *FEW,
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()
    records = read_json(report)["samples"]
    assert sorted(r["epoch"] for r in records if r["detector"] == "center") == [1, 1, 1]
    assert sorted(r["epoch"] for r in records if r["detector"] == spec) == [1, 1, 1, 2, 2, 2]
    assert len(model.chats) == 6
    assert result.stdout.str().count("detector center is deterministic") == 2


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@needs_openai
@pytest.mark.parametrize(
    "workers", [pytest.param([], id="serial"), pytest.param(["-n", "2"], id="xdist", marks=pytest.mark.slow)]
)
def test_a_merge_counts_each_sampled_epoch_and_one_for_a_deterministic_detector(pytester, served, tmp_path, workers):
    """The shards of a run of a sampled detector beside a deterministic one, 2 epochs: whole, they merge whole;
    one epoch cut, or every later epoch cut (which once read as 'a deterministic detector'), is a gap."""
    pytest.importorskip("ui_tars")
    from pytest_grounding.cli.main import main

    _model, server = served
    make_project(pytester, ini=NO_FRAME_CHECK)
    spec = f"openai:base_url={server.url},model=m,preset=uitars-1.5-point"
    paths = []
    for k in (1, 2):
        path = tmp_path / f"shard-{k}.json"
        result = pytester.runpytest(
            f"--dataset={MINI}", "--detector", spec, "--detector", "center", "--grounding-epochs", "2",
            "--grounding-shard", f"{k}/2", "--grounding-json", str(path), "--grounding-misses", "xfail",
            "--grounding-frame-check=off", "--grounding-limit", "4",
            *workers,
        )  # fmt: skip
        assert path.is_file(), result.stdout.str()
        detectors = read_json(path)["run"]["detectors"]
        assert detectors["center"]["deterministic"] is True and detectors[spec]["deterministic"] is False
        paths.append(path)

    def merged(cut):
        inputs = []
        for path in paths:
            document = read_json(path)
            document["samples"] = [r for r in document["samples"] if not cut(r)]
            edited = tmp_path / f"edited-{path.name}"
            edited.write_text(json.dumps(document))
            inputs.append(str(edited))
        out = tmp_path / "merged.json"
        main(["merge", *inputs, "--json", str(out)])
        return read_json(out)

    assert merged(lambda r: False)["partial"] is False
    first = read_json(paths[0])["samples"][0]["id"]
    for cut in (
        lambda r: r["detector"] == spec and r["epoch"] > 1,  # every later epoch of the sampled detector
        lambda r: r["detector"] == spec and r["epoch"] == 2 and r["id"] == first,  # one epoch of one sample
        lambda r: r["detector"] == "center" and r["id"] == first,  # the deterministic detector's one epoch
    ):
        assert merged(cut)["partial"] is True
