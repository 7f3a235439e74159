"""`agent=crop` on the `openai` detector, end to end: a scripted loopback model (scripted_agent.py)
asks for crops (nested, off the edge, two at once, back on the screen, refused, over budget, looping,
malformed, outside, of zero size) before it clicks, on screens of four sizes, through the plugin
serially and with `-n 2`; every final click is the screen pixel the script meant, every budget ends
its episode with its own end, every trace is whole in the records."""

import json

import numpy as np
import pytest
from scripted_agent import ScriptedAgent, pattern_screen, plan

from helpers import SERIAL, read_json

pytest.importorskip("httpx")

SIZES = ((320, 240), (640, 480), (1024, 576), (480, 800))
SCRIPTS = (
    "nested",
    "offedge",
    "two-per-turn",
    "back-to-screen",
    "refused",
    "over-budget",
    "too-many-at-once",
    "loop",
    "malformed",
    "outside",
    "zero-size",
)
# The end each script must come to under the default budget (4 turns, 3 crops, 2 per turn).
ENDS = {
    "nested": "click",
    "offedge": "click",
    "two-per-turn": "click",
    "back-to-screen": "click",
    "refused": "refusal",
    "over-budget": "budget_crops",
    "too-many-at-once": "budget_crops_per_turn",
    "loop": "loop",
    "malformed": "invalid_action",
    "outside": "invalid_action",
    "zero-size": "invalid_action",
}
SPEC = (
    "openai:preset=uitars-1.5-point,base_url={url},model=scripted,probe=false,preprocess=none,transform=abs,"
    "extractors=paren,agent=crop"
)


def target_of(size, index):
    """A target spread over the screen, some near an edge (the off-edge crop is clipped there)."""
    w, h = size
    return ((37 + 211 * index) % (w - 2) + 1, (23 + 157 * index) % (h - 2) + 1)


def write_dataset(root):
    """A ScreenSpot-Pro-shaped dataset: every script on each of the four screens; each target box
    is the intended pixel's 1-pixel neighbourhood, so only an exact mapping hits."""
    (root / "annotations").mkdir(parents=True)
    (root / "images" / "app").mkdir(parents=True)
    rows, intended = [], {}
    for s, size in enumerate(SIZES):
        pattern_screen(size).save(root / "images" / "app" / f"s{s}.png")
        for i, name in enumerate(SCRIPTS):
            x, y = target_of(size, i + 3 * s)
            sample = f"s{s}-{name}"
            intended[sample] = (x, y, name, size)
            rows.append(
                {
                    "img_filename": f"app/s{s}.png",
                    "bbox": [x - 1, y - 1, x + 1, y + 1],
                    "instruction": f"target {x} {y} screen {size[0]} {size[1]} script {name}",
                    "id": sample,
                    "application": "app",
                    "platform": "linux",
                    "img_size": list(size),
                    "ui_type": "icon",
                    "group": "Dev",
                }
            )
    (root / "annotations" / "app.json").write_text(json.dumps(rows))
    return intended


@pytest.fixture
def model():
    scripted = ScriptedAgent()
    yield scripted
    scripted.close()


def run(pytester, model, tmp_path, *args, spec=SPEC):
    intended = write_dataset(tmp_path / "ssp")
    pytester.makepyfile(
        test_suite="def test_grounding(grounding_sample, grounding_detector, grounding_check):\n"
        "    grounding_check(grounding_sample, grounding_detector)\n"
    )
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider -p no:randomly\n")
    report = tmp_path / "report.json"
    result = pytester.runpytest(
        f"--dataset={tmp_path / 'ssp'}",
        "--detector",
        spec.format(url=model.url),
        "--grounding-json",
        str(report),
        "--grounding-frame-check=off",  # the script counts its requests (the check's: tests/test_frame_check.py)
        *args,
    )
    return result, read_json(report), intended


