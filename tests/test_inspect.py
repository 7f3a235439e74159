"""The Inspect task on the plugin's scorer (issue 58): `inspect eval pytest_grounding/grounding`
against a model that sees the screenshot (tests/seeing_model.py, an OpenAI-compatible loopback)
gives the same per-sample verdicts, accuracy and interval as `pytest suites/` against that model
on the same samples. Skipped without the `inspect` extra (inspect_ai) and the `openai` one."""

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tomllib
from PIL import Image
from seeing_model import COLOURS, SeeingModel

from helpers import REPO, read_json

needs_inspect = pytest.mark.skipif(
    importlib.util.find_spec("inspect_ai") is None, reason="the inspect extra is not installed"
)
needs_model = pytest.mark.skipif(
    any(importlib.util.find_spec(name) is None for name in ("inspect_ai", "openai", "ui_tars")),
    reason="the inspect extra (inspect_ai, openai) and the openai extra (ui-tars) are needed",
)

PRESET = "uitars-1.5-point"
# name -> size, {colour: square}; each screen is also asked for a colour it lacks (a miss: the model
# answers (1,1)) and one square's box is shifted off it (a miss the model cannot avoid)
SCREENS = {
    "wide.png": ((1280, 800), {"red": (200, 150, 240, 190), "blue": (900, 500, 940, 540)}),
    "tall.png": ((900, 1200), {"green": (100, 900, 140, 940), "red": (600, 300, 640, 340)}),
}


@pytest.fixture
def dataset(tmp_path):
    folder = tmp_path / "squares" / "data" / "test"
    folder.mkdir(parents=True)
    lines = []
    for name, ((width, height), found) in SCREENS.items():
        pixels = np.full((height, width, 3), 250, np.uint8)
        for colour, (x1, y1, x2, y2) in found.items():
            pixels[y1:y2, x1:x2] = COLOURS[colour]
        Image.fromarray(pixels).save(folder / name)
        absent = next(c for c in COLOURS if c not in found)
        asks = [(c, box) for c, box in found.items()] + [(absent, (10, 10, 50, 50))]
        asks[0] = (asks[0][0], (asks[0][1][0] + 100, asks[0][1][1], asks[0][1][2] + 100, asks[0][1][3]))
        for colour, box in asks:
            lines.append(
                {
                    "file_name": name, "id": f"{name[:-4]}-{colour}", "instruction": f"Press the {colour} square",
                    "bbox": list(box), "answer_type": "point", "eval": {"type": "point_in_bbox", "bbox": list(box)},
                    "element_type": "icon", "app": "Squares", "app_category": "test", "platform": "linux",
                    "image_size": [width, height],
                }
            )  # fmt: skip
    (folder / "metadata.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return tmp_path / "squares"


@pytest.fixture
def model():
    served = SeeingModel("right")
    yield served
    served.close()


def entry_point_path(tmp_path):
    """Where `inspect eval pytest_grounding/grounding` finds the task: the installed metadata's
    `inspect_ai` entry point, or (a checkout not reinstalled since) a dist-info made here from
    pyproject.toml's own declaration."""
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"]["inspect_ai"]
    assert declared == {"pytest_grounding": "pytest_grounding.inspect._registry"}
    from importlib.metadata import entry_points

    if any(e.name == "pytest_grounding" for e in entry_points(group="inspect_ai")):
        return None
    info = tmp_path / "ep" / "pytest_grounding_inspect-0.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pytest-grounding-inspect\nVersion: 0.0\n")
    lines = "".join(f"{k} = {v}\n" for k, v in declared.items())
    (info / "entry_points.txt").write_text(f"[inspect_ai]\n{lines}")
    return info.parent


@pytest.mark.slow
@needs_model
def test_inspect_eval_gives_the_pytest_runs_verdicts(project, tmp_path, dataset, model):
    report = tmp_path / "run.json"
    spec = f"openai:base_url={model.url},model=seeing,preset={PRESET}"
    result = project.runpytest(f"--dataset={dataset}", "--detector", spec, "--grounding-json", str(report),
                               "--grounding-misses", "xfail")  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-2000:]
    document = read_json(report)
    ours = {r["uid"]: r["outcome"] for r in document["samples"]}
    assert sorted(set(ours.values())) == ["hit", "miss"], ours

    env = {**os.environ, "INSPECT_LOG_DIR": str(tmp_path / "logs"), "OPENAI_API_KEY": "none"}
    extra = entry_point_path(tmp_path)
    if extra is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(extra), env.get("PYTHONPATH")) if p)
    run = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "eval", "pytest_grounding/grounding", "-T", f"dataset={dataset}",
         "-T", f"preset={PRESET}", "--model", "openai/seeing", "--model-base-url", model.url, "--log-format", "json",
         "--no-log-images", "--display", "plain", "--max-connections", "2", "-M", "responses_api=false"],
        capture_output=True, text=True, env=env, timeout=240, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    (log,) = (tmp_path / "logs").glob("*.json")
    found = json.loads(log.read_text())
    assert found["status"] == "success", found.get("error")
    theirs = {s["id"]: s["scores"]["point_in_box"]["metadata"]["outcome"] for s in found["samples"]}
    assert theirs == ours
    (scores,) = found["results"]["scores"]
    metrics = {name: m["value"] for name, m in scores["metrics"].items()}
    (block,) = document["summary"].values()
    assert metrics["accuracy"] == pytest.approx(block["accuracy"])
    assert [metrics["ci95_lower"], metrics["ci95_upper"]] == pytest.approx(block["ci95"])
    # the same words and screen were asked: each instruction went to the model twice (pytest, inspect)
    asked = [a for a in model.asked if "square" in a and "Click the red square." not in a]
    assert len(asked) == 2 * len(ours)


def test_the_core_install_imports_the_package_without_inspect_ai():
    code = "import sys; sys.modules['inspect_ai'] = None; import pytest_grounding.inspect as m; print(m.__all__)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0 and "grounding" in done.stdout, done.stderr


@pytest.mark.slow  # 3 s or more under load: the fast tier keeps quicker tests
@needs_inspect
def test_the_task_reads_a_dataset_the_plugin_reads_with_its_limit_preset_and_profile():
    from pytest_grounding.inspect import grounding

    task = grounding(dataset=str(REPO / "fixtures" / "screenspot-pro"), limit=2, preset="uitars-1.5-point")
    assert len(task.dataset) == 2
    assert task.metadata == {"preset": "uitars-1.5-point", "scoring_profile": "pixel"}
    assert task.config.max_tokens == 128 and task.config.temperature == 0
    with pytest.raises(ValueError, match="unknown scoring profile"):
        grounding(dataset=str(REPO / "fixtures" / "screenspot-pro"), scoring="nosuch")
