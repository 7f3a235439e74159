"""The reproduction check and the cost through the plugin: the `openai` detector against a loopback
server that answers like UI-TARS-1.5 and reports token usage, on a small dataset registered as a
known benchmark by a --grounding-published file. Summary lines, the JSON report and the
predictions file, with and without xdist (the figures must be the same)."""

import json
import shutil
import threading

import numpy as np
import pytest

from helpers import (
    FIXTURES,
    SERIAL,
    XDIST,
    LoopbackServer,
    decode_data_url,
    json_body,
    make_project,
    read_json,
    read_jsonl,
)
from pytest_grounding.render.markdown import report_markdown

pytest.importorskip("ui_tars")  # the openai extra: the default preset's parser

MINI = FIXTURES / "mini" / "data" / "test"
COLOURS = {"red": (220, 30, 30), "green": (30, 170, 60), "blue": (40, 70, 220)}
USAGE = {"prompt_tokens": 200, "completion_tokens": 7, "total_tokens": 207}
CRITERION = "(reproduced means at or above the published figure, or within 2 points)"


class Model:
    """The centre of the named colour in the image received, as UI-TARS-1.5 answers (pixels of
    that image), with the usage object of an OpenAI chat completion. `wrong` answers (1,1) that many
    times (a miss each, whichever sample asks first)."""

    def __init__(self):
        self.wrong = 0
        self.lock = threading.Lock()

    def reply(self, body):
        content = body["messages"][-1]["content"]
        text, url = content[1]["text"], content[0]["image_url"]["url"]
        with self.lock:
            wrong, self.wrong = self.wrong > 0, max(0, self.wrong - 1)
        if wrong:
            answer = "(1,1)"
        else:
            image = decode_data_url(url)
            pixels = np.asarray(image).astype(int)
            word = next(c for c in COLOURS if c in text.lower())
            ys, xs = np.nonzero(np.all(np.abs(pixels - COLOURS[word]) < 40, axis=-1))
            answer = f"({round(float(xs.mean()))},{round(float(ys.mean()))})"
        return {
            "object": "chat.completion",
            "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
            "usage": USAGE,
        }


@pytest.fixture
def model():
    return Model()


@pytest.fixture
def server(model):
    running = LoopbackServer(lambda handler: (200, model.reply(json_body(handler))))
    yield running.url
    running.close()


@pytest.fixture
def tiny(tmp_path):
    """Five samples of the mini fixture (m01-m05: every image readable, every colour known)."""
    folder = tmp_path / "tiny" / "data" / "test"
    folder.mkdir(parents=True)
    for name in ("s1.png", "s2.png", "s3.png"):
        shutil.copy(MINI / name, folder / name)
    rows = [json.loads(line) for line in (MINI / "metadata.jsonl").read_text().splitlines()][:5]
    (folder / "metadata.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return tmp_path / "tiny"


def published(path, figure, name="tiny", samples=5, model_match="tiny-uitars"):
    """A project's figures: the dataset `name` with `samples` rows is the benchmark Tiny."""
    document = {
        "benchmarks": [
            {"id": "tiny-bench", "title": "Tiny", "formats": ["pointerbench"], "names": [name], "samples": samples}
        ],
        "results": [
            {
                "preset": "uitars-1.5-point",
                "model": "Tiny-UITARS",
                "match": [model_match],
                "benchmark": "tiny-bench",
                "figure": figure,
                "source": "a test's own figure",
            }
        ],
    }
    path.write_text(json.dumps(document))
    return path


@pytest.fixture
def suite(pytester):
    make_project(pytester)
    return pytester


def run(suite, tmp_path, url, dataset, *args, tag="r"):
    report, predictions = tmp_path / f"{tag}.json", tmp_path / f"{tag}.jsonl"
    result = suite.runpytest(
        f"--dataset={dataset}",
        "--detector",
        f"openai:preset=uitars-1.5-point,base_url={url},model=tiny-uitars",
        "--grounding-frame-check=off",  # the scripted model answers the samples in order: no calibration
        "--grounding-json",
        str(report),
        "--grounding-predictions",
        str(predictions),
        *args,
    )
    return result, read_json(report), read_jsonl(predictions)


def schema_problems(document):
    """What the published report schema finds wrong in a report (nothing, we hope)."""
    jsonschema = pytest.importorskip("jsonschema")
    from importlib.resources import files

    schema = json.loads((files("pytest_grounding") / "schema" / "report.schema.json").read_text(encoding="utf-8"))
    return [f"{e.json_path}: {e.message}" for e in jsonschema.Draft202012Validator(schema).iter_errors(document)]


def spec_of(url):
    return f"openai:preset=uitars-1.5-point,base_url={url},model=tiny-uitars"


@XDIST
def test_tokens_and_cost_in_the_summary_json_and_predictions(suite, server, tiny, workers, tmp_path):
    result, document, lines = run(
        suite, tmp_path, server, tiny, "--grounding-price", "prompt=0.5,completion=2", *workers
    )
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            f"detector *{spec_of(server)}  (*",  # the short name, then the spec
            "  tokens  prompt 1,000  completion 35  total 1,035  (per sample 200 + 7.0; 5 samples)",
            "  cost    $0.00057 for this run, $0.114 per 1,000 samples (prompt $0.5, completion $2 per million tokens)",
        ]
    )
    block = document["cost"]["detectors"][spec_of(server)]
    counts = (block["samples"], block["with_usage"], block["prompt_tokens"], block["completion_tokens"])
    assert counts == (5, 5, 1000, 35)
    assert block["cost_usd"] == pytest.approx((1000 * 0.5 + 35 * 2) / 1e6)
    assert block["cost_per_1000_samples_usd"] == pytest.approx((1000 * 0.5 + 35 * 2) / 1e6 / 5 * 1000)
    assert document["cost"]["price"] == {"prompt_per_million_usd": 0.5, "completion_per_million_usd": 2.0}
    assert [r["meta"]["usage"] for r in document["samples"]] == [USAGE] * 5
    assert [line["meta"]["usage"] for line in lines] == [USAGE] * 5
    assert all(r["latency_ms"] > 0 for r in document["samples"])  # our own timer, still


