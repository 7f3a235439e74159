"""--grounding-shard K/N: the plan (disjoint, covering, balanced, a screen's samples together, the
same from the data alone), K/N from the engines' environments, and the option at collection in a
real run, serial and under xdist (other shards' samples never become items; ids unchanged)."""

import dataclasses
import re
from pathlib import Path

import pytest

from helpers import FIXTURES, XDIST, read_json
from pytest_grounding.core.types import Box, Sample
from pytest_grounding.datasets import load_dataset
from pytest_grounding.datasets.sharding import BALANCE, SCHEDULERS, Shard, bound, parse_shard, plan, take

FORMATS = ["mini", "screenspot", "screenspot-pro", "harness", "osworld-g", "showdown-clicks", "cuactspot"]
COUNTS = [1, 2, 3, 7]


@pytest.fixture(scope="module")
def fixture_samples():
    """Every fixture set in several formats, as one run's sample list."""
    return [s for name in FORMATS for s in load_dataset(str(FIXTURES / name)).samples]


@pytest.fixture(scope="module")
def default_samples():
    from pytest_grounding.datasets.synth import default_dataset_dir

    return list(load_dataset(f"pointerbench:{default_dataset_dir()}", name="synthetic").samples)


def shares(samples, count):
    return [take(samples, Shard(k, count, "test")) for k in range(1, count + 1)]


def screens_split(parts):
    where: dict = {}
    for k, part in enumerate(parts):
        for s in part:
            where.setdefault((s.dataset, s.image), set()).add(k)
    return [screen for screen, found in where.items() if len(found) > 1]


def assert_partition(samples, parts):
    uids = [s.uid for part in parts for s in part]
    assert len(uids) == len(set(uids)), "a sample in two shards"
    assert set(uids) == {s.uid for s in samples}, "a sample in no shard"
    assert max(len(p) for p in parts) <= bound(len(samples), len(parts))


