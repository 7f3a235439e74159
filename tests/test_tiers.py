"""Significance tiers (analysis/tiers.py): synthetic outcome vectors of known accuracy ranked and
grouped; Holm's adjustment against its definition; runs on other samples or another scoring
profile never paired. End to end: four models replayed from prediction files made here, through
the suite, then `board --json` and the HTML board."""

import json
import random
import re
import struct
import zlib

import pytest

from helpers import SERIAL
from pytest_grounding.analysis import compare
from pytest_grounding.analysis import tiers as significance
from pytest_grounding.cli.main import main


def records(hits, name="m", dataset="d", screens=10, fingerprint="f1"):
    """One record per sample: a hit where `hits[i]`, else a miss; samples spread over `screens`."""
    return tuple(
        {
            "detector": name,
            "dataset": dataset,
            "uid": f"u{i:04d}",
            "id": f"s{i:04d}",
            "image": f"screen{i % screens}.png",
            "outcome": "hit" if hit else "miss",
            "fingerprint": fingerprint,
        }
        for i, hit in enumerate(hits)
    )


def vector(n, accuracy, seed):
    """Outcomes with exactly round(n * accuracy) hits, placed at random."""
    k = round(n * accuracy)
    hits = [True] * k + [False] * (n - k)
    random.Random(seed).shuffle(hits)
    return hits


def test_two_close_models_tie_in_the_first_tier_the_others_below_in_order():
    n = 300
    contenders = [
        significance.Contender(name, "pixel", records(vector(n, acc, seed), name))
        for name, acc, seed in (("d", 0.40, 4), ("b", 0.85, 2), ("a", 0.87, 1), ("c", 0.60, 3))
    ]
    found = significance.tiers(contenders)
    assert [(r.name, r.rank, r.tier) for r in found.ranked] == [("a", 1, 1), ("b", 2, 1), ("c", 3, 2), ("d", 4, 3)]
    assert found.ranked[0].accuracy == pytest.approx(0.87)
    assert len(found.pairs) == 6
    ab = next(p for p in found.pairs if (p.better, p.worse) == ("a", "b"))
    assert not ab.significant and ab.n == n
    assert ab.difference.delta == pytest.approx(0.02)
    # the pair's test is McNemar's on the discordant samples, counted here
    a, b = (dict(zip(range(n), vector(n, acc, s), strict=True)) for acc, s in ((0.87, 1), (0.85, 2)))
    wins = sum(a[i] and not b[i] for i in range(n))
    losses = sum(b[i] and not a[i] for i in range(n))
    assert (ab.wins, ab.losses) == (wins, losses)
    assert ab.p_value == pytest.approx(compare.mcnemar_exact(wins, losses))
    assert all(p.significant for p in found.pairs if p.better in "ab" and p.worse in "cd")


def test_one_model_alone_is_tier_one_and_identical_models_tie():
    hits = vector(50, 0.5, 7)
    found = significance.tiers([significance.Contender("x", "pixel", records(hits, "x"))])
    assert [(r.tier, r.rank) for r in found.ranked] == [(1, 1)] and found.pairs == ()
    found = significance.tiers([significance.Contender(n, "pixel", records(hits, n)) for n in ("x", "y", "z")])
    assert {r.tier for r in found.ranked} == {1}
    assert all(p.p_value == 1.0 and p.wins == p.losses == 0 for p in found.pairs)


def test_holm_adjusts_the_smallest_p_by_m_and_stays_monotone():
    assert significance.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert significance.holm([0.5, 0.001]) == pytest.approx([0.5, 0.002])
    assert significance.holm([0.6, 0.9]) == pytest.approx([1.0, 1.0])  # capped: 2*0.6 > 1
    assert significance.holm([]) == []


def test_holm_can_turn_a_raw_difference_into_a_tie():
    """Many pairs: a difference that McNemar alone calls real (p < 0.05) is not, once corrected."""
    n = 400
    base = vector(n, 0.5, 11)
    near = list(base)
    flipped = [i for i, hit in enumerate(base) if not hit][:8]  # 8 discordant pairs, all one way: p = 2/256
    for i in flipped:
        near[i] = True
    others = [significance.Contender(f"z{k}", "pixel", records(vector(n, 0.1, 20 + k), f"z{k}")) for k in range(6)]
    contenders = [
        significance.Contender("near", "pixel", records(near, "near")),
        significance.Contender("base", "pixel", records(base, "base")),
        *others,
    ]
    found = significance.tiers(contenders)
    pair = next(p for p in found.pairs if (p.better, p.worse) == ("near", "base"))
    assert pair.p_value == pytest.approx(2 / 256)
    assert pair.p_holm > 0.05 and not pair.significant
    assert found.tier_of("near") == found.tier_of("base") == 1
    assert significance.tiers(contenders[:2]).tier_of("base") == 2  # alone, one test: the pair differs
    assert any("Holm" in note for note in found.notes)