@pytest.mark.slow
def test_the_cost_and_the_verdict_are_the_same_with_and_without_xdist(suite, server, tiny, tmp_path):
    figures = published(tmp_path / "published.json", 98.5)
    args = ("--grounding-price", "prompt=0.15,completion=0.6", f"--grounding-published={figures}")
    _, serial, _ = run(suite, tmp_path, server, tiny, *args, tag="serial")
    _, spread, _ = run(suite, tmp_path, server, tiny, *args, "-n", "2", tag="xdist")
    assert serial["cost"] == spread["cost"] and serial["cost"]["detectors"]
    assert serial["reproduction"] == spread["reproduction"] and serial["reproduction"][0]["status"] == "reproduced"
    assert schema_problems(serial) == [] and schema_problems(spread) == []


def test_without_a_price_the_tokens_are_counted_and_the_cost_is_null(suite, server, tiny, tmp_path):
    result, document, _ = run(suite, tmp_path, server, tiny)
    assert "  cost    " not in result.stdout.str()
    result.stdout.fnmatch_lines(["  tokens  prompt 1,000  completion 35  total 1,035  *"])
    assert document["cost"]["price"] is None and document["cost"]["detectors"][spec_of(server)]["cost_usd"] is None


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
def test_a_detector_without_usage_cannot_be_priced(suite, tiny, tmp_path):
    report = tmp_path / "r.json"
    result = suite.runpytest(
        f"--dataset={tiny}",
        "--detector",
        "center",
        "--grounding-price",
        "prompt=1,completion=1",
        "--grounding-json",
        str(report),
    )
    result.stdout.fnmatch_lines(["  tokens  none reported (only served detectors report usage): *cannot be priced"])
    assert read_json(report)["cost"]["detectors"]["center"]["with_usage"] == 0
    assert read_json(report)["reproduction"] == []  # no preset: no comparison


@pytest.mark.slow
@pytest.mark.parametrize(
    "wrong, figure, status, delta",
    [(0, 98.5, "reproduced", "+1.5"), (1, 81.5, "reproduced", "-1.5"), (1, 82.5, "not reproduced", "-2.5")],
    ids=["above", "within-two-points", "below"],
)
def test_a_known_benchmark_is_reproduced_or_not(suite, server, model, tiny, tmp_path, wrong, figure, status, delta):
    model.wrong = wrong
    figures = published(tmp_path / "published.json", figure)
    result, document, _ = run(suite, tmp_path, server, tiny, f"--grounding-published={figures}")
    measured = 100.0 * (5 - wrong) / 5
    result.stdout.fnmatch_lines(
        [
            f"reproduction {spec_of(server)} on tiny (Tiny, preset uitars-1.5-point, on unknown engine): "
            f"published {figure:.1f} for "
            f"Tiny-UITARS (a test's own figure), this run {measured:.1f}, delta {delta}: {status} {CRITERION}"
            "; 95% CI *-*: the published figure inside it; the smallest difference this run can detect is * points"
        ]
    )
    (found,) = document["reproduction"]
    assert found["status"] == status and found["benchmark"] == "tiny-bench" and found["model"] == "tiny-uitars"
    assert found["measured"] == pytest.approx(measured) and found["delta"] == pytest.approx(float(delta))
    assert found["published"]["figure"] == figure and found["published"]["source"] == "a test's own figure"
    assert found["samples_run"] == found["samples_total"] == 5 and found["reason"] is None
    page = report_markdown(document)  # the CI job summary says the same
    row = f"| Tiny | uitars-1.5-point | {figure:g} (Tiny-UITARS; a test's own figure) | {measured:.1f} | {delta} |"
    assert row in page
    assert f"| {status} |" in page and "| 5/5 | 1,000 | 35 | - | - |" in page
    assert found["line"] in result.stdout.str()
    from pytest_grounding.render.html import render

    page = render(document)[0]  # the HTML page too
    assert '<h3 id="reproduction">Reproduction</h3>' in page and "tokens  prompt 1,000  completion 35" in page


