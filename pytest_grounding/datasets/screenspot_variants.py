"""ScreenSpot-v2-variants (likaixin/ScreenSpot-v2-variants): ScreenSpot-v2 in the ScreenSpot-Pro
schema, one file per platform, in either of the two layouts seen: `{mobile,desktop,web}.json` +
`imgs/`, or `annotations/*.json` + `images/`.

Row: img_filename, bbox **[x1, y1, x2, y2]** px, instruction, action, decription (sic; "description"
is read too), negative_instruction, negative_action, negative_description, application, id, ui_type,
platform, img_size. Every style a row carries becomes its own sample, its id suffixed by the style
(`-k negative` selects one): instruction, action, description (from `decription`) and negative
(from `negative_instruction`, the element absent: a refusal is the right answer). The official
evaluator reads only `instruction`; which field each style asks is this loader's choice.
"""

from __future__ import annotations

from pathlib import Path

from ._common import DatasetError, DatasetRoot, Format, Loaded, read_json
from .rows import Row, RowSchema, json_rows, sample_of

PLATFORM_FILES = ("desktop.json", "mobile.json", "web.json")
STYLE_FIELDS = (  # style -> the fields that hold it, first present wins
    ("instruction", ("instruction",)),
    ("action", ("action",)),
    ("description", ("decription", "description")),
    ("negative", ("negative_instruction",)),
)
MARKERS = ("decription", "negative_instruction", "negative_action", "negative_description")


def _extra(row: Row) -> dict:
    style, platform = row.context["style"], row.context["platform"]
    benchmark = {"name": "screenspot-v2-variants", "style": style, "platform": platform}
    benchmark["ui_type"] = str(row.fields.get("ui_type"))
    return {"source_file": row.context["source_file"], "benchmark": benchmark}


# One sample per style a row carries: the reader gives each its text and its id `<id>-<style>`.
SCHEMA = RowSchema(
    name="screenspot-v2-variants",
    image="img_filename",
    instruction=lambda row: row.context["text"],
    corners="swap",
    element_type="ui_type",
    app="application",
    app_category=lambda row: row.context["style"],
    platform=lambda row: row.context["platform"],
    image_size="img_size",
    absent=lambda row: row.context["style"] == "negative",
    extra=_extra,
)


def looks_like_variants(file: Path) -> bool:
    """A row with the variants' own fields (what tells this schema from plain ScreenSpot-Pro)."""
    try:
        rows = read_json(file)
    except DatasetError:
        return False
    return isinstance(rows, list) and any(isinstance(r, dict) and any(m in r for m in MARKERS) for r in rows[:5])


def annotation_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path] if path.suffix == ".json" and looks_like_variants(path) else []
    candidates = [path / name for name in PLATFORM_FILES if (path / name).is_file()]
    if not candidates and (path / "annotations").is_dir():
        candidates = sorted((path / "annotations").glob("*.json"))
    return candidates if candidates and looks_like_variants(candidates[0]) else []


def image_folder(root: Path) -> Path:
    for name in ("imgs", "images"):
        if (root / name).is_dir():
            return root / name
    return root / "imgs"


def load(path: Path) -> Loaded:
    files = annotation_files(path)
    if not files:
        expected = f"{', '.join(PLATFORM_FILES)} or annotations/*.json"
        raise DatasetError(f"{path}: no ScreenSpot-v2-variants files ({expected})")
    root_folder = files[0].parent.parent if files[0].parent.name == "annotations" else files[0].parent
    images = image_folder(root_folder)
    root = DatasetRoot(root_folder)
    problems: list[str] = []
    samples = []
    for file in files:
        for index, row in json_rows(file, "img_filename"):
            base_id = str(row.get("id") or f"{file.stem}_{index:04d}")
            image = images / row["img_filename"]
            platform = str(row.get("platform") or file.stem)
            styles = [
                (style, next((row[f] for f in fields if isinstance(row.get(f), str) and row[f].strip()), None))
                for style, fields in STYLE_FIELDS
            ]
            for style, text_value in styles:
                if text_value is None:
                    continue
                context = {"style": style, "text": text_value, "platform": platform, "source_file": file.name}
                found = Row(row, f"{base_id}-{style}", image, row["img_filename"], context)
                samples.append(sample_of(found, SCHEMA, root, problems))
    return Loaded(name="screenspot-v2-variants", samples=samples, files=files, problems=problems)


FORMAT = Format("screenspot-v2-variants", sniff=lambda p: bool(annotation_files(p)), load=load)
