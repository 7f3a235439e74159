"""Robustness sweeps end to end: a loopback model that answers from what it SEES (the centre of
the named colour in the image it receives), so inverted screens flip its answers both ways. The
variants' boxes are recounted from the variants' own files, the per-variant change and flips from
the records (an independent tally), serially and with `-n 2`, and shards merged equal one run."""

import json
import math
import threading

import numpy as np
import pytest
from PIL import Image

from helpers import SERIAL, LoopbackServer, decode_data_url, json_body, make_project, read_json, read_jsonl
from pytest_grounding.analysis import robustness
from pytest_grounding.core.cache import CACHE_ENV
from pytest_grounding.render.markdown import report_markdown

pytest.importorskip("ui_tars")  # the openai extra: the default preset's parser

COLOURS = {"red": (220, 30, 30), "cyan": (35, 225, 225), "green": (30, 170, 60), "blue": (40, 70, 220)}
SCREENS = {  # name -> {colour: square [x1, y1, x2, y2]}
    "s1.png": {"red": (10, 10, 40, 40), "cyan": (110, 70, 140, 100), "green": (60, 80, 85, 105)},
    "s2.png": {"blue": (20, 60, 50, 90), "green": (100, 20, 130, 50)},
    "s3.png": {"red": (70, 40, 100, 70)},
}
ROWS = [  # id, screen, the colour asked for, the colour of the target's square
    ("a1", "s1.png", "red", "red"),
    ("a2", "s1.png", "red", "cyan"),  # a wrong label: a miss that the inverted screen turns into a hit
    ("a3", "s1.png", "green", "green"),
    ("a4", "s2.png", "blue", "blue"),
    ("a5", "s2.png", "green", "green"),
    ("a6", "s3.png", "red", "red"),
]
AXES = "zoom:scale=0.7,invert,occlude:size=0.25,downscale:long_edge=80"
SPEC = "openai:preset=uitars-1.5-point,base_url={url},model=tiny-uitars"


def answer(body):
    """The centre of the asked colour's pixels in the image received; (1,1) when it has none."""
    content = body["messages"][-1]["content"]
    text, url = content[1]["text"].lower(), content[0]["image_url"]["url"]
    pixels = np.asarray(decode_data_url(url)).astype(int)
    word = next(c for c in COLOURS if c in text)
    ys, xs = np.nonzero(np.all(np.abs(pixels - COLOURS[word]) < 40, axis=-1))
    point = f"({round(float(xs.mean()))},{round(float(ys.mean()))})" if xs.size else "(1,1)"
    return {
        "object": "chat.completion",
        "model": body["model"],
        "choices": [{"index": 0, "message": {"role": "assistant", "content": point}, "finish_reason": "stop"}],
    }


@pytest.fixture
def server():
    lock = threading.Lock()

    def reply(handler):
        if handler.command != "POST":  # the model list: not needed
            return 404, {"error": "not here"}
        with lock:
            return 200, answer(json_body(handler))

    running = LoopbackServer(reply)
    yield running.url
    running.close()