def test_other_samples_or_another_profile_are_never_paired():
    n = 100
    a = significance.Contender("a", "pixel", records(vector(n, 0.9, 1), "a"))
    b = significance.Contender("b", "pixel", records(vector(n, 0.5, 2), "b"))
    fewer = significance.Contender("fewer", "pixel", records(vector(40, 0.95, 3), "fewer"))
    other_profile = significance.Contender("loose", "half-open", records(vector(n, 0.2, 4), "loose"))
    other_version = significance.Contender("v2", "pixel", records(vector(n, 0.6, 5), "v2", fingerprint="f2"))
    found = significance.tiers([a, b, fewer, other_profile, other_version])
    tiers = {r.name: r for r in found.ranked}
    assert (tiers["a"].tier, tiers["b"].tier) == (1, 2)
    assert tiers["fewer"].tier is None and "another sample set (40 samples" in tiers["fewer"].reason
    assert tiers["fewer"].rank == 1  # still ranked by its accuracy, only not tiered
    assert tiers["loose"].tier is None and "half-open profile" in tiers["loose"].reason
    assert tiers["v2"].tier is None and "another sample set" in tiers["v2"].reason
    assert {(p.better, p.worse) for p in found.pairs} == {("a", "b")}
    assert any("not paired" in note for note in found.notes)
    as_dict = significance.as_dict(found)
    assert [r["tier"] for r in as_dict["rows"]] == [None, 1, None, 2, None]
    assert as_dict["pairs"][0]["better"] == "a" and as_dict["pairs"][0]["significant"] is True


def test_errors_are_not_scored_and_a_run_without_scored_samples_has_no_tier():
    hits = vector(30, 0.5, 1)
    errors = tuple({**r, "outcome": "error"} for r in records(hits, "broken"))
    found = significance.tiers(
        [significance.Contender("ok", "pixel", records(hits, "ok")), significance.Contender("broken", "pixel", errors)]
    )
    by = {r.name: r for r in found.ranked}
    assert by["ok"].tier == 1 and by["broken"].tier is None and by["broken"].reason == "no sample scored"


# -- end to end: four replayed models ------------------------------------------------------------


def png(width, height):
    """A plain grey PNG (the replay detector opens the screen for its size only)."""
    raw = b"".join(b"\x00" + b"\x80" * (width * 3) for _ in range(height))
    chunk = lambda kind, data: (  # noqa: E731
        struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    )
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


MODELS = (("alpha", 0.88, 1), ("beta", 0.86, 2), ("gamma", 0.62, 3), ("delta", 0.35, 4))


