"""Hostile inputs (issue 52; docs/security.md says what each class guarantees). What a run publishes: exports
carry the benchmark's own samples (never a variant, an epoch or a local path), a selection is never published
as the benchmark, and a sweep's parameters beyond any screen are refused by name.
"""

import json

import pytest

from helpers import FIXTURES, SERIAL, read_json
from pytest_grounding.cli.main import main

PRO, MINI = str(FIXTURES / "screenspot-pro"), str(FIXTURES / "mini")


def _run(project, tmp_path, *args, workers=(), name="run.json"):
    report = tmp_path / name
    project.runpytest("--dataset", PRO, "--grounding-json", str(report), *args, *workers)
    assert report.is_file()
    return report


# --- exports publish the benchmark's own samples, never a variant, an epoch or a local path ---------------------


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
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
