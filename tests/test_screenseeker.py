"""ScreenSeekeR: the recursion and its limits with scripted calls, the planner's parsers, the
strategy around a scripted grounder with the grounder as planner, and with a planner behind the
`openai` client, served by a small OpenAI-compatible server on 127.0.0.1 (also through the plugin,
serial and xdist)."""

import threading

import pytest
from PIL import Image

from helpers import FIXTURES, SERIAL, LoopbackServer, decode_data_url, json_body, needs_openai, read_json
from pytest_grounding.core.types import Box, Prediction, Query
from pytest_grounding.detectors.strategies.screenseeker import (
    ELSEWHERE,
    IS_TARGET,
    NOT_FOUND,
    Limits,
    ScreenSeekeR,
    Search,
    Verdict,
    parse_references,
    parse_verdict,
)
from pytest_grounding.detectors.strategies.wrappers import Answer

SCREEN = Box(0, 0, 4000, 3000)
LIMITS = Limits(depth=3, min_size=(1280, 768), max_calls=40)


def _answer(x, y, side=10):
    box = Box(x - side / 2, y - side / 2, x + side / 2, y + side / 2)
    return Answer(crop=SCREEN, prediction=Prediction(point=(x, y)), point=(x, y), box=box)


class Script:
    """Scripted calls: where each text grounds (None: no answer, or only inside some viewports),
    what the planner proposes and how it judges; every call logged."""

    def __init__(self, where, references=(), verdicts=None):
        self.where, self.references, self.verdicts = where, references, verdicts or {}
        self.log = []

    def ground(self, text, viewport):
        self.log.append(("ground", text, viewport.as_list()))
        point = self.where.get(text)
        if point is None or not viewport.contains(point):
            return None
        return _answer(*point)

    def propose(self, viewport, instruction):
        self.log.append(("propose", instruction, viewport.as_list()))
        return self.references

    def check(self, viewport, instruction, answer):
        self.log.append(("check", instruction, viewport.as_list()))
        return self.verdicts.get((instruction, answer.point), Verdict(IS_TARGET))

    def search(self, limits=LIMITS):
        return Search(self.ground, self.propose, self.check, limits)


def test_search_narrows_to_a_leaf_around_the_answer_and_checks_it():
    script = Script({"save": (3000, 2500)})
    search = script.search()
    found = search.run(SCREEN, "save")
    assert found.point == (3000, 2500)
    # depth 0: the screen; depth 1: the 1280x768 patch padded around the answer: small enough, a leaf
    assert [(d, v.as_list()) for d, v in search.visited] == [(0, [0, 0, 4000, 3000]), (1, [2360, 2116, 3640, 2884])]
    assert [kind for kind, *_ in script.log] == ["propose", "ground", "ground", "check"]
    assert search.calls == 4


def test_search_votes_patches_and_backtracks_when_the_check_says_not_here():
    # the instruction grounds at A; the planner's neighbour at B, far away; A's leaf is rejected
    where = {"save": (500, 500), "the toolbar's save icon": (3500, 2600)}
    verdicts = {("save", (500, 500)): Verdict(NOT_FOUND)}
    script = Script(where, references=["the toolbar's save icon"], verdicts=verdicts)
    found = script.search().run(SCREEN, "save")
    # the second patch's leaf grounds "save" nowhere inside it: no answer there either
    assert found is None
    leaves = [entry for entry in script.log if entry[0] == "check"]
    assert len(leaves) == 1


def test_search_takes_the_sharper_instruction_of_target_elsewhere():
    where = {"save": (500, 500), "the save icon left of print": (900, 700)}
    verdicts = {("save", (500, 500)): Verdict(ELSEWHERE, "the save icon left of print")}
    script = Script(where, verdicts=verdicts)
    found = script.search().run(SCREEN, "save")
    assert found.point == (900, 700)
    assert script.log[-1][:2] == ("ground", "the save icon left of print")


def test_search_with_equal_votes_tries_the_patches_in_score_order():
    where = {"save": (600, 600), "left panel": (620, 640), "status bar": (3500, 2900)}
    script = Script(where, references=["left panel", "status bar"])
    search = script.search()
    found = search.run(SCREEN, "save")
    assert found.point == (600, 600)
    # two overlapping patches around the first two votes merge by NMS; the far one is never needed
    assert len(search.visited) == 2 and search.visited[1][1].contains((600, 600))


def test_search_ends_when_the_planner_says_no_target_or_nothing_grounds():
    script = Script({"save": (10, 10)}, references=None)
    assert script.search().run(SCREEN, "save") is None
    nothing = Script({})
    assert nothing.search().run(SCREEN, "save") is None
    assert [kind for kind, *_ in nothing.log] == ["propose", "ground"]