@pytest.mark.parametrize("count", COUNTS)
def test_fixture_sets_are_split_disjoint_covering_and_balanced(fixture_samples, count):
    parts = shares(fixture_samples, count)
    assert_partition(fixture_samples, parts)
    mean = len(fixture_samples) / count
    assert max(len(p) for p in parts) <= max(BALANCE * mean, -(-len(fixture_samples) // count))
    if count <= 3:  # whole screens fit the bound: none is cut
        assert screens_split(parts) == []


@pytest.mark.parametrize("count", COUNTS)
def test_the_default_set_keeps_every_screen_whole_within_1_2_of_the_mean(default_samples, count):
    parts = shares(default_samples, count)
    assert_partition(default_samples, parts)
    assert max(len(p) for p in parts) <= BALANCE * len(default_samples) / count
    assert screens_split(parts) == []
    assert len({s.image for s in default_samples}) < len(default_samples)  # screens do hold several samples


def test_a_screen_too_big_for_the_balance_is_cut_and_only_it():
    image = Path("/data/big.png")
    sample = Sample(dataset="d", id="x", uid="x", image=image, instruction="", bbox=Box(0, 0, 1, 1))
    big = [dataclasses.replace(sample, id=f"b{i:02}", uid=f"b{i:02}") for i in range(40)]
    small = [
        dataclasses.replace(sample, id=f"s{i:02}", uid=f"s{i:02}", image=Path(f"/data/s{i // 4}.png"))
        for i in range(40)
    ]
    parts = shares(big + small, 4)
    assert_partition(big + small, parts)
    assert max(len(p) for p in parts) <= 1.2 * 80 / 4
    assert screens_split(parts) == [("d", image)]


def test_the_plan_depends_on_the_data_not_on_where_it_lies(fixture_samples):
    moved = [dataclasses.replace(s, image=Path("/elsewhere") / s.image.relative_to(FIXTURES)) for s in fixture_samples]
    assert plan(moved, 3) == plan(fixture_samples, 3)
    assert plan(fixture_samples, 3) == plan(list(fixture_samples), 3)


@pytest.mark.parametrize(
    "env, expected",
    [
        ({"GROUNDING_SHARD": "2/4"}, (2, 4)),
        ({"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "8", "SLURM_ARRAY_TASK_MIN": "1"}, (3, 8)),
        ({"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "8", "SLURM_ARRAY_TASK_MIN": "0"}, (1, 8)),
        (
            {
                "SLURM_ARRAY_TASK_ID": "9",
                "SLURM_ARRAY_TASK_COUNT": "4",
                "SLURM_ARRAY_TASK_MIN": "3",
                "SLURM_ARRAY_TASK_STEP": "2",
            },
            (4, 4),
        ),
        ({"JOB_COMPLETION_INDEX": "0", "GROUNDING_SHARD_COUNT": "5"}, (1, 5)),
        ({"JOB_COMPLETION_INDEX": "4", "GROUNDING_SHARD_COUNT": "5"}, (5, 5)),
    ],
)
def test_k_of_n_from_the_engines_environment(env, expected):
    shard = parse_shard("env", "--grounding-shard", env)
    assert (shard.index, shard.count) == expected
    assert all(name in shard.source for name in env)


@pytest.mark.parametrize("engine, index_name, count_name, base", SCHEDULERS, ids=[row[0] for row in SCHEDULERS])
def test_each_schedulers_variables_pick_the_samples_of_k_of_n(fixture_samples, engine, index_name, count_name, base):
    """Every task of a 3-task array, with only the scheduler's own variables set (its index 0- or
    1-based as its docs say), takes exactly the samples of --grounding-shard K/3."""
    count = 3
    for k in range(1, count + 1):
        env = {index_name: str(k - 1 + base), count_name: str(count)}
        shard = parse_shard("env", "--grounding-shard", env)
        assert (shard.index, shard.count) == (k, count), engine
        assert index_name in shard.source and count_name in shard.source
        by_k_of_n = take(fixture_samples, parse_shard(f"{k}/{count}", "--grounding-shard"))
        assert [s.uid for s in take(fixture_samples, shard)] == [s.uid for s in by_k_of_n]
    past = {index_name: str(count + base), count_name: str(count)}  # one past the last task
    with pytest.raises(ValueError, match="1 <= K <= N"):
        parse_shard("env", "--grounding-shard", past)
    with pytest.raises(ValueError, match=f"needs {count_name}"):
        parse_shard("env", "--grounding-shard", {index_name: str(base)})
    with pytest.raises(ValueError, match="is not an integer"):
        parse_shard("env", "--grounding-shard", {index_name: "first", count_name: "3"})


def test_gitlab_total_without_an_index_is_not_a_shard():
    """GitLab sets CI_NODE_TOTAL=1 in every job, CI_NODE_INDEX only in a `parallel:` one: the total
    alone names no shard."""
    with pytest.raises(ValueError, match="none of GROUNDING_SHARD"):
        parse_shard("env", "--grounding-shard", {"CI_NODE_TOTAL": "1"})


def test_the_harness_own_variables_win_over_a_schedulers():
    env = {"GROUNDING_SHARD": "2/2", "CIRCLE_NODE_INDEX": "0", "CIRCLE_NODE_TOTAL": "2"}
    assert parse_shard("env", "--grounding-shard", env).index == 2


@pytest.mark.parametrize(
    "value, env, message",
    [
        ("0/3", {}, "1 <= K <= N"),
        ("4/3", {}, "1 <= K <= N"),
        ("2", {}, "is not K/N"),
        ("env", {}, "none of GROUNDING_SHARD"),
        ("env", {"JOB_COMPLETION_INDEX": "1"}, "needs GROUNDING_SHARD_COUNT"),
        ("env", {"JOB_COMPLETION_INDEX": "5", "GROUNDING_SHARD_COUNT": "5"}, "1 <= K <= N"),
        ("env", {"SLURM_ARRAY_TASK_ID": "2"}, "SLURM_ARRAY_TASK_COUNT is not"),
        (
            "env",
            {"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_COUNT": "2", "SLURM_ARRAY_TASK_MIN": "1"},
            "1 <= K <= N",
        ),
    ],
)
def test_a_bad_shard_is_a_clear_error(value, env, message):
    with pytest.raises(ValueError, match=message):
        parse_shard(value, "--grounding-shard", env)


# -- in a run -------------------------------------------------------------------------------------------

RUN_SETS = [str(FIXTURES / name) for name in ("mini", "screenspot", "harness", "cuactspot")]


def dataset_args():
    return [f"--dataset={path}" for path in RUN_SETS]


def shard_uids(project, tmp_path, count, workers):
    found = []
    for k in range(1, count + 1):
        path = tmp_path / f"shard-{k}-of-{count}.json"
        project.runpytest(
            *dataset_args(),
            "--detector",
            "center",
            "--grounding-shard",
            f"{k}/{count}",
            "--grounding-json",
            str(path),
            *workers,
        )
        document = read_json(path)
        planned = {uid for d in document["shard"]["datasets"] for uid in d["uids"]}
        scored = {r["uid"] for r in document["samples"]}
        assert (document["shard"]["index"], document["shard"]["count"]) == (k, count)
        assert scored == planned, "the shard scored other samples than it planned"
        assert sum(d["samples"] for d in document["shard"]["datasets"]) == 8 + 5 + 5 + 7
        found.append(scored)
    return found


@pytest.mark.slow
@pytest.mark.parametrize("count", [1, 2, 3, 7])
def test_shards_of_a_run_cover_it_once_serial(project, tmp_path, count):
    check_shards_of_a_run(project, tmp_path, count, [])


@pytest.mark.slow
@pytest.mark.parametrize("count", [2, 3, 7])
def test_shards_of_a_run_cover_it_once_under_xdist(project, tmp_path, count):
    check_shards_of_a_run(project, tmp_path, count, ["-n", "2"])


def check_shards_of_a_run(project, tmp_path, count, workers):
    everything = [s for path in RUN_SETS for s in load_dataset(path).samples]
    found = shard_uids(project, tmp_path, count, workers)
    assert sum(len(f) for f in found) == len(everything)
    assert set().union(*found) == {s.uid for s in everything}
    assert max(len(f) for f in found) <= bound(len(everything), count)
    by_uid = {s.uid: s for s in everything}
    screens = {}
    for k, uids in enumerate(found):
        for uid in uids:
            screens.setdefault((by_uid[uid].dataset, by_uid[uid].image), set()).add(k)
    if count <= 3:
        assert all(len(ks) == 1 for ks in screens.values()), "a screen's samples in two shards"


@pytest.mark.slow
@XDIST
def test_other_shards_samples_never_become_items(project, workers):
    full = project.runpytest(*dataset_args(), "--detector", "center", "--collect-only", "-q")
    ids = {line for line in full.outlines if "::test_grounding[" in line}
    assert len(ids) == 25
    seen = set()
    for k in (1, 2):
        result = project.runpytest(
            *dataset_args(), "--detector", "center", "--grounding-shard", f"{k}/2", "--collect-only", "-q", *workers
        )
        mine = {line for line in result.outlines if "::test_grounding[" in line}
        assert mine and mine <= ids  # the same test ids as in the whole run
        assert "deselected" not in result.stdout.str()  # never collected, not deselected
        seen |= mine
    assert seen == ids or workers  # xdist's --collect-only lists no items


@pytest.mark.slow
def test_shard_from_slurm_environment_in_a_run(project, tmp_path, monkeypatch):
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "1")
    monkeypatch.setenv("SLURM_ARRAY_TASK_COUNT", "2")
    monkeypatch.setenv("SLURM_ARRAY_TASK_MIN", "0")
    path = tmp_path / "r.json"
    result = project.runpytest(
        *dataset_args(), "--detector", "center", "--grounding-shard", "env", "--grounding-json", str(path)
    )
    assert re.search(r"grounding shard 2/2: \d+ of \d+ samples \(SLURM_ARRAY_TASK_ID=1", result.stdout.str())
    document = read_json(path)
    assert document["shard"]["index"] == 2 and document["shard"]["source"].startswith("SLURM_ARRAY_TASK_ID=1")


def test_a_bad_shard_option_is_a_usage_error(project):
    result = project.runpytest("--grounding-shard", "3/2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--grounding-shard: '3/2': K/N needs 1 <= K <= N" in result.stderr.str()
    project.makeini("[pytest]\naddopts = -p no:cacheprovider\ngrounding_shard = env\n")
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "ini grounding_shard env: none of GROUNDING_SHARD" in result.stderr.str()


@XDIST
def test_a_shards_summary_says_what_it_scores_of_each_set(project, tmp_path, workers):
    """The summary's dataset lines (not only pytest's header, hidden by -q) and the page's datasets
    table say `shard 1/2: K of N`."""
    page = tmp_path / "shard.html"
    result = project.runpytest(
        *dataset_args(), "--detector", "center", "--grounding-shard", "1/2", "-q", "--grounding-html", page, *workers
    )
    text = result.stdout.str()
    lines = [line for line in result.outlines if line.startswith("dataset ")]
    assert len(lines) == len(RUN_SETS), text
    counts = [re.search(r", shard 1/2: (\d+) of (\d+) samples", line) for line in lines]
    assert all(counts), lines
    assert sum(int(m.group(1)) for m in counts if m) < sum(int(m.group(2)) for m in counts if m)
    assert sum(int(m.group(2)) for m in counts if m) == 8 + 5 + 5 + 7
    html = page.read_text(encoding="utf-8")
    assert html.count(">shard 1/2: ") == len(RUN_SETS), re.findall(r"<td[^>]*>[^<]*of [0-9]+</td>", html)