def write_dataset_and_answers(root, n=160, screens=10):
    """A Pointerbench-layout dataset of `n` targets on `screens` screens, and for each model a
    predictions file hitting exactly its share of the targets (points inside the box or beside it)."""
    folder = root / "bench" / "data" / "test"
    folder.mkdir(parents=True)
    for s in range(screens):
        (folder / f"screen{s}.png").write_bytes(png(200, 100))
    rows = []
    for i in range(n):
        x, y = 10 + (i * 7) % 150, 10 + (i * 3) % 60
        rows.append(
            {
                "file_name": f"screen{i % screens}.png",
                "id": f"t{i:03d}",
                "instruction": f"target {i}",
                "bbox": [x, y, x + 20, y + 20],
                "element_type": "icon",
                "image_size": [200, 100],
            }
        )
    (folder / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    answers = {}
    for name, accuracy, seed in MODELS:
        hits = vector(n, accuracy, seed)
        lines = []
        for row, hit in zip(rows, hits, strict=True):
            x1, y1, x2, y2 = row["bbox"]
            point = [x1 + 10, y1 + 10] if hit else [(x2 + 15) % 200, (y2 + 15) % 100]
            lines.append(json.dumps({"id": row["id"], "point": point}) + "\n")
        path = root / f"{name}.jsonl"
        path.write_text("".join(lines))
        answers[name] = (path, hits)
    return root / "bench", rows, answers


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
@SERIAL
def test_four_replayed_models_fall_into_their_tiers_on_the_board(project, workers, tmp_path, capsys):
    four_models_on_the_board(project, workers, tmp_path, capsys)


@pytest.mark.slow
def test_the_matrix_pages_filters_and_links_in_a_real_browser(project, tmp_path, capsys):
    from test_html import load

    page, rows, hits = four_models_on_the_board(project, [], tmp_path, capsys, html=True)
    dom, console = load(page)
    assert console == [], console
    assert 'data-ready="1"' in dom
    assert dom.count("<tr data-id=") == 100  # one page of rows
    assert f'<b class="count">{len(rows)}</b>' in dom and "page 1 of 2" in dom
    found = re.search(r"<td class=\"o o-miss\"[^>]*><a href=\"([^\"]+)\"", dom)
    assert found
    link = found.group(1)
    text = page.read_text()
    data = json.loads(text.split('class="matrix-data">', 1)[1].split("</script>", 1)[0])
    gamma = next(i for i, name in enumerate(data["detectors"]) if name.startswith("replay:name=gamma,"))
    dom, _ = load(page, f"#matrix=only:{gamma}")  # the samples only gamma hits
    mine = dict(zip(MODELS, hits, strict=True))[MODELS[2]]
    others = [h for m, h in zip(MODELS, hits, strict=True) if m != MODELS[2]]
    expected_only = sum(1 for i in range(len(rows)) if mine[i] and not any(h[i] for h in others))
    assert dom.count("<tr data-id=") == expected_only > 0
    assert f'<b class="count">{expected_only}</b>' in dom
    # a miss links to its entry in the run's gallery, by the anchor the run page gives it
    target, anchor = link.split("#")
    assert f'id="{anchor}"' in (page.parent / target).read_text()


def four_models_on_the_board(project, workers, tmp_path, capsys, html=False):
    dataset, rows, answers = write_dataset_and_answers(tmp_path)
    reports = tmp_path / "reports"
    reports.mkdir()
    detectors = [a for name, (path, _) in answers.items() for a in ("--detector", f"replay:path={path},name={name}")]
    project.runpytest(
        "--dataset", str(dataset), *detectors, "--grounding-json", str(reports / "four.json"), *workers,
        *(["--grounding-html", str(reports / "four.html")] if html else []),
    )  # fmt: skip
    samples = json.loads((reports / "four.json").read_text())["samples"]
    for name, (_, hits) in answers.items():  # each model's accuracy is the one its file was made with
        assert sum(s["outcome"] == "hit" for s in samples if s["detector"].startswith(f"replay:name={name},")) == sum(
            hits
        )
    out = tmp_path / "board.json"
    assert main(["board", str(reports), "--json", str(out), "--markdown"]) == 0
    printed = capsys.readouterr().out
    assert "### Significance tiers: bench" in printed
    board = json.loads(out.read_text())
    (column,) = board["benchmarks"]
    ranking = [(r["detector"].split(",")[0], r["rank"], r["tier"]) for r in column["rows"]]
    assert ranking == [
        ("replay:name=alpha", 1, 1),
        ("replay:name=beta", 2, 1),
        ("replay:name=gamma", 3, 2),
        ("replay:name=delta", 4, 3),
    ]
    assert len(column["tiers"]["pairs"]) == 6
    assert sum(p["significant"] for p in column["tiers"]["pairs"]) == 5  # all but alpha-beta
    matrix = column["matrix"]
    assert {s["id"] for s in matrix["samples"]} == {r["id"] for r in rows}
    assert len(matrix["detectors"]) == 4
    expected_all_miss = sum(1 for i in range(len(rows)) if not any(h[i] for _, h in answers.values()))
    assert matrix["all_miss"] == expected_all_miss
    # the HTML board holds every sample id and every model
    page = tmp_path / "board.html"
    assert main(["board", str(reports), "--html", str(page)]) == 0
    text = page.read_text()
    assert [int(t) for t in re.findall(r'<tr data-tier="(\d*)">', text)] == [1, 1, 2, 3]  # the tiers table
    assert text.count('<span class="tier" title="significance tier">T1</span>') == 2  # and the board's cells
    data = json.loads(text.split('class="matrix-data">', 1)[1].split("</script>", 1)[0])
    assert {s["id"] for s in data["samples"]} == {r["id"] for r in rows}
    assert set(data["detectors"]) == {r["configuration"] for r in column["rows"]}
    assert all(link.endswith(".html") if html else link == "" for link in data["links"]), data["links"]
    return page, rows, [h for _, h in answers.values()]


def test_mcnemar_holds_at_benchmark_scale():
    """ScreenSpot-Pro's 1,581 samples give more than 1,023 discordant pairs: 2.0**n overflowed."""
    assert compare.mcnemar_exact(800, 800) == pytest.approx(1.0)
    assert 0 < compare.mcnemar_exact(560, 500) < 0.1
    assert compare.mcnemar_exact(1500, 81) == 0.0  # far below the smallest float: zero, not an error


def test_a_tie_never_reads_minus_zero():
    """Two models with the same outcomes differ by nothing: `+0.0 points, 95% CI +0.0 to +0.0`."""
    from pytest_grounding.analysis.intervals import Difference
    from pytest_grounding.core.numbers import points
    from pytest_grounding.render.common import board as board_text

    hits = vector(100, 0.5, 1)
    found = significance.tiers([significance.Contender(name, "pixel", records(hits, name)) for name in ("a", "b")])
    (pair,) = found.pairs
    text = board_text._difference(pair)
    assert "-0.0" not in text and text.startswith("+0.0 points"), text
    assert Difference(-1e-9, -1e-9, -0.0, 0.0, 10, 2).bounds() == "95% CI +0.0 to +0.0 points (2 screens)"
    assert (points(-0.0004), points(-0.0006), points(0.025)) == ("+0.0", "-0.1", "+2.5")
