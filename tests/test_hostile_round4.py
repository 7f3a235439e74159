"""Hostile inputs, round 4 (issue 52): each class of input held with inputs other than the issue's,
serially and with `-n 2` where a run is involved. docs/security.md says what each class guarantees."""

import json

import pytest

from helpers import FIXTURES, SERIAL, XDIST, read_json
from pytest_grounding.cli.main import main

PRO, MINI = str(FIXTURES / "screenspot-pro"), str(FIXTURES / "mini")


def _run(project, tmp_path, *args, workers=(), name="run.json"):
    report = tmp_path / name
    project.runpytest("--dataset", PRO, "--grounding-json", str(report), *args, *workers)
    assert report.is_file()
    return report


# --- exports publish the benchmark's own samples, never a variant, an epoch or a local path ---------------------


@SERIAL
@pytest.mark.parametrize("sweep", ["downscale:long_edge=64,jpeg:quality=20", "invert,occlude"])
def test_an_export_of_a_sweep_publishes_the_original_samples_only(project, tmp_path, capsys, workers, sweep):
    plain = _run(project, tmp_path, "--detector", "colour", workers=workers, name="plain.json")
    swept = _run(project, tmp_path, "--detector", "colour", "--grounding-perturb", sweep, workers=workers)
    records = read_json(swept)["samples"]
    assert any(r.get("variant") for r in records)  # the sweep ran
    for report, out in ((plain, tmp_path / "plain"), (swept, tmp_path / "swept")):
        assert main(["export", str(report), "--screenspot-pro", str(out), "--hf-eval-results", str(out)]) == 0
    capsys.readouterr()
    (plain_file,) = (tmp_path / "plain").glob("*.json")
    (swept_file,) = (tmp_path / "swept").glob("*.json")
    assert json.loads(swept_file.read_text()) == json.loads(plain_file.read_text())
    for out in ("plain", "swept"):
        text = (tmp_path / out / ".eval_results" / "screenspot_pro.yaml").read_text()
        assert "value" in text
    assert (tmp_path / "plain" / ".eval_results" / "screenspot_pro.yaml").read_text().split("date")[0] == (
        tmp_path / "swept" / ".eval_results" / "screenspot_pro.yaml"
    ).read_text().split("date")[0]
    for path in (tmp_path / "swept").rglob("*"):
        if path.is_file():
            assert str(tmp_path) not in path.read_text() and "/root" not in path.read_text()


def test_an_export_of_epochs_publishes_one_row_per_sample(project, tmp_path, capsys):
    report = _run(project, tmp_path, "--detector", "colour", "--grounding-epochs", "3")
    assert main(["export", str(report), "--screenspot-pro", str(tmp_path / "o")]) == 0
    capsys.readouterr()
    (path,) = (tmp_path / "o").glob("*.json")
    details = json.loads(path.read_text())["details"]
    assert len(details) == len({r["id"] for r in read_json(report)["samples"]}) // 1 == 6


def test_an_image_outside_the_dataset_is_never_published_as_a_path():
    from pytest_grounding.analysis.publish import published_path

    root = "/data/ssp"
    assert published_path("/data/ssp/images/a_b/x.png", root) == "images/a_b/x.png"
    assert published_path("/home/u/.cache/pytest-grounding/variants/ab/cd.png", root) == "cd.png"
    assert published_path("C:\\Users\\u\\cache\\v.png", root) == "v.png"
    assert published_path("/data/ssp/../secret/images/../x.png", root) == "x.png"
    assert published_path("/mnt/other/images/a_b/x.png", root) == "images/a_b/x.png"


# --- a publish of part of a benchmark is refused ----------------------------------------------------------------


SELECTIONS = [["-k", "not pro_m03"], ["-k", "pro_m01 or pro_odd"], ["--grounding-shard", "1/2"]]


@SERIAL
@pytest.mark.parametrize("selection", SELECTIONS)
def test_a_selection_is_never_published_as_the_benchmark(project, tmp_path, capsys, workers, selection):
    report = _run(project, tmp_path, "--detector", "colour", *selection, workers=workers)
    scored = {r["uid"] for r in read_json(report)["samples"]}
    assert 0 < len(scored) < 6
    out = tmp_path / "o"
    assert main(["export", str(report), "--screenspot-pro", str(out), "--hf-eval-results", str(out)]) == 1
    said = capsys.readouterr().out
    assert "not the benchmark's figure" in said
    assert not out.exists() or not any(p.is_file() for p in out.rglob("*"))
    assert main(["export", str(report), "--screenspot-pro", str(out), "--allow-partial"]) == 0


# --- a merge of shards that lack part of their share is partial and names what is missing -----------------------


