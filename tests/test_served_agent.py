"""`agent=crop` on the `openai` detector, end to end: a scripted loopback model (scripted_agent.py)
asks for crops (nested, off the edge, two at once, back on the screen, refused, over budget, looping,
malformed, outside, of zero size) before it clicks, on screens of four sizes, through the plugin
serially and with `-n 2`; every final click is the screen pixel the script meant, every budget ends
its episode with its own end, every trace is whole in the records."""

import json

import pytest
from scripted_agent import ScriptedAgent, pattern_screen, plan

from helpers import XDIST, read_json

pytest.importorskip("httpx")

SIZES = ((320, 240), (1280, 720), (1920, 1080), (1080, 1920))
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
SPEC = "openai:base_url={url},model=scripted,probe=false,preprocess=none,transform=abs,extractors=paren,agent=crop"


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


@XDIST
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