@SERIAL
@pytest.mark.parametrize(
    "args, reason",
    [
        (("--grounding-limit", "3"), "--grounding-limit 3: 3 of 5 samples ran"),
        (("-k", "not m05"), "4 of 5 samples ran (-k or another deselection)"),
    ],
    ids=["limit", "deselected"],
)
def test_a_partial_run_says_the_comparison_does_not_apply(suite, server, tiny, tmp_path, workers, args, reason):
    figures = published(tmp_path / "published.json", 50.0)
    result, document, _ = run(suite, tmp_path, server, tiny, f"--grounding-published={figures}", *args, *workers)
    result.stdout.fnmatch_lines([f"reproduction * this run 100.0 on * of 5 samples: *does not apply ({reason})"])
    (found,) = document["reproduction"]
    assert found["status"] == "does not apply" and found["reason"] == reason and found["delta"] is None
    assert schema_problems(document) == []


@pytest.mark.slow
def test_errors_make_the_comparison_not_apply(suite, server, tmp_path):
    # the whole mini fixture: m06 names a colour the model does not know (the server fails), m07's
    # image is broken, m08's is missing
    figures = published(tmp_path / "published.json", 50.0, name="mini", samples=8)
    result, document, _ = run(
        suite, tmp_path, server, FIXTURES / "mini", f"--grounding-published={figures}", "--grounding-timeout", "30"
    )
    (found,) = document["reproduction"]
    assert found["status"] == "does not apply" and "samples ended in an error, not scored" in found["reason"]
    assert "the comparison does not apply" in result.stdout.str()


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
def test_a_model_the_figures_are_not_for_does_not_apply(suite, server, tiny, tmp_path):
    figures = published(tmp_path / "published.json", 50.0, model_match="ui-tars-1-5-7b")
    _, document, _ = run(suite, tmp_path, server, tiny, f"--grounding-published={figures}")
    (found,) = document["reproduction"]
    assert found["status"] == "does not apply" and found["published"] is None
    assert "model 'tiny-uitars' is none of the models with a published figure (Tiny-UITARS 50)" in found["reason"]
    assert schema_problems(document) == []


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
def test_an_overridden_preset_part_does_not_apply(suite, server, tiny, tmp_path):
    figures = published(tmp_path / "published.json", 50.0)
    result = suite.runpytest(
        f"--dataset={tiny}",
        "--detector",
        f"openai:preset=uitars-1.5-point,base_url={server},model=tiny-uitars,max_pixels=1000000",
        f"--grounding-published={figures}",
    )
    result.stdout.fnmatch_lines(
        ["reproduction * this run 100.0 on 5 of 5 samples: *(preset parts overridden (preprocess)*"]
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (("--grounding-price", "prompt=0.3"), "--grounding-price: completion missing"),
        (("--grounding-price", "prompt=0.3,output=1"), "--grounding-price: unknown key 'output'"),
        (("--grounding-published", "nowhere.json"), "--grounding-published: cannot read"),
    ],
)
def test_bad_values_are_usage_errors(suite, tiny, args, message):
    result = suite.runpytest(f"--dataset={tiny}", "--detector", "center", *args)
    assert result.ret == 4
    assert message in result.stderr.str()


def test_the_ini_twins(suite, server, tiny, tmp_path):
    figures = published(tmp_path / "published.json", 98.5)
    suite.makeini(
        f"[pytest]\naddopts = -p no:cacheprovider\ngrounding_price = prompt=0.5,completion=2\n"
        f"grounding_published = {figures}\n"
    )
    result, document, _ = run(suite, tmp_path, server, tiny)
    assert document["cost"]["price"] == {"prompt_per_million_usd": 0.5, "completion_per_million_usd": 2.0}
    assert document["reproduction"][0]["status"] == "reproduced"
    bad = suite.makeini("[pytest]\ngrounding_price = prompt=1\n")
    assert bad.exists()
    result = suite.runpytest(f"--dataset={tiny}", "--detector", "center")
    assert result.ret == 4 and "ini grounding_price: completion missing" in result.stderr.str()