def test_search_respects_the_depth_limit():
    script = Script({"save": (3000, 2500)})
    search = script.search(Limits(depth=0, min_size=(1280, 768)))
    assert search.run(SCREEN, "save").point == (3000, 2500)
    assert [d for d, _ in search.visited] == [0] and [k for k, *_ in script.log] == ["ground", "check"]


def test_search_respects_the_call_budget():
    script = Script({"save": (3000, 2500)})
    search = script.search(Limits(depth=3, min_size=(1280, 768), max_calls=3))
    assert search.run(SCREEN, "save") is None  # propose, ground, ground: the check would be the 4th
    assert search.calls == 3


def test_a_small_screen_is_a_leaf_at_once():
    script = Script({"save": (100, 100)})
    search = script.search()
    assert search.run(Box(0, 0, 1024, 768), "save").point == (100, 100)
    assert [k for k, *_ in script.log] == ["ground", "check"]


@pytest.mark.parametrize(
    ("text", "references"),
    [
        (
            "1. The <element>Save icon</element> in the <area>main toolbar</area> next to "
            "<neighbor>Print icon</neighbor>. 2. <area>File menu</area>, <element>Save icon</element>",
            ["Save icon", "main toolbar", "File menu", "Print icon"],
        ),
        ("No target", None),
        ("I am not sure.", []),
    ],
)
def test_parse_references(text, references):
    assert parse_references(text) == references


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ('```json\n{"result": "is_target", "new_instruction": null}\n```', Verdict(IS_TARGET)),
        (
            'Looks wrong. {"result": "target_elsewhere", "new_instruction": "the blue Save"}',
            Verdict(ELSEWHERE, "the blue Save"),
        ),
        ('{"result": "maybe"}', Verdict(NOT_FOUND)),
        ("no json at all", Verdict(NOT_FOUND)),
    ],
)
def test_parse_verdict(text, verdict):
    assert parse_verdict(text) == verdict


# -- the strategy around a scripted grounder ------------------------------------------------------------


class DarkSquare:
    """Answers the box of the dark pixels in the image it is given (coarse scan), or nothing."""

    name = "dark"

    def __init__(self):
        self.seen = []

    def predict(self, query):
        self.seen.append(query.image.size)
        gray = query.image.convert("L").resize((query.image.width // 4, query.image.height // 4), Image.NEAREST)
        pixels = gray.load()
        dark = [(x, y) for y in range(gray.height) for x in range(gray.width) if pixels[x, y] < 50]
        if not dark:
            return Prediction.no_answer(raw="nothing dark")
        xs, ys = [4 * x for x, _ in dark], [4 * y for _, y in dark]
        return Prediction(box=Box(min(xs), min(ys), max(xs) + 4, max(ys) + 4))


def _screen(size=(3840, 2160), square=(3000, 1800, 3040, 1840)):
    image = Image.new("RGB", size, "white")
    image.paste((0, 0, 0), square)
    return Query(image=image, instruction="the dark square")


def test_screenseeker_with_the_grounder_as_planner_searches_and_maps_back():
    grounder = DarkSquare()
    prediction = ScreenSeekeR(grounder).predict(_screen())
    assert Box(3000, 1800, 3040, 1840).contains(prediction.click)
    meta = prediction.meta
    assert meta["confirmed"] is True and meta["planner_calls"] == 0
    assert meta["attempts"] == len(grounder.seen) == 2  # the screen, then the leaf: the patch around the answer
    assert grounder.seen == [(3840, 2160), (1280, 768)]
    assert meta["final_crop"] == [2380, 1392, 3660, 2160]
    assert [v["depth"] for v in meta["visited"]] == [0, 1]


class ScreenOnly(DarkSquare):
    """Answers on the whole screen only: every leaf comes back empty."""

    def predict(self, query):
        if query.image.size != (3840, 2160):
            self.seen.append(query.image.size)
            return Prediction.no_answer(raw="nothing here")
        return super().predict(query)


def test_screenseeker_falls_back_to_the_first_answer_unconfirmed():
    prediction = ScreenSeekeR(ScreenOnly()).predict(_screen())
    assert prediction.meta["confirmed"] is False and prediction.meta["budget_spent"] is False
    assert Box(3000, 1800, 3040, 1840).contains(prediction.click)
    assert prediction.meta["final_crop"] == [0, 0, 3840, 2160]
    none = ScreenSeekeR(ScreenOnly(), fallback=False).predict(_screen())
    assert none.click is None and none.meta["attempts"] == 2


def test_screenseeker_options_are_checked():
    for options, words in (
        ({"planner": "gpt"}, "planner='gpt': one of grounder, openai"),
        ({"depth": -1}, "depth=-1"),
        ({"max_calls": 1}, "max_calls=1"),
        ({"base_url": "http://x/v1"}, "base_url= is for planner=openai"),
    ):
        with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
            ScreenSeekeR(DarkSquare(), **options)


# -- the planner behind the openai client ------------------------------------------------------------------


class FakePlanner:
    """An OpenAI-compatible chat server playing the planner: proposes references and judges the
    marked answer by `verdict`; logs what it received."""

    def __init__(self, references="<element>dark square</element> in <area>bottom right</area>", verdict="is_target"):
        self.references, self.verdict = references, verdict
        self.requests = []
        self.lock = threading.Lock()

    def reply(self, path, body):
        with self.lock:
            self.requests.append(body)
        text = body["messages"][-1]["content"][1]["text"]
        if text.startswith("You help find one UI element"):
            content = self.references
        else:
            content = f'```json\n{{"result": "{self.verdict}", "new_instruction": null}}\n```'
        return {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}], "model": body["model"]}