def expected_turns(name, size, target):
    """Requests the script's episode takes (an independent count from the script itself)."""
    steps = plan(name, target, size)
    if ENDS[name] in ("click", "refusal"):
        return len(steps)
    if name == "over-budget":
        return 4
    return 1 if name in ("too-many-at-once", "malformed", "outside", "zero-size") else 2


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
@SERIAL
def test_scripted_crops_map_every_click_to_the_intended_pixel(pytester, model, tmp_path, workers):
    if workers:
        pytest.importorskip("xdist")
    result, document, intended = run(pytester, model, tmp_path, *workers)
    assert model.problems == [], model.problems[:5]
    records = {r["id"]: r for r in document["samples"]}
    assert set(records) == set(intended), result.stdout.str()[-2000:]
    for sample, (x, y, name, size) in intended.items():
        record = records[sample]
        assert record["agent_end"] == ENDS[name], (sample, record.get("meta"))
        assert len(record["turns"]) == expected_turns(name, size, (x, y)), (sample, record["turns"])
        assert [t["turn"] for t in record["turns"]] == list(range(1, len(record["turns"]) + 1))
        assert record["attempts"] == len(record["turns"])
        for turn in record["turns"]:
            assert set(turn) == {"turn", "shown", "answer", "action", "latency_ms", "tokens"}
            assert turn["tokens"] == {"prompt": 50, "completion": 5}
        assert record["turns"][0]["shown"] == [[0, 0, *size]]
        if ENDS[name] == "click":
            assert record["point"] == [x, y], sample
            assert record["outcome"] == "hit", sample
        elif ENDS[name] == "refusal":
            assert record["refusal"] is True and record["outcome"] == "miss"
        else:
            assert record["point"] is None and record["outcome"] == "wrong_format", sample
            assert record["meta"]["reason"], sample
        assert "turns" not in record["meta"]
    assert sum(len(r["turns"]) for r in records.values()) == model.chats
    figures = next(iter(document["summary"].values()))["agentic"]
    assert figures["samples"] == len(intended)
    assert figures["clicks"] == sum(ENDS[n] == "click" for _, _, n, _ in intended.values())
    assert figures["budget_exhausted"] == 2 * len(SIZES)  # over-budget, too-many-at-once
    assert figures["invalid_actions"] == 3 * len(SIZES) and figures["loops"] == len(SIZES)
    assert "agentic:" in result.stdout.str() and "episodes ended: click" in result.stdout.str()
    assert schema_problems(document) == []