def _shards(project, tmp_path, *args, workers=(), cut=None):
    paths = []
    for k in (1, 2):
        more = ["-k", cut] if cut and k == 2 else []
        paths.append(
            _run(project, tmp_path, "--detector", "colour", "--grounding-shard", f"{k}/2", *args, *more,
                 workers=workers, name=f"shard{k}.json")
        )  # fmt: skip
    return paths


def _merged(tmp_path, paths, capsys):
    out = tmp_path / "merged.json"
    main(["merge", *map(str, paths), "--json", str(out)])
    capsys.readouterr()
    return read_json(out)


def _drop(path, which):
    document = read_json(path)
    records = document["samples"]
    dropped = next(r for r in records if which(r))
    document["samples"] = [r for r in records if r is not dropped]
    path.write_text(json.dumps(document))
    return dropped


@SERIAL
def test_a_merge_of_shards_lacking_an_epoch_or_a_record_is_partial_and_names_them(project, tmp_path, capsys, workers):
    paths = _shards(project, tmp_path, "--grounding-epochs", "3", workers=workers)
    whole = _merged(tmp_path, paths, capsys)
    assert whole["partial"] is False and whole["merge"]["missing_samples"] == []
    dropped = _drop(paths[1], lambda r: r.get("epoch") == 2)
    merged = _merged(tmp_path, paths, capsys)
    assert merged["partial"] is True
    uid = dropped["uid"].rsplit("-e", 1)[0]
    assert any(f"{uid} epoch 2" in note for note in merged["notes"]), merged["notes"]
    assert merged["merge"]["missing_samples"][0]["missing"] == 1
    out = tmp_path / "o"
    assert main(["export", str(tmp_path / "merged.json"), "--screenspot-pro", str(out)]) == 1


@SERIAL
def test_a_merge_of_a_cut_shard_is_partial(project, tmp_path, capsys, workers):
    paths = _shards(project, tmp_path, workers=workers)
    cut = read_json(paths[1])["samples"][0]["id"]
    _run(project, tmp_path, "--detector", "colour", "--grounding-shard", "2/2", "-k", f"not {cut}",
         workers=workers, name="shard2.json")  # fmt: skip
    assert cut not in {r["id"] for r in read_json(paths[1])["samples"]}
    merged = _merged(tmp_path, paths, capsys)
    assert merged["partial"] is True
    assert any("has no record, error or not_run entry" in note and cut in note for note in merged["notes"])


def test_a_merge_of_one_unsharded_report_with_a_record_deleted_is_partial(project, tmp_path, capsys):
    report = _run(project, tmp_path, "--detector", "colour", "--detector", "center")
    dropped = _drop(report, lambda r: r["detector"] == "center")
    merged = _merged(tmp_path, [report], capsys)
    assert merged["partial"] is True
    assert any(dropped["uid"] in note and "(center)" in note for note in merged["notes"]), merged["notes"]


# --- every record field the plugin writes is in the report schema ----------------------------------------------


def test_every_record_field_the_plugin_writes_is_in_the_schema():
    from pytest_grounding.core.record import Record
    from pytest_grounding.core.variants import RECORD_FIELDS
    from pytest_grounding.store.reportcheck import _validator

    properties = set(_validator().schema["$defs"]["record"]["properties"])
    assert set(Record.__annotations__) - properties == set()
    assert set(RECORD_FIELDS) | {"epoch"} <= properties


class ChatModel:
    """A chat model on 127.0.0.1 that cuts every other answer (finish_reason length)."""

    def __init__(self):
        import itertools

        from helpers import LoopbackServer, json_body

        counter = itertools.count()

        def reply(handler):
            if handler.path.endswith("/models"):
                return 200, {"data": [{"id": "m", "owned_by": "vllm"}]}
            if not handler.path.endswith("/chat/completions"):
                return 404, {"detail": "Not Found"}
            json_body(handler)
            cut = next(counter) % 2 == 1
            answer = "click(start_box='(12" if cut else "(60,40)"
            choice = {"index": 0, "message": {"content": answer}, "finish_reason": "length" if cut else "stop"}
            return 200, {"choices": [choice], "usage": {"prompt_tokens": 7, "completion_tokens": 3}}

        self.server = LoopbackServer(reply)
        self.url = self.server.url


@pytest.fixture
def chat():
    model = ChatModel()
    yield model
    model.server.close()


def _schema_problems(path):
    from pytest_grounding.store.reportcheck import problems

    return problems(read_json(path))