@pytest.fixture
def planner():
    model = FakePlanner()

    running = LoopbackServer(lambda handler: (200, model.reply(handler.path, json_body(handler))))
    model.url = running.url
    yield model
    running.close()


def _image_of(body):
    return decode_data_url(body["messages"][-1]["content"][0]["image_url"]["url"])


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@needs_openai
def test_the_openai_planner_proposes_and_checks(planner):
    grounder = DarkSquare()
    strategy = ScreenSeekeR(grounder, planner="openai", base_url=planner.url, model="planner-m")
    prediction = strategy.predict(_screen())
    assert Box(3000, 1800, 3040, 1840).contains(prediction.click)
    meta = prediction.meta
    assert meta["confirmed"] is True and meta["planner_calls"] == 2  # one proposal (the screen), one check
    assert meta["attempts"] == len(grounder.seen) + 2
    propose, check = planner.requests
    assert propose["model"] == "planner-m" and propose["temperature"] == 0.0
    assert "Instruction: the dark square" in propose["messages"][-1]["content"][1]["text"]
    assert _image_of(propose).size == (3840, 2160)
    shown = _image_of(check)
    assert shown.size == (1280, 768)  # the leaf, with the answer marked in red
    assert shown.getpixel((3000 - 2380 - 2, 1800 - 1392 + 10)) == (255, 0, 0)
    # the grounder was asked for the instruction and for each reference the planner named
    assert strategy.describe()["planner"] == {"kind": "openai", "model": "planner-m", "base_urls": [planner.url]}


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@needs_openai
def test_the_openai_planner_saying_not_found_leaves_the_answer_unconfirmed(planner):
    planner.verdict = "target_not_found"
    prediction = ScreenSeekeR(DarkSquare(), planner="openai", base_url=planner.url, model="m").predict(_screen())
    assert prediction.meta["confirmed"] is False
    assert Box(3000, 1800, 3040, 1840).contains(prediction.click)  # the fallback: the first answer


@needs_openai
def test_the_openai_planner_saying_no_target_ends_the_search(planner):
    planner.references = "No target"
    strategy = ScreenSeekeR(DarkSquare(), planner="openai", base_url=planner.url, model="m", fallback=False)
    prediction = strategy.predict(_screen())
    assert prediction.click is None and prediction.meta["planner_calls"] == 1


@pytest.mark.slow  # near a second on a quiet machine: the fast tier keeps quicker tests
@needs_openai
@SERIAL
def test_screenseeker_through_the_plugin_with_both_planners(project, planner, tmp_path, workers):
    report = tmp_path / "r.json"
    small = "min_width=64,min_height=48"
    specs = [
        f"colour+screenseeker:{small}",
        f"colour+screenseeker:{small},planner=openai,base_url={planner.url},model=m",
    ]
    args = [f"--dataset={FIXTURES / 'mini'}", "--grounding-json", str(report), *workers]
    for spec in specs:
        args += ["--detector", spec]
    result = project.runpytest(*args)
    assert result.ret == 1, result.stdout.str()[-3000:]
    document = read_json(report)
    by = {(r["detector"], r["id"]): r for r in document["samples"]}
    for spec in specs:
        assert by[(spec, "m01")]["outcome"] == "hit" and by[(spec, "m01")]["meta"]["confirmed"] is True
    assert by[(specs[0], "m01")]["meta"]["planner_calls"] == 0
    assert by[(specs[1], "m01")]["meta"]["planner_calls"] == 2
    assert document["summary"][specs[1]]["mean_attempts"] > document["summary"][specs[0]]["mean_attempts"]
    assert len(planner.requests) >= 2 * 5
    assert "comparison of methods:" in result.stdout.str()
