"""Issue 46 for answers no model gave here (a replayed file): the diagnosis after the run reads the
stored clicks' own numbers when a record holds no model answer, and `rescore --frame` re-maps those
stored clicks, so that the suggestion the diagnosis prints gives the samples back."""

import json

import pytest
from PIL import Image

from helpers import SERIAL, read_json, read_jsonl
from pytest_grounding.cli.main import main
from pytest_grounding.core import frames

SCREENS = {  # name -> size, squares
    "wide.png": ((1280, 800), [(200, 150, 240, 190), (900, 500, 940, 540), (560, 640, 600, 680)]),
    "tall.png": ((900, 1200), [(100, 900, 140, 940), (600, 300, 640, 340), (380, 560, 420, 600)]),
    "long.png": ((1400, 1000), [(150, 700, 190, 740), (1100, 180, 1140, 220), (800, 560, 840, 600)]),
}
N = sum(len(squares) for _, squares in SCREENS.values())


@pytest.fixture
def dataset(tmp_path):
    """A Pointerbench-Pro folder of plain screens and the centre of each target."""
    folder = tmp_path / "squares" / "data" / "test"
    folder.mkdir(parents=True)
    lines, centres = [], {}
    for name, ((width, height), squares) in SCREENS.items():
        Image.new("RGB", (width, height), (250, 250, 250)).save(folder / name)
        for n, (x1, y1, x2, y2) in enumerate(squares):
            sample = f"{name[:-4]}-{n}"
            centres[sample] = ((x1 + x2) / 2, (y1 + y2) / 2, width, height)
            lines.append({"file_name": name, "id": sample, "instruction": f"Press square {n}",
                          "bbox": [x1, y1, x2, y2], "answer_type": "point", "element_type": "icon",
                          "app": "Squares", "app_category": "test", "platform": "linux",
                          "image_size": [width, height]})  # fmt: skip
    (folder / "metadata.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return tmp_path / "squares", centres


def answers(centres, frame):
    """A Pointerbench-Pro predictions file whose clicks are in `frame`."""
    rows = []
    for sample, (x, y, width, height) in centres.items():
        point = [round(x / width * 1000), round(y / height * 1000)] if frame == "rel1000" else [x - 40, y - 25]
        rows.append({"id": sample, "point": point})
    return "".join(json.dumps(row) + "\n" for row in rows)


@SERIAL
@pytest.mark.parametrize("frame,suggestion", [("rel1000", "rel1000"), ("offset", "offset:40,25")])
def test_a_replayed_files_frame_is_named_and_its_suggestion_gives_the_samples_back(
    project, tmp_path, dataset, frame, suggestion, workers
):
    folder, centres = dataset
    replayed = tmp_path / "answers.jsonl"
    replayed.write_text(answers(centres, frame))
    report, predictions = tmp_path / "run.json", tmp_path / "run.jsonl"
    result = project.runpytest(
        f"--dataset={folder}", "--detector", f"replay:path={replayed}", "--grounding-json", str(report),
        "--grounding-predictions", str(predictions), "--grounding-misses", "xfail", *workers,
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-3000:]
    (block,) = read_json(report)["summary"].values()
    assert block["hits"] == 0
    finding = block["diagnosis"]["frame"]
    assert (finding["name"], finding["suggestion"]) == (frame, ["--frame", suggestion]), finding
    for source in (predictions, report):
        out = tmp_path / f"rescored-{source.suffix[1:]}.json"
        assert main(["rescore", str(source), *finding["suggestion"], "--json", str(out)]) == 0
        rescored = read_json(out)
        (again,) = rescored["summary"].values()
        assert again["hits"] == again["scored"] == N, source
        assert again["diagnosis"]["frame"]["name"] == "as-preset"
        assert any(f"their stored clicks read in frame {suggestion}" in note for note in rescored["notes"])
        twice = tmp_path / "twice.json"  # the stored numbers kept: a second rescore is no second re-map
        assert main(["rescore", str(out), *finding["suggestion"], "--json", str(twice)]) == 0
        (again,) = read_json(twice)["summary"].values()
        assert again["hits"] == N
    assert len(read_jsonl(predictions)) == N


def test_the_diagnosis_reads_a_stored_clicks_numbers_only_without_a_model_answer():
    replayed = {"task": "grounding", "target": [100, 100, 140, 120], "image_size": [1000, 1000], "point": [120, 110],
                "outcome": "miss", "meta": {"replay_row": 3}}  # fmt: skip
    assert frames.answer_of(replayed).values == (120.0, 110.0)
    model = {**replayed, "meta": {"model_image": [1008, 1008]}}
    assert frames.answer_of(model).values is None  # a VLM's record without its numbers: none made up
    coordinates = {**replayed, "meta": {"model_coordinates": [50, 60]}}
    assert frames.answer_of(coordinates).values == (50.0, 60.0)