@pytest.fixture
def dataset(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    folder = tmp_path / "squares" / "data" / "test"
    folder.mkdir(parents=True)
    for name, squares in SCREENS.items():
        pixels = np.full((120, 160, 3), 255, np.uint8)
        for colour, (x1, y1, x2, y2) in squares.items():
            pixels[y1:y2, x1:x2] = COLOURS[colour]
        Image.fromarray(pixels).save(folder / name)
    lines = []
    for uid, name, asked, target in ROWS:
        box = list(SCREENS[name][target])
        lines.append(
            {
                "file_name": name,
                "id": uid,
                "instruction": f"Click the {asked} square",
                "bbox": box,
                "answer_type": "point",
                "eval": {"type": "point_in_bbox", "bbox": box},
                "element_type": "icon",
                "app": "Squares",
                "app_category": "test",
                "platform": "linux",
                "image_size": [160, 120],
            }
        )
    (folder / "metadata.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return tmp_path / "squares"


def run(pytester, tmp_path, url, dataset, *args, tag="r"):
    report, predictions = tmp_path / f"{tag}.json", tmp_path / f"{tag}.jsonl"
    result = pytester.runpytest(
        f"--dataset={dataset}", "--detector", SPEC.format(url=url), "--grounding-perturb", AXES,
        "--grounding-json", str(report), "--grounding-predictions", str(predictions),
        "--grounding-misses", "xfail", *args,
    )  # fmt: skip
    return result, read_json(report), read_jsonl(predictions)


def extent(path, colour):
    pixels = np.asarray(Image.open(path).convert("RGB")).astype(int)
    ys, xs = np.nonzero(np.abs(pixels - np.array(colour)).sum(axis=-1) < 60)
    return [int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1]


def recount(records):
    """label -> (pairs, before hits, after hits, hit->miss ids, miss->hit ids), tallied here."""
    originals = {r["uid"]: r for r in records if "variant" not in r}
    found = {}
    for record in records:
        if "variant" not in record or record["outcome"] == "error":
            continue
        before = originals[record["original_uid"]]["outcome"] == "hit"
        after = record["outcome"] == "hit"
        row = found.setdefault(record["variant"], [0, 0, 0, set(), set()])
        row[0] += 1
        row[1] += before
        row[2] += after
        if before and not after:
            row[3].add(originals[record["original_uid"]]["id"])
        if after and not before:
            row[4].add(originals[record["original_uid"]]["id"])
    return found


def exact_p(a, b):
    n = a + b
    return 1.0 if n == 0 else min(1.0, 2 * sum(math.comb(n, k) for k in range(min(a, b) + 1)) / 2**n)


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
@SERIAL
def test_a_sweep_maps_boxes_and_reports_changes_and_flips_as_recounted(pytester, server, dataset, tmp_path, workers):
    make_project(pytester)
    result, document, lines = run(pytester, tmp_path, server, dataset, *workers)
    assert result.ret == 0, result.stdout.str()[-3000:]
    records = document["samples"]
    labels = {"zoom70", "invert", "occlude25", "downscale80"}
    assert {r.get("variant") for r in records} == {None, *labels}
    assert len(records) == len(ROWS) * 5 == len(lines)
    targets = {uid: COLOURS[target] for uid, _, _, target in ROWS}
    for record in records:  # every variant's box where its pixels are, recounted from its own file
        colour = targets[record["id"].split("~")[0]]
        if record.get("variant") == "invert":
            colour = tuple(255 - c for c in colour)
        recounted = extent(record["image"], colour)
        assert all(abs(a - b) <= 1 for a, b in zip(record["target"], recounted, strict=True)), record
    block = document["summary"][SPEC.format(url=server)]
    assert block["samples"] == len(ROWS)  # the detector's own figures: the originals only
    tally = recount(records)
    ids = {r["uid"]: r["id"] for r in records}
    rows = {row["label"]: row for row in block["robustness"]["variants"]}
    assert set(rows) == labels
    for label, (pairs, before, after, lost, gained) in tally.items():
        row = rows[label]
        assert row["pairs"] == pairs
        assert row["original_accuracy"] == pytest.approx(before / pairs)
        assert row["accuracy"] == pytest.approx(after / pairs)
        assert row["delta"] == pytest.approx((after - before) / pairs, abs=1e-6)
        assert {ids[f["uid"]] for f in row["hit_to_miss"]} == lost
        assert {ids[f["uid"]] for f in row["miss_to_hit"]} == gained
        assert row["mcnemar_p"] == pytest.approx(exact_p(len(gained), len(lost)))
        low, high = row["delta_ci95"]
        assert low <= row["delta"] <= high
    assert {"a1", "a6"} <= tally["invert"][3] and tally["invert"][4] == {"a2"}  # the model saw the inversion
    assert tally["zoom70"][3] == set() == tally["zoom70"][4]  # the squares are still there, smaller
    result.stdout.fnmatch_lines(["*robustness (--grounding-perturb)*", "*invert*", "*invert: hit -> miss *a1*"])
    assert {"a1~zoom70", "a2~invert"} <= {line["id"] for line in lines}
    assert all(line["uid"] == f"{line['original_uid']}~{line['variant']}" for line in lines if "variant" in line)
    problems = schema_problems(document)
    assert not problems, problems
    markdown = report_markdown(document)
    assert "### Robustness" in markdown and "| invert | 6 |" in markdown
    if not workers:  # one process: each variant screen encoded once for the samples that share it
        served = document["run"]["detectors"][SPEC.format(url=server)]["served"]
        screens = {r["image"] for r in records}
        assert served["screens_encoded"] == len(screens) and served["screens_reused"] == len(records) - len(screens)


def schema_problems(document):
    jsonschema = pytest.importorskip("jsonschema")
    from importlib.resources import files

    schema = json.loads((files("pytest_grounding") / "schema" / "report.schema.json").read_text(encoding="utf-8"))
    return [f"{e.json_path}: {e.message}" for e in jsonschema.Draft202012Validator(schema).iter_errors(document)]


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
def test_k_selects_one_variant_and_the_drop_gate_fails_the_run(pytester, server, dataset, tmp_path):
    make_project(pytester)
    result, document, _ = run(
        pytester, tmp_path, server, dataset, "-k", "invert or not (zoom70 or occlude25 or downscale80)",
        "--grounding-max-drop", "invert:5%", "--grounding-max-drop", "zoom70:0",
        "--grounding-html", str(tmp_path / "r.html"),
    )  # fmt: skip
    assert {r.get("variant") for r in document["samples"]} == {None, "invert"}
    assert result.ret == 1
    gates = {g["gate"]: g for g in document["robustness_gates"]}
    assert gates["invert"]["variant"] == "invert" and not gates["invert"]["passed"]
    assert gates["invert"]["drop"] == pytest.approx(
        -100 * document["summary"][SPEC.format(url=server)]["robustness"]["variants"][0]["delta"]
    )
    assert gates["zoom70"]["variant"] is None and not gates["zoom70"]["passed"]  # it names no variant the run made
    page = (tmp_path / "r.html").read_text()
    assert "<h2>Robustness</h2>" in page and "Flips (" in page and page.count('class="entry"') >= 2
    result.stdout.fnmatch_lines(
        ["*gate FAILED: detector * invert: drop * points over 6 pairs > 5 allowed*", "*--grounding-max-drop zoom70*"]
    )


@pytest.mark.slow
def test_shards_of_a_sweep_merge_to_the_one_run(pytester, server, dataset, tmp_path):
    from pytest_grounding.cli.main import main

    make_project(pytester)
    _, whole, _ = run(pytester, tmp_path, server, dataset, tag="whole")
    paths = []
    for k in (1, 2):
        result, part, _ = run(pytester, tmp_path, server, dataset, "--grounding-shard", f"{k}/2", tag=f"shard{k}")
        assert part["samples"], result.stdout.str()[-2000:]
        uids = {r.get("original_uid", r["uid"]) for r in part["samples"]}
        assert all(r.get("original_uid", r["uid"]) in uids for r in part["samples"])  # variants follow their sample
        paths.append(tmp_path / f"shard{k}.json")
    out = tmp_path / "merged.json"
    assert main(["merge", *map(str, paths), "--json", str(out)]) == 0
    merged = read_json(out)
    spec = SPEC.format(url=server)
    assert merged["summary"][spec]["robustness"] == whole["summary"][spec]["robustness"]
    assert sorted(r["uid"] for r in merged["samples"]) == sorted(r["uid"] for r in whole["samples"])


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
def test_a_resumed_sweep_runs_nothing_again(pytester, server, dataset, tmp_path):
    make_project(pytester)
    _, first, _ = run(pytester, tmp_path, server, dataset)
    result, again, _ = run(pytester, tmp_path, server, dataset, "--grounding-resume")
    result.assert_outcomes(deselected=len(ROWS) * 5)
    spec = SPEC.format(url=server)
    assert again["summary"][spec]["robustness"] == first["summary"][spec]["robustness"]


def test_figures_pair_variants_with_their_originals_only():
    def record(uid, outcome, image="s", **more):
        return {"dataset": "d", "uid": uid, "image": image, "outcome": outcome, "detector": "x", **more}

    variant = {"variant": "v", "axis": "zoom", "perturbation": "zoom:scale=0.7"}
    records = [
        record("a", "hit"),
        record("b", "miss"),
        record("c", "hit", image="t"),
        record("a~v", "miss", original_uid="a", **variant),
        record("b~v", "hit", original_uid="b", **variant),
        record("c~v", "error", original_uid="c", **variant),
    ]
    row = robustness.figures(records)["variants"][0]
    assert (row["pairs"], row["errors"], row["no_variant"]) == (2, 1, 0)
    assert row["delta"] == 0 and row["mcnemar_p"] == 1.0
    assert [f["uid"] for f in row["hit_to_miss"]] == ["a"] and [f["uid"] for f in row["miss_to_hit"]] == ["b"]
    assert robustness.figures(records[:3]) is None
    gates = robustness.parse_max_drops(["v:0", "3%"], "test")
    verdicts = robustness.judge(gates, {"x": {"robustness": robustness.figures(records)}})
    assert [v.passed for v in verdicts] == [True, True]
    with pytest.raises(ValueError, match=r"\[VARIANT:\]AMOUNT"):
        robustness.parse_max_drops(["v:lots"], "test")


def test_the_element_at_click_task_sweeps_too(pytester, tmp_path):
    from helpers import FIXTURES

    make_project(pytester)
    report = tmp_path / "locate.json"
    pytester.runpytest(
        f"--dataset={FIXTURES / 'mini'}", "--detector", "center", "--grounding-task", "locate",
        "--grounding-perturb", "zoom:scale=0.5,invert", "--grounding-json", str(report), "-k", "m01 or m02",
    )  # fmt: skip
    document = read_json(report)
    records = {r["id"]: r for r in document["samples"]}
    assert set(records) == {"m01", "m02", "m01~zoom50", "m02~zoom50", "m01~invert", "m02~invert"}
    for name in ("m01", "m02"):  # a 50% zoom of a 160x120 screen: content in [40, 120) x [30, 90)
        x1, y1, x2, y2 = records[name]["target"]
        assert records[f"{name}~zoom50"]["target"] == [40 + x1 / 2, 30 + y1 / 2, 40 + x2 / 2, 30 + y2 / 2]
        assert records[f"{name}~zoom50"]["task"] == "locate"
    block = document["summary"]["center (locate)"]["robustness"]
    assert {row["label"] for row in block["variants"]} == {"zoom50", "invert"}


def test_epochs_pair_each_variant_with_the_same_epoch_of_its_original():
    def record(uid, epoch, outcome, **more):
        return {"dataset": "d", "uid": f"{uid}-e{epoch}", "epoch": epoch, "image": "s", "outcome": outcome, **more}

    variant = {"variant": "v", "axis": "invert", "perturbation": "invert", "original_uid": "a"}
    records = [
        record("a", 1, "hit"),
        record("a", 2, "miss"),
        record("a~v", 1, "hit", **variant),
        record("a~v", 2, "hit", **variant),
    ]
    row = robustness.figures(records)["variants"][0]
    assert row["pairs"] == 2 and [f["uid"] for f in row["miss_to_hit"]] == ["a-e2"] and not row["hit_to_miss"]


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
def test_a_variant_is_compared_with_the_same_variant_of_the_baseline(pytester, server, dataset, tmp_path):
    make_project(pytester)
    baseline = tmp_path / "baseline.json"
    run(pytester, tmp_path, server, dataset, f"--grounding-baseline={baseline}", tag="first")
    written = baseline.read_text()
    assert "~invert" in written and "~zoom70" in written
    result, document, _ = run(pytester, tmp_path, server, dataset, f"--grounding-baseline={baseline}", tag="again")
    assert result.ret == 0, result.stdout.str()[-2000:]
    verdicts = {r["id"]: r["baseline"] for r in document["samples"]}
    assert verdicts["a1"] == "still_hit" and verdicts["a1~invert"] == "known_miss"  # the variant's own past
    assert verdicts["a2"] == "known_miss" and verdicts["a2~invert"] == "still_hit"


def test_comparing_methods_pairs_originals_only():
    from pytest_grounding.analysis.compare import Method, paired

    def record(uid, outcome, **more):
        return {"dataset": "d", "uid": uid, "image": "s", "outcome": outcome, **more}

    variant = {"variant": "invert", "original_uid": "a"}
    one = Method("one", {}, (record("a", "hit"), record("a~invert", "hit", **variant)))
    two = Method("two", {}, (record("a", "hit"), record("a~invert", "miss", **variant)))
    found = paired(one, two)
    assert (found.n, found.broken) == (1, 0)  # the variant's change is the sweep's, not the comparison's


def test_a_max_drop_is_a_share_or_a_percent_and_the_same_gate_either_way():
    """0.05 and 5% are five points; `VARIANT:` selects; a bare 5 (points, before) is a usage message."""
    rows = {"x": {"robustness": {"variants": [{"label": "zoom70", "axis": "zoom", "delta": -0.05, "pairs": 20}]}}}
    for text in ("0.05", "5%", "zoom70:0.05", "zoom:5%"):
        (gate,) = robustness.parse_max_drops([text], "--grounding-max-drop")
        assert gate.points == 5 and gate.share == pytest.approx(0.05)
        assert [v.passed for v in robustness.judge([gate], rows)] == [True]  # a drop of exactly 5 points passes
    (tight,) = robustness.parse_max_drops(["zoom70:4.9%"])
    assert [v.passed for v in robustness.judge([tight], rows)] == [False]
    (other,) = robustness.parse_max_drops(["jpeg30:5%"])
    assert other.variant == "jpeg30" and [v.variant for v in robustness.judge([other], rows)] == [None]
    with pytest.raises(ValueError, match=r"bad max drop '5' \(from --grounding-max-drop\): .*0\.05 or 5%"):
        robustness.parse_max_drops(["5"], "--grounding-max-drop")
    with pytest.raises(ValueError, match=r"write VARIANT:AMOUNT, e\.g\. zoom70:5%"):
        robustness.parse_max_drops(["zoom70=5"], "--grounding-max-drop")
    kept = robustness.settings_entry(_Settings(robustness.parse_max_drops(["zoom:5%"])))
    assert kept["max_drops"] == [{"variant": "zoom", "points": 5.0}]  # the report keeps points, as before
    assert robustness.max_drops_of(kept) == robustness.parse_max_drops(["zoom:5%"], "report")


class _Settings:
    def __init__(self, drops):
        self.selection = type("S", (), {"perturb": ()})()
        self.verdict = type("V", (), {"max_drops": drops})()


@SERIAL
def test_an_axis_with_no_variant_at_all_is_said_in_the_notes(pytester, tmp_path, workers):
    from helpers import FIXTURES

    table = tmp_path / "words.jsonl"
    table.write_text(json.dumps({"id": "no-such-sample", "instruction": "elsewhere"}) + "\n")
    make_project(pytester)
    report = tmp_path / "r.json"
    result = pytester.runpytest(
        f"--dataset={FIXTURES / 'mini'}", "--detector", "center", "--grounding-misses", "xfail",
        "--grounding-perturb", f"invert,paraphrase:file={table}", "--grounding-json", str(report),
        "-k", "m01 or m02", *workers,
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-2000:]
    said = "--grounding-perturb paraphrase: no variant of any sample of this run"
    assert result.stdout.str().count(said) >= 1
    document = read_json(report)
    assert any(said in note for note in document["notes"])
    labels = {row["label"] for row in document["summary"]["center"]["robustness"]["variants"]}
    assert labels == {"invert"}  # the axis that made variants keeps its row