@SERIAL
@pytest.mark.parametrize("kind", ["served", "sweep-epochs-cache", "locate", "replay"])
def test_reports_of_every_kind_of_run_fit_the_schema_and_read_back(project, tmp_path, capsys, chat, workers, kind):
    pytest.importorskip("httpx")
    spec = (
        f"openai:base_url={chat.url},model=m,"
        "preset=uitars-1.5-point,retries=0,probe=false,preprocess=none,transform=abs,extractors=paren"
    )
    args = {
        "served": ["--dataset", MINI, "--detector", spec, "-k", "not m07 and not m08"],
        "sweep-epochs-cache": ["--dataset", MINI, "--detector", spec, "--grounding-cache", str(tmp_path / "c"),
                               "--grounding-epochs", "2", "--grounding-perturb", "invert", "-k", "m01 or m02"],
        "locate": ["--dataset", MINI, "--detector", "center", "--grounding-task", "locate",
                   "--grounding-perturb", "zoom:scale=0.5", "-k", "m01 or m02"],
        "replay": ["--dataset", PRO, "--detector", "colour"],
    }[kind]  # fmt: skip
    report = tmp_path / "r.json"
    project.runpytest(*args, "--grounding-json", str(report), "--grounding-misses", "xfail", *workers)
    if kind == "replay":  # the run's predictions played back: a replay's records
        assert main(["export", str(report), "--screenspot-pro", str(tmp_path / "x")]) == 0
        (official,) = (tmp_path / "x").glob("*.json")
        project.runpytest("--dataset", PRO, "--detector", f"replay:path={official}", "--grounding-json",
                          str(report), *workers)  # fmt: skip
    records = read_json(report)["samples"]
    assert records
    if kind == "served":
        assert any(r.get("truncated") for r in records)
    if kind == "sweep-epochs-cache":
        assert any(r.get("variant") for r in records) and any(r.get("epoch") == 2 for r in records)
        project.runpytest(*args, "--grounding-json", str(report), *workers)  # from the cache now
        assert any(r.get("cached") for r in read_json(report)["samples"])
    assert _schema_problems(report) == []
    capsys.readouterr()
    assert main(["summary", str(report)]) in (0, 1)
    assert "error:" not in capsys.readouterr().err


@SERIAL
def test_an_agentic_report_fits_the_schema(pytester, tmp_path, workers):
    pytest.importorskip("httpx")
    from scripted_agent import ScriptedAgent
    from test_served_agent import SPEC, write_dataset

    model = ScriptedAgent()
    try:
        write_dataset(tmp_path / "ssp")
        pytester.makepyfile(
            test_suite="def test_grounding(grounding_sample, grounding_detector, grounding_check):\n"
            "    grounding_check(grounding_sample, grounding_detector)\n"
        )
        pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
        report = tmp_path / "report.json"
        pytester.runpytest(f"--dataset={tmp_path / 'ssp'}", "--detector", SPEC.format(url=model.url),
                           "--grounding-json", str(report), "-k", "s0", *workers)  # fmt: skip
    finally:
        model.close()
    assert any(r.get("turns") for r in read_json(report)["samples"])
    assert _schema_problems(report) == []


# --- every parser of model text runs in linear time on its input ------------------------------------------------

MB = 1 << 20
# Shapes that made a regex rescan the rest of the text from each position: unclosed tags, runs of
# letters or digits before a `click(`, openings with no close, separators with nothing after them.
HOSTILE_UNITS = (
    "<tool_call>{", "<answer>{", "<answer>", "(1,", "((", "(1", "[1,", "click(x=", "<point>1 ", '"x":1,',
    '"box_2d":[1,', "a(", "abc", "1", " \t", "{", '"action" :', "Action: click(start_box='(", "<|box_start|>(",
    '"coordinate":[1,', "x(a=", "Click", "pyautogui.", "</tool_call>",
)  # fmt: skip


EXTRACTOR_NAMES = ("answer_coordinate", "box_2d", "bracket", "json_xy", "paren", "paren_last", "point_tag", "pyautogui",
                   "tool_call", "uitars_action")  # fmt: skip