def schema_problems(document):
    """The report against the shipped schema (skipped without jsonschema); a broken end must fail it."""
    try:
        import jsonschema
    except ImportError:
        return []
    from importlib.resources import files

    schema = json.loads((files("pytest_grounding") / "schema" / "report.schema.json").read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    broken = json.loads(json.dumps(document))
    broken["samples"][0]["agent_end"] = "gave up"
    assert list(validator.iter_errors(broken))
    return [f"{e.json_path}: {e.message}" for e in validator.iter_errors(document)]


def detector(model, **options):
    from pytest_grounding.detectors.served import OpenAIDetector

    spec = {"base_url": model.url, "model": "scripted", "preset": "uitars-1.5-point", "probe": False, "agent": "crop"}
    spec.update(options)
    return OpenAIDetector(**spec)


def query_for(size, target, script):
    from pytest_grounding.core.types import Query

    x, y = target
    return Query(pattern_screen(size), f"target {x} {y} screen {size[0]} {size[1]} script {script}")


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("transform", ["abs", "rel1000"])
def test_resized_crops_map_back_to_the_screen_pixel(size, transform):
    """Qwen2.5-VL's smart_resize on the screen and on every crop, answers in the pixels of the image
    sent or in 0-1000 of it: a crop of a crop maps back to the script's screen pixel."""
    scripted = ScriptedAgent(unresized=False, relative=1000 if transform == "rel1000" else None)
    try:
        found = detector(scripted, preset="qwen2.5-vl", extractors="paren", transform=transform, refusal="none")
        target = target_of(size, 5)
        prediction = found.predict(query_for(size, target, "nested"))
        assert scripted.problems == []
        assert prediction.meta["agent_end"] == "click"
        assert prediction.point == pytest.approx(target, abs=1e-6)
        regions = [t["shown"] for t in prediction.meta["turns"]]
        assert regions[1] == [list(plan("nested", target, size)[0][1][0][1])]
        found.close()
    finally:
        scripted.close()


@pytest.mark.parametrize(
    ("options", "script", "end", "turns"),
    [
        ({"agent_turns": 2}, "nested", "budget_turns", 2),
        ({"agent_crops": 1}, "nested", "budget_crops", 2),
        ({"agent_crops_per_turn": 1}, "two-per-turn", "budget_crops_per_turn", 1),
        ({"agent_tokens": 100}, "nested", "budget_tokens", 2),  # 55 tokens a turn: the second crop is over
        ({"agent_crops": 4, "agent_turns": 5}, "over-budget", "click", 5),
    ],
)
def test_every_budget_ends_its_episode_with_its_own_end(model, options, script, end, turns):
    found = detector(model, preprocess="none", transform="abs", extractors="paren", **options)
    size = SIZES[1]
    target = target_of(size, 2)
    prediction = found.predict(query_for(size, target, script))
    assert model.problems == []
    assert (prediction.meta["agent_end"], len(prediction.meta["turns"])) == (end, turns)
    assert model.chats == turns
    if end == "click":
        assert prediction.point == target
    else:
        assert prediction.point is None and prediction.meta["reason"]
    found.close()


def test_a_bad_agent_option_is_refused_before_any_request(model):
    with pytest.raises(ValueError, match="agent="):
        detector(model, agent="zoom")
    with pytest.raises(ValueError, match="crops_per_turn"):
        detector(model, agent_crops_per_turn=0)
    with pytest.raises(ValueError, match="not an integer"):
        detector(model, agent_turns="many")
    assert model.chats == 0


def test_the_describe_and_headline_name_the_agent_and_its_budget(model):
    found = detector(model, agent_crops=5)
    info = found.describe()
    assert info["agent"] == {"mode": "crop", "turns": 4, "crops_per_turn": 2, "crops": 5, "tokens": 32768, "reclick": 0}
    assert "agent=crop (4 turns, 5 crops, 2 per turn" in info["headline"]
    single = detector(model, agent=None)
    assert single.describe()["agent"] is None and single.agent is None


@pytest.mark.parametrize(("script", "turns"), [("reclick", 2), ("confirm", 2)])
def test_a_re_click_turn_shows_the_cursor_and_takes_the_corrected_click(model, script, turns):
    found = detector(model, preprocess="none", transform="abs", extractors="paren", agent_reclick=1)
    size = SIZES[0]
    target = target_of(size, 4)
    prediction = found.predict(query_for(size, target, script))
    assert model.problems == []
    assert prediction.meta["agent_end"] == "click" and len(prediction.meta["turns"]) == turns
    assert prediction.point == target
    assert prediction.meta["turns"][1]["shown"] == [[0, 0, *size]]
    found.close()


def test_without_re_clicks_the_first_click_ends_the_episode(model):
    found = detector(model, preprocess="none", transform="abs", extractors="paren")
    size = SIZES[0]
    target = target_of(size, 4)
    prediction = found.predict(query_for(size, target, "reclick"))
    assert len(prediction.meta["turns"]) == 1 and prediction.point != target
    found.close()


@pytest.mark.slow  # 1 s or more on a quiet machine: the fast tier keeps quicker tests
def test_samples_run_concurrently_requests_stay_within_the_concurrency_and_the_page_shows_turns(pytester, tmp_path):
    scripted = ScriptedAgent(pause=0.05)
    try:
        spec = SPEC + ",concurrency=3"
        page = tmp_path / "page.html"
        args = ("-k", "nested or offedge or loop", "--grounding-html", str(page))
        _, document, _ = run(pytester, scripted, tmp_path, *args, spec=spec)
        assert scripted.problems == []
        assert len(document["samples"]) == 3 * len(SIZES)
        assert 2 <= scripted.most_in_flight <= 3, scripted.most_in_flight  # requests, never more than 3
        html = page.read_text()  # each loop (a miss) with its turns and its crop drawn on the screen
        assert html.count("ended by <b>loop</b>") == len(SIZES) and html.count('font-weight="700">1</text>') == len(
            SIZES
        )
    finally:
        scripted.close()


def test_each_image_of_an_episode_is_encoded_once(model, monkeypatch):
    from pytest_grounding.detectors import served_agent

    encoded = []
    real = served_agent.data_url_bytes
    monkeypatch.setattr(served_agent, "data_url_bytes", lambda image: encoded.append(image.size) or real(image))
    found = detector(model, preprocess="none", transform="abs", extractors="paren")
    size = SIZES[2]
    target = target_of(size, 1)
    prediction = found.predict(query_for(size, target, "nested"))
    assert prediction.point == target and model.chats == 3
    # two crops, each encoded once though sent again on the turn after (the screen: the detector's cache)
    assert encoded == [tuple(np.subtract(r[2:], r[:2])) for r in (t["shown"][0] for t in prediction.meta["turns"][1:])]
    assert found.served_stats()["screens_encoded"] == 1
    found.close()


def test_budget_options_without_agent_are_refused(model):
    with pytest.raises(ValueError, match="need agent=crop"):
        detector(model, agent=None, agent_crops=2)


def test_the_vllm_detector_passes_agent_options_on_rather_than_to_the_preset():
    from pytest_grounding.detectors.vllm_server import OPENAI_OPTIONS

    assert {
        "agent",
        "agent_turns",
        "agent_crops_per_turn",
        "agent_crops",
        "agent_tokens",
        "agent_reclick",
    } <= OPENAI_OPTIONS