def _hostile(unit, size=MB):
    return unit * (size // len(unit))


def _timed(function, text, limit=4.0):
    import time

    started = time.perf_counter()
    function(text)
    took = time.perf_counter() - started
    assert took < limit, f"{took:.1f} s on {len(text):,} characters"


@pytest.mark.parametrize("name", EXTRACTOR_NAMES)
def test_every_extractor_reads_a_hostile_megabyte_in_linear_time(name):
    from pytest_grounding.detectors.vlm.parse import EXTRACTORS

    if name == "uitars_action":
        pytest.importorskip("ui_tars")  # the openai extra: UI-TARS's own parser

    assert set(EXTRACTORS) == set(EXTRACTOR_NAMES)  # a new extractor is tested here too

    for unit in HOSTILE_UNITS:
        _timed(EXTRACTORS[name], _hostile(unit, MB // 4))
    _timed(EXTRACTORS[name], "".join(_hostile(unit, MB // len(HOSTILE_UNITS)) for unit in HOSTILE_UNITS))


def test_every_presets_parser_reads_a_hostile_megabyte_in_linear_time():
    pytest.importorskip("ui_tars")  # the openai extra: the UI-TARS presets read through its parser
    from pytest_grounding.detectors.vlm.preprocess import Frame
    from pytest_grounding.detectors.vlm.presets import all_presets

    frame = Frame((1000, 800), (1000, 800))
    mixed = "".join(_hostile(unit, MB // len(HOSTILE_UNITS)) for unit in HOSTILE_UNITS)
    for preset in all_presets().values():
        _timed(lambda text, preset=preset: preset.parse(text, frame, {}), mixed)
    for unit in ("<answer>{", "abc", "1", "<tool_call>{"):
        for preset in all_presets().values():
            _timed(lambda text, preset=preset: preset.parse(text, frame, {}), _hostile(unit, MB // 4), limit=2.0)


@pytest.mark.parametrize("unit", ["<tool_call>{", "<tool_call>", '<tool_call>{"name": "crop", "arguments": {', "{["])
def test_the_agents_tool_call_parser_reads_a_hostile_megabyte_in_linear_time(unit):
    from pytest_grounding.detectors.strategies.screenseeker import parse_verdict
    from pytest_grounding.detectors.vlm.agent_turns import text_tool_calls

    _timed(text_tool_calls, _hostile(unit))
    _timed(parse_verdict, _hostile(unit))
    deep = "<tool_call>" + '{"name": "crop", "arguments": ' + "[" * 50_000 + "}</tool_call>"
    assert text_tool_calls(deep)[0]["function"]["name"] == "crop"  # read as a malformed crop, never a RecursionError
    closed = '<tool_call>{"name": "crop", "arguments": {"box": [1, 2, 3, 4]}}</tool_call>'
    assert text_tool_calls(_hostile(unit, MB // 2) + closed) != ()


# --- JSON from a server goes through the bounded reader --------------------------------------------------------


def _deep(depth, opening="[", closing="]"):
    return opening * depth + closing * depth


class NestedServer:
    """Answers /models, the engine's questions or a chat with JSON nested `depth` levels deep."""

    def __init__(self, where, depth):
        from helpers import LoopbackServer

        def reply(handler):
            if handler.path.endswith("/models"):
                if where == "models":
                    return 200, '{"data": ' + _deep(depth) + "}"
                return 200, {"data": [{"id": "m", "owned_by": "vllm"}]}
            if handler.path in ("/version", "/get_server_info"):
                return 200, ('{"version": ' + _deep(depth, '{"a": ', "}") + "}") if where == "engine" else "{}"
            if where == "chat":
                return 200, '{"choices": [{"message": {"content": "(1,1)"}, "x": ' + _deep(depth) + "}]}"
            return 200, {"choices": [{"index": 0, "message": {"content": "(5,5)"}, "finish_reason": "stop"}]}

        self.server = LoopbackServer(reply, answer_probes=where != "chat")
        self.url = self.server.url


@SERIAL
@pytest.mark.parametrize(("where", "depth"), [("models", 100_000), ("chat", 5_000), ("engine", 30_000)])
def test_nested_json_from_a_server_is_one_clear_outcome(project, tmp_path, workers, where, depth):
    pytest.importorskip("httpx")
    server = NestedServer(where, depth)
    try:
        report = tmp_path / "r.json"
        spec = (
            f"openai:base_url={server.url},model=m,"
            "preset=uitars-1.5-point,retries=0,preprocess=none,transform=abs,extractors=paren"
        )
        result = project.runpytest("--dataset", MINI, "--detector", spec, "--grounding-json", str(report),
                                   "-k", "m01 or m02", *workers)  # fmt: skip
    finally:
        server.server.close()
    text = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in text and "RecursionError" not in text
    if where == "chat":
        records = read_json(report)["samples"]
        assert records and all(r["outcome"] == "error" and "nested too deeply" in r["error"] for r in records)
    else:
        assert result.ret in (0, 1, 4), text[-2000:]


@pytest.mark.parametrize("depth", [2_000, 200_000])
def test_doctor_names_a_server_that_answers_nested_json(tmp_path, capsys, monkeypatch, depth):
    pytest.importorskip("httpx")
    from pytest_grounding.detectors.served import BASE_URL_ENV

    server = NestedServer("models", depth)
    try:
        monkeypatch.setenv(BASE_URL_ENV, server.url)
        code = main(["doctor"])
    finally:
        server.server.close()
    captured = capsys.readouterr()
    assert code in (0, 1) and "Traceback" not in captured.out + captured.err
    assert "answers /models" in captured.out


# --- the answer cache reads regular files inside itself only, and says what it could not write ------------------


class OkModel:
    def __init__(self):
        import threading

        from helpers import LoopbackServer

        self.chats = 0
        lock = threading.Lock()

        def reply(handler):
            if handler.path.endswith("/models"):
                return 200, {"data": [{"id": "m", "owned_by": "vllm"}]}
            if not handler.path.endswith("/chat/completions"):
                return 404, {"detail": "Not Found"}
            with lock:
                self.chats += 1
            choice = {"index": 0, "message": {"content": "(60,40)"}, "finish_reason": "stop"}
            return 200, {"choices": [choice], "usage": {"prompt_tokens": 7, "completion_tokens": 3}}

        self.server = LoopbackServer(reply)
        self.url = self.server.url
        self.spec = (
            f"openai:base_url={self.url},model=m,"
            "preset=uitars-1.5-point,retries=0,probe=false,preprocess=none,transform=abs"
        )


@pytest.fixture
def ok_model():
    model = OkModel()
    yield model
    model.server.close()


def _special(path, kind, outside):
    import os

    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "link-out":
        path.symlink_to(outside)
    elif kind == "folder":
        path.mkdir()
    elif kind == "huge":
        with open(path, "wb") as file:
            file.truncate(64 << 20)  # sparse: 64 MiB of zeros


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "link-out", "folder", "huge"])
def test_a_cache_entry_that_is_no_regular_file_inside_the_store_is_a_miss(tmp_path, kind):
    import time

    from pytest_grounding.store.answers import FileAnswerStore

    store = FileAnswerStore(tmp_path / "cache")
    key = "ab" + "0" * 62
    assert store.put(key, {"completion": {"x": 1}}) and store.get(key)["completion"] == {"x": 1}
    outside = tmp_path / "outside.json"
    outside.write_text(store.path(key).read_text())  # a whole, valid entry: still not read through a link
    _special(store.path(key), kind, outside)
    started = time.monotonic()
    assert store.get(key) is None
    assert time.monotonic() - started < 2


def test_a_cache_folder_linked_out_of_the_store_is_not_read(tmp_path):
    from pytest_grounding.store.answers import FileAnswerStore

    store, elsewhere = FileAnswerStore(tmp_path / "cache"), FileAnswerStore(tmp_path / "other")
    key = "cd" + "1" * 62
    elsewhere.put(key, {"completion": {"x": 1}})
    (tmp_path / "cache" / "answers").mkdir(parents=True)
    store.path(key).parent.symlink_to(elsewhere.path(key).parent)
    assert elsewhere.get(key) is not None and store.get(key) is None


@SERIAL
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_run_over_a_cache_of_special_files_asks_the_model_again(project, tmp_path, ok_model, workers, kind):
    pytest.importorskip("httpx")
    cache = tmp_path / "cache"
    args = ["--dataset", MINI, "--detector", ok_model.spec, "--grounding-cache", str(cache), "-k", "m01 or m02 or m03"]
    args += ["--grounding-frame-check=off"]  # the cache holds the samples' answers only
    project.runpytest(*args, *workers)
    asked = ok_model.chats
    entries = [p for p in (cache / "answers").rglob("*.json")]
    assert len(entries) == 3
    for path in entries:
        _special(path, kind, tmp_path)
    report = tmp_path / "r.json"
    project.runpytest(*args, "--grounding-json", str(report), *workers)
    assert ok_model.chats == 2 * asked
    assert not any(r.get("cached") for r in read_json(report)["samples"])


@XDIST
def test_cache_write_errors_are_counted_and_an_unusable_folder_refused(project, tmp_path, ok_model, workers):
    pytest.importorskip("httpx")
    cache = tmp_path / "cache"
    (cache / "answers").mkdir(parents=True)
    for number in range(256):  # every entry folder a file: the store is checked, but no answer can be written
        (cache / "answers" / f"{number:02x}").write_text("")
    report = tmp_path / "r.json"
    args = ["--dataset", MINI, "--detector", ok_model.spec, "-k", "m01 or m02"]
    result = project.runpytest(*args, "--grounding-cache", str(cache), "--grounding-json", str(report), *workers)
    (block,) = read_json(report)["summary"].values()
    assert block["cache"]["not_stored"] == 2
    result.stdout.fnmatch_lines(["*cache: 2 answers could not be written*"])
    assert _schema_problems(report) == []
    blocked = tmp_path / "blocked"
    blocked.write_text("a file, not a folder")
    result = project.runpytest(*args, "--grounding-cache", str(blocked), *workers)
    assert result.ret == 4
    assert "--grounding-cache" in result.stderr.str() and "cannot be written" in result.stderr.str()


# --- the board links relative paths or http(s) only, and walks any depth of folders ------------------------------

SCHEMES = ["javascript:alert(1)", "JaVaScRiPt:alert(2)", "data:text,x", "vbscript:msgbox(1)", " javascript:x"]


def test_board_links_are_relative_paths_never_a_scheme(project, tmp_path, capsys):
    import re
    import shutil

    report = _run(project, tmp_path, "--detector", "colour", "--grounding-html", str(tmp_path / "run.html"))
    folder = tmp_path / "reports"
    (folder / "sub").mkdir(parents=True)
    for index, name in enumerate(SCHEMES):
        where = folder / ("sub" if index % 2 else "")
        document = read_json(report)
        document["run"]["args"] = [a for a in document["run"]["args"] if "html" not in a]
        document["started"] = f"2026-01-0{index + 1}T10:00:00+0000"
        (where / f"{name}.json").write_text(json.dumps(document))
        shutil.copy(tmp_path / "run.html", where / f"{name}.html")
    page = tmp_path / "board.html"
    assert main(["board", str(folder), "--html", str(page)]) == 0
    capsys.readouterr()
    links = re.findall(r'href="([^"]*)"', page.read_text())
    assert links
    for link in links:
        assert link.startswith("./") or link.startswith("http"), link
        assert ":" not in link.split("/", 1)[1].split("/")[0] or link.startswith("http")


def test_safe_href_keeps_http_and_relative_paths_only():
    from pytest_grounding.render.html.board import safe_href

    assert safe_href("https://example.org/run.html") == "https://example.org/run.html"
    assert safe_href("HTTP://example.org/x") == "HTTP://example.org/x"
    assert safe_href("../a b/run.html") == "./../a%20b/run.html"
    for bad in ("/etc/passwd", "C:\\x.html", "//evil.example/x", "java\tscript:x", "a\nb"):
        assert safe_href(bad) is None
    for name in SCHEMES:
        href = safe_href(f"{name}.html")
        assert href is None or (href.startswith("./") and ":" not in href)


@pytest.mark.parametrize("depth", [70, 1_100])
def test_board_walks_a_folder_of_any_depth(project, tmp_path, capsys, depth):
    report = _run(project, tmp_path, "--detector", "colour")
    folder = tmp_path / "reports"
    chain = [folder]
    for _ in range(depth):  # one by one: mkdir(parents=True) itself recurses
        chain.append(chain[-1] / "d")
        chain[-1].mkdir(parents=True)
    try:
        (folder / "top.json").write_text(report.read_text())
        (chain[-1] / "bottom.json").write_text(report.read_text())
        assert main(["board", str(folder)]) == 0
        out = capsys.readouterr().out
        assert "folders deep: not read" in out
    finally:  # bottom-up: pytest's own clean-up of tmp_path (shutil.rmtree) recurses past 1,000 levels
        (chain[-1] / "bottom.json").unlink(missing_ok=True)
        for path in reversed(chain[1:]):
            path.rmdir()


# --- every CLI line of text from a file goes through the terminal escaping --------------------------------------

FORGED = ["\x1b[2J\x1b[H", "\rverdict: all gates passed\n", "\x1b]0;title\x07", "\u202eevil", "\x9b31m"]


@pytest.mark.parametrize("forged", FORGED)
def test_rescore_prints_what_a_file_says_escaped(project, tmp_path, capsys, forged):
    report = _run(project, tmp_path, "--detector", "colour", "--grounding-predictions", str(tmp_path / "p.jsonl"))
    predictions = tmp_path / "p.jsonl"
    rows = [json.loads(line) for line in predictions.read_text().splitlines() if line.strip()]
    for row in rows:
        row["detector"] = f"colour{forged}"
    predictions.write_text("".join(json.dumps(row) + "\n" for row in rows))
    capsys.readouterr()
    code = main(["rescore", str(predictions), "--json", str(tmp_path / "again.json")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    text = captured.out + captured.err
    for character in ("\x1b", "\r", "\x07", "\u202e", "\x9b"):
        assert character not in text
    assert all(not line.startswith("verdict") for line in text.splitlines())
    assert report.is_file()


# --- the vllm detector's own settings and files ----------------------------------------------------------------


@pytest.mark.parametrize("value", ["-1", "0", "nan", "1e9", "soon"])
def test_a_start_timeout_no_server_can_have_is_refused(project, tmp_path, value):
    result = project.runpytest("--dataset", MINI, "--detector", f"vllm:model={tmp_path},start_timeout={value}")
    assert result.ret == 4
    assert "start_timeout" in result.stderr.str() + result.stdout.str()


@pytest.mark.parametrize("blocker", ["file", "fifo"])
def test_an_unwritable_cache_folder_for_the_server_log_is_one_message(project, tmp_path, monkeypatch, blocker):
    import os

    from test_served_protocol import fake_vllm

    server = fake_vllm(tmp_path)
    cache = tmp_path / "cache"
    cache.mkdir()
    if blocker == "file":
        (cache / "servers").write_text("a file where the folder should be")
    else:
        os.mkfifo(cache / "servers")
    monkeypatch.setenv("PYTEST_GROUNDING_CACHE", str(cache))
    result = project.runpytest(
        "--dataset", MINI, "--detector", f"vllm:model={tmp_path},server={server},preset=qwen2.5-vl", "-k", "m01"
    )
    text = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in text and "the server's log cannot be written" in text


def test_two_endpoints_that_describe_themselves_alike_never_share_answers(project, tmp_path):
    pytest.importorskip("httpx")
    first, second = OkModel(), OkModel()
    try:
        cache = ["--grounding-cache", str(tmp_path / "cache"), "--dataset", MINI, "-k", "m01 or m02"]
        cache += ["--grounding-frame-check=off"]  # the model counts the samples' requests only
        project.runpytest("--detector", first.spec, *cache)
        report = tmp_path / "r.json"
        spec = second.spec.replace(second.url, second.url + "/")  # another server, another spelling
        project.runpytest("--detector", spec, *cache, "--grounding-json", str(report))
        assert first.chats == 2 and second.chats == 2
        assert not any(r.get("cached") for r in read_json(report)["samples"])
        project.runpytest("--detector", first.spec, *cache, "--grounding-json", str(report))
        assert first.chats == 2 and all(r.get("cached") for r in read_json(report)["samples"])
    finally:
        first.server.close()
        second.server.close()


# --- a tracker's time is bounded -------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["mlflow", "wandb"])
def test_a_tracker_that_never_answers_is_one_note_in_bounded_time(monkeypatch, kind):
    import importlib.util
    import threading
    import time

    from pytest_grounding.render import trackers

    if importlib.util.find_spec(kind) is None:  # not importorskip: importing mlflow here breaks later pytester runs
        pytest.skip(f"needs the {kind} extra")
    release = threading.Event()

    def hangs(*args):
        release.wait(30)
        return ["never"]

    monkeypatch.setitem(trackers.LOGGERS, kind, hangs)
    monkeypatch.setattr(trackers, "TRACKER_TIMEOUT_S", 0.5)
    started = time.monotonic()
    target = trackers.parse_target(f"{kind}:somewhere" if kind == "mlflow" else f"{kind}:project", "test")
    notes = trackers.log_all({"summary": {}, "samples": []}, [target], [])
    release.set()
    assert time.monotonic() - started < 5
    assert len(notes) == 1 and "not logged: TimeoutError: no answer within 0.5 s" in notes[0]


# --- doctor lists as runnable only what it found complete ------------------------------------------------------


@pytest.mark.parametrize("kind", ["link out of the cache", "mixed index", "weights deleted"])
def test_doctor_never_lists_an_incomplete_repo_as_runnable(tmp_path, monkeypatch, capsys, kind):
    from test_hostile_round3 import hostile_cache

    _, cache, snapshot = hostile_cache(tmp_path, "link out of the cache" if kind == "weights deleted" else kind)
    if kind == "weights deleted":
        (snapshot / "model.safetensors").unlink()
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for name in ("GROUNDING_BASE_URL", "PYTEST_GROUNDING_OPENAI_BASE_URL", "PYTEST_GROUNDING_QWENVL_MODEL"):
        monkeypatch.delenv(name, raising=False)
    main(["doctor"])
    out = capsys.readouterr().out
    runnable = [line for line in out.splitlines() if "runnable in-process:" in line]
    assert runnable and all("org/model" not in line for line in runnable), runnable


# --- an agent's turns: whatever a model puts in its answer ends the episode with an end, in bounded bodies -------


def test_later_turns_echo_a_tool_call_without_what_the_model_added():
    from pytest_grounding.detectors.vlm.agent_parts import Reply
    from pytest_grounding.detectors.vlm.agent_turns import assistant_message, read_action

    junk = "x" * (4 << 20)
    for arguments in ({"box": [1, 2, 30, 40], "junk": junk}, json.dumps({"box": [1, 2, 30, 40], "junk": junk[:1000]})):
        call = {"id": "c1", "type": "function", "function": {"name": "crop", "arguments": arguments}, "extra": junk}
        reply = Reply(text="t", tool_calls=(call,), prompt_tokens=1, completion_tokens=1, latency_ms=1.0)
        action = read_action(reply, 1)
        assert action.kind == "crop"
        echoed = json.dumps(assistant_message(reply, action))
        assert len(echoed) < 1000 and "[1, 2, 30, 40]" in echoed and "junk" not in echoed


@pytest.mark.parametrize(
    "content",
    [[{"type": "text", "text": 5}], [{"type": "text", "text": {"a": 1}}, {"type": "text", "text": "(1,2)"}], [None, 3]],
)
def test_content_parts_that_are_no_text_are_no_answer_never_a_crash(content):
    from pytest_grounding.detectors.http import completion_content

    assert isinstance(completion_content({"choices": [{"message": {"content": content}}]}), str)


@pytest.mark.parametrize(
    "arguments",
    ["[" * 5000, '{"box": [1e999, 2, 3, 4]}', '{"box": [' + "9" * 400 + ", 2, 3, 4]}", 7, None, ["box"]],
)
def test_hostile_crop_arguments_are_an_invalid_action_never_an_exception(arguments):
    from pytest_grounding.detectors.vlm.agent_parts import Reply
    from pytest_grounding.detectors.vlm.agent_turns import read_action

    call = {"id": "c", "function": {"name": "crop", "arguments": arguments}}
    reply = Reply(text=None, tool_calls=(call,), prompt_tokens=1, completion_tokens=1, latency_ms=1.0)
    assert read_action(reply, 1).kind == "invalid"


# --- huge numbers in a sweep's parameters are refused by name ---------------------------------------------------


@SERIAL
@pytest.mark.parametrize(
    "spec",
    ["downscale:max_pixels=" + "9" * 400, "downscale:long_edge=10000000000", "jpeg:quality=" + "1" * 60,
     "zoom:scale=" + "9" * 400, "occlude:size=1e999"],
)  # fmt: skip
def test_a_sweep_parameter_beyond_any_screen_is_a_usage_error(project, workers, spec):
    result = project.runpytest("--dataset", MINI, "--detector", "center", "--grounding-perturb", spec, *workers)
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == 4 and "INTERNALERROR" not in text and "Traceback" not in text
    assert spec.split(":")[0] in result.stderr.str()


# --- SIGTERM stops a started server's whole process group ------------------------------------------------------

SIGTERMED = """
import sys, time, types
from pathlib import Path
from pytest_grounding.detectors import vllm_server

folder = Path(sys.argv[1])
script = f"sleep 300 & echo $! > {folder / 'child.pid'}; wait"
plan = types.SimpleNamespace(argv=["sh", "-c", script], base_url="http://127.0.0.1:1/v1", served_name="m",
                             describe=lambda: {})
vllm_server.ensure_server("k", lambda: vllm_server.ServerProcess(plan, folder / "server.log"))
while not (folder / "child.pid").exists() or not (folder / "child.pid").read_text().strip():
    time.sleep(0.05)
print("ready", flush=True)
time.sleep(60)
"""


@pytest.mark.parametrize("signal_name", ["SIGTERM"])
def test_sigterm_stops_a_started_servers_whole_group(tmp_path, signal_name):
    import os
    import signal
    import subprocess
    import sys
    import time

    from helpers import REPO

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = subprocess.Popen([sys.executable, "-c", SIGTERMED, str(tmp_path)], stdout=subprocess.PIPE, env=env, text=True)
    assert run.stdout.readline().strip() == "ready"
    child = int((tmp_path / "child.pid").read_text())
    os.kill(child, 0)  # alive: a grandchild of the run, in the server's group
    run.send_signal(getattr(signal, signal_name))
    assert run.wait(30) == -signal.SIGTERM  # it still ends as SIGTERM ends a process
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(child, signal.SIGKILL)
    pytest.fail("the server's child outlived the run")


# --- Ctrl-C at the run's end: held from the figures on, never losing the JSON and HTML -------------------------

INTERRUPTED_AT = """
import os, signal
from pytest_grounding.analysis import {module} as patched

_original = patched.{function}


def {function}(*args, **kwargs):  # Ctrl-C arrives as the run's end starts this step
    os.kill(os.getpid(), signal.SIGINT)
    return _original(*args, **kwargs)


patched.{function} = {function}
"""


@XDIST
@pytest.mark.parametrize(("module", "function"), [("document", "figures"), ("tracked", "tracked_runs")])
def test_ctrl_c_at_the_runs_end_loses_no_output(tmp_path, workers, module, function):
    import importlib.util

    from test_hostile_round3 import no_crash, run_suite

    if module == "tracked" and importlib.util.find_spec("mlflow") is None:
        pytest.skip("needs the mlflow extra")
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "conftest.py").write_text(INTERRUPTED_AT.format(module=module, function=function))
    report, page = tmp_path / "r.json", tmp_path / "r.html"
    more = ["--grounding-log", f"mlflow:{tmp_path / 'nowhere'}"] if module == "tracked" else []
    result = run_suite(folder, f"--dataset={MINI}", "--detector", "center", "--grounding-json", str(report),
                       "--grounding-html", str(page), *more, *workers)  # fmt: skip
    text = no_crash(result)
    assert result.returncode == 2 and "were completed first" in text, text[-2000:]
    assert len(read_json(report)["samples"]) == 8 and page.read_text().rstrip().endswith("</html>")
