"""Hugging Face tables: `hf:SOURCE[:SPLIT][:key=value...]`, SOURCE a hub name (through the `datasets`
library) or a local folder / file of `*.parquet` or `*.arrow` (read with pyarrow, memory-mapped).
A folder of parquet or arrow files is also recognised without the prefix.

Which column holds what, and the bbox convention, come from `hf_columns` (by the mirror's name, a
`mapping=` option or the column layout; never guessed from values); a benchmark's mirror
(OSWorld-G) has each row converted by that benchmark loader's own rules, and the hub repositories
that publish files (hf_files) are read by their formats. Screenshots embedded in the
table are written once to `$PYTEST_GROUNDING_CACHE/hf/<fingerprint>/` (a temporary folder renamed
into place: concurrent xdist workers never see half of it); later loads read its manifest only.
Images are never decoded here: only their header is read, for the size normalized boxes need.
The `hf` extra (datasets, pyarrow) is imported lazily.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import io
import json
import os
import re
import shutil
import socket
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from ..core import safejson
from ..core.cache import cache_root as core_cache_root
from ..core.types import Box
from . import hf_columns, hf_files, osworld_g
from ._common import PLACEHOLDER_BOX, DatasetError, DatasetRoot, Format, Loaded, build_sample, four_numbers, size_of
from .hf_columns import ColumnMap, MappingError

TABLE_SUFFIXES = (".parquet", ".arrow")
SHARD = re.compile(r"^(?P<split>.+?)-\d{5}-of-\d{5}$")
HUB_NAME = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
MANIFEST = "manifest.json"
MANIFEST_VERSION = 1
CONNECT_TIMEOUT_S = 5.0
INSTALL_HINT = "the hf extra is not installed: pip install 'pytest-grounding[hf]'"
CLASSIFICATION = "classification"  # OSWorld-G's classification_result.json, beside a mirror of its rows


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.ipc
        import pyarrow.parquet
    except ImportError:
        raise DatasetError(INSTALL_HINT) from None
    return pyarrow


# ---- the spec ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Spec:
    source: str
    split: str | None
    options: dict[str, str]


def parse_spec(raw: str) -> Spec:
    """`SOURCE[:SPLIT][:key=value...]`; a Windows drive letter (`C:\\data`) stays in SOURCE."""
    parts = raw.split(":")
    if len(parts) > 1 and len(parts[0]) == 1 and parts[1][:1] in ("\\", "/"):
        parts = [parts[0] + ":" + parts[1], *parts[2:]]
    source, rest = parts[0], parts[1:]
    plain = [p for p in rest if "=" not in p]
    options = dict(p.split("=", 1) for p in rest if "=" in p)
    if not source or len(plain) > 1:
        raise DatasetError(f"hf:{raw}: expected hf:SOURCE[:SPLIT][:key=value...]")
    return Spec(source, plain[0] if plain and plain[0] else None, options)


def mapping_file_options(options: dict[str, str], base: Path | None) -> dict[str, str]:
    """`mapping=FILE.json`: a team's own mapping kept in a file, `{"image": "screenshot", "box":
    "xywh", ...}` (the spec's option names; "mapping" may name a built-in one to start from).
    Options given in the spec win over the file's."""
    value = options.get("mapping", "")
    if not value.endswith(".json"):
        return options
    file = Path(value).expanduser()
    if base is not None and not file.is_absolute():
        file = base / file
    try:
        fields = safejson.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DatasetError(f"mapping file {file}: cannot read: {exc}") from None
    allowed = {"mapping", *hf_columns.FIELD_OPTIONS}
    if not isinstance(fields, dict) or not all(isinstance(v, str) for v in fields.values()):
        raise DatasetError(f'mapping file {file}: expected an object of column names, e.g. {{"image": "img"}}')
    unknown = sorted(set(fields) - allowed)
    if unknown:
        raise DatasetError(
            f"mapping file {file}: unknown key(s) {', '.join(unknown)}; keys: {', '.join(sorted(allowed))}"
        )
    merged = {**fields, **{k: v for k, v in options.items() if k != "mapping"}}
    if "mapping" in fields and fields["mapping"].endswith(".json"):
        raise DatasetError(f'mapping file {file}: "mapping" names a built-in mapping, not another file')
    return merged


# ---- finding the table files ---------------------------------------------------------------


def table_files(path: Path) -> list[Path]:
    """Parquet / arrow files of a file or a folder, up to three levels down (`data/test-*.parquet`,
    `default/test/0000.parquet`, a DatasetDict saved to disk)."""
    if path.is_file():
        return [path] if path.suffix in TABLE_SUFFIXES else []
    if not path.is_dir():
        return []
    found: set[Path] = set()
    for pattern in ("", "*/", "*/*/"):
        for suffix in TABLE_SUFFIXES:
            found.update(path.glob(f"{pattern}*{suffix}"))
    return sorted(
        f
        for f in found
        if not f.name.startswith(("cache-", ".")) and not any(p.startswith(".") for p in f.relative_to(path).parts)
    )


def split_of(file: Path, root: Path) -> str | None:
    """`test-00000-of-00002.parquet` -> test; `train/data-00000-of-00001.arrow` and
    `default/train/0000.parquet` -> train; a lone `table.parquet` -> None."""
    match = SHARD.match(file.stem)
    if match and match["split"] != "data":
        return match["split"]
    folders = [] if file == root else [d for d in file.relative_to(root).parts[:-1] if d != "data"]
    return folders[-1] if folders else None


def choose_split(files: list[Path], root: Path, split: str | None, where: str) -> tuple[list[Path], str | None]:
    splits = {f: split_of(f, root) for f in files}
    names = sorted({s for s in splits.values() if s})
    if split is not None:
        chosen = [f for f in files if splits[f] == split]
        if not chosen:
            raise DatasetError(f"{where}: no split {split!r} (splits here: {', '.join(names) or 'none named'})")
        return chosen, split
    if len(names) > 1:
        raise DatasetError(f"{where}: holds splits {', '.join(names)}: name one, hf:{root}:SPLIT")
    return files, (names[0] if names else None)


def sniff(path: Path) -> bool:
    return bool(table_files(path))


# ---- reading -------------------------------------------------------------------------------


def read_table(file: Path, columns: Sequence[str] | None = None):
    """One parquet or arrow file as a pyarrow Table (arrow: memory-mapped, stream or file format)."""
    pa = _pyarrow()
    try:
        if file.suffix == ".parquet":
            return pa.parquet.read_table(file, columns=list(columns) if columns is not None else None, memory_map=True)
        source = pa.memory_map(str(file))
        try:
            table = pa.ipc.open_stream(source).read_all()
        except pa.ArrowInvalid:
            table = pa.ipc.open_file(source).read_all()
        return table.select(list(columns)) if columns is not None else table
    except (OSError, pa.ArrowException) as exc:
        raise DatasetError(f"{file}: cannot read as {file.suffix[1:]}: {exc}") from None


def schema_of(file: Path):
    pa = _pyarrow()
    try:
        if file.suffix == ".parquet":
            return pa.parquet.read_schema(file, memory_map=True)
        return read_table(file).schema  # memory-mapped: no column is read
    except (OSError, pa.ArrowException) as exc:
        raise DatasetError(f"{file}: cannot read as {file.suffix[1:]}: {exc}") from None


def embedded(field_type) -> bool:
    """An image column holding bytes: the datasets Image feature (struct of bytes, path) or binary."""
    pa = _pyarrow()
    if pa.types.is_struct(field_type):
        return field_type.get_field_index("bytes") >= 0
    return bool(pa.types.is_binary(field_type) or pa.types.is_large_binary(field_type))


def image_batches(file: Path, column: str, rows: int = 32) -> Iterator[list[Any]]:
    """The image column in small batches (a parquet file of screenshots is gigabytes)."""
    pa = _pyarrow()
    try:
        if file.suffix == ".parquet":
            for batch in pa.parquet.ParquetFile(file, memory_map=True).iter_batches(batch_size=rows, columns=[column]):
                yield batch.column(0).to_pylist()
        else:
            array = read_table(file, [column]).column(0)
            for start in range(0, len(array), rows):
                yield array.slice(start, rows).to_pylist()
    except (OSError, pa.ArrowException) as exc:
        raise DatasetError(f"{file}: cannot read column {column!r}: {exc}") from None


# ---- the image cache -----------------------------------------------------------------------


def cache_root() -> Path:
    return core_cache_root() / "hf"


MAGIC = ((b"\x89PNG", ".png"), (b"\xff\xd8", ".jpg"), (b"GIF8", ".gif"), (b"BM", ".bmp"))


def suffix_of(data: bytes, hint: Any) -> str:
    if isinstance(hint, str) and Path(hint).suffix.lower() in (".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp"):
        return Path(hint).suffix.lower()
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ".webp"
    return next((ext for magic, ext in MAGIC if data.startswith(magic)), ".img")


def header_size(data: bytes) -> list[int] | None:
    """The image's size from its header (Pillow reads no pixels until asked)."""
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as image:
            return list(image.size)
    except Exception:  # Pillow raises many types for bad bytes; validate reports the file
        return None


def extract_images(files: Sequence[Path], column: str, folder: Path) -> list[Any]:
    """Per row: [file name, width, height] (width/height None when the header is unreadable), or
    {"path": P} for a row that refers to a file instead of holding bytes, or None (no image).
    Each distinct screenshot is written once, named by its digest."""
    manifest = folder / MANIFEST
    if manifest.is_file():
        return read_manifest(manifest)
    folder.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        rows: list[Any] = []
        written: dict[str, list[Any]] = {}
        for file in files:
            for batch in image_batches(file, column):
                for value in batch:
                    data, hint = (value.get("bytes"), value.get("path")) if isinstance(value, dict) else (value, None)
                    if not data:
                        rows.append({"path": hint} if isinstance(hint, str) and hint else None)
                        continue
                    digest = hashlib.sha256(data).hexdigest()[:24]
                    if digest not in written:
                        name = digest + suffix_of(data, hint)
                        (scratch / name).write_bytes(data)
                        size = header_size(data)
                        written[digest] = [name, *(size or (None, None))]
                    rows.append(written[digest])
        (scratch / MANIFEST).write_text(json.dumps({"version": MANIFEST_VERSION, "rows": rows}))
        try:
            os.rename(scratch, folder)
        except OSError:  # another process (an xdist worker) renamed its copy first
            if not manifest.is_file():
                raise
    finally:
        if scratch.exists():
            shutil.rmtree(scratch, ignore_errors=True)
    return read_manifest(manifest)


def read_manifest(manifest: Path) -> list[Any]:
    try:
        document = safejson.loads(manifest.read_text())
        if document.get("version") != MANIFEST_VERSION or not isinstance(document.get("rows"), list):
            raise ValueError(f"not a version {MANIFEST_VERSION} manifest")
    except (OSError, ValueError, AttributeError) as exc:
        raise DatasetError(f"{manifest}: unreadable image cache ({exc}); delete {manifest.parent}") from None
    return document["rows"]


# ---- rows to samples -----------------------------------------------------------------------


def _value(raw: Any) -> Any:
    """Some mirrors keep lists as JSON text ("[1, 2, 3, 4]")."""
    if isinstance(raw, str) and raw.strip().startswith("["):
        try:
            return safejson.loads(raw)
        except ValueError:
            return raw
    return raw


def truthy(raw: Any) -> bool:
    if isinstance(raw, str):
        return raw.strip().lower() in ("1", "true", "yes", "negative", "absent")
    return bool(raw)


def convert_box(raw: Any, mapping: ColumnMap, size: tuple[int, int] | None) -> tuple[Box | None, str | None]:
    """The row's box in absolute pixels x1 y1 x2 y2, or a reason it has none."""
    numbers = four_numbers(_value(raw))
    if numbers is None:
        return None, None  # build_sample names the unusable value
    box = Box.from_xywh(*numbers) if mapping.box == "xywh" else Box(*numbers)
    if mapping.units == "normalized":
        if not all(-0.01 <= v <= 1.01 for v in numbers):
            return None, (
                f"bbox {list(numbers)} is not in 0-1 fractions, as mapping {mapping.name} says this column is "
                "(give units=px in the spec if the table holds pixels)"
            )
        if size is None:
            return None, f"bbox {list(numbers)} is normalized and the image size is unknown (no size column, no header)"
        box = Box.from_normalized(box.x1, box.y1, box.x2, box.y2, *size)
    return box, None


@dataclass(frozen=True)
class Table:
    name: str  # the dataset's name
    path: Path  # what the dataset is called by
    files: list[Path]
    split: str | None
    hub_name: str | None  # a hub name picks its mirror's mapping
    base: Path | None  # the folder relative image paths are inside


def load_table(table: Table, options: dict[str, str]) -> Loaded:
    where = f"hf:{table.hub_name or table.path}"
    schemas = {f: schema_of(f) for f in table.files}
    columns = list(schemas[table.files[0]].names)
    options = dict(options)
    classification = options.pop(CLASSIFICATION, None)
    try:
        mapping = hf_columns.choose(columns, options, table.hub_name, where)
    except MappingError as exc:
        raise DatasetError(str(exc)) from None
    classes: dict[str, list[str]] = {}
    class_files: list[Path] = []
    if classification:
        if mapping.rows != "osworld-g":
            raise DatasetError(f"{where}: {CLASSIFICATION}= is OSWorld-G's categories file; mapping {mapping.name}")
        class_files = [Path(classification)]
        classes = osworld_g.read_categories(class_files[0])
    wanted = [*mapping.required(), *mapping.optional()]
    for file, schema in schemas.items():
        missing = [c for c in dict.fromkeys(wanted) if c not in schema.names]
        if missing:
            raise DatasetError(f"{file}: no column(s) {', '.join(missing)} (the first file has them)")
    annotations = [c for c in dict.fromkeys(wanted) if c != mapping.image]
    values: dict[str, list[Any]] = {c: [] for c in annotations}
    origin: list[tuple[Path, int]] = []  # row -> (file, row within the file)
    paths_column: list[Any] = []
    holds_bytes = embedded(schemas[table.files[0]].field(mapping.image).type)
    for file in table.files:
        read = read_table(file, annotations if holds_bytes else [*annotations, mapping.image])
        for column in annotations:
            values[column].extend(read.column(column).to_pylist())
        if not holds_bytes:
            paths_column.extend(read.column(mapping.image).to_pylist())
        origin.extend((file, i) for i in range(read.num_rows))
    # What the samples depend on: the mapping's columns and convention (not its name or prose), the
    # split, the files' names and sizes, the annotation values. Not gigabytes of image bytes.
    conversion = [(f, getattr(mapping, f)) for f in (*hf_columns.FIELD_OPTIONS, "rows")]
    digest = hashlib.sha256(f"{conversion}\0{table.split}".encode())
    digest.update(json.dumps(classes, sort_keys=True).encode())
    for file in table.files:
        digest.update(f"{file.name}\0{file.stat().st_size}\0".encode())
    digest.update(json.dumps(values, sort_keys=True, default=str).encode())
    fingerprint = digest.hexdigest()[:16]
    if holds_bytes:
        extracted = cache_root() / fingerprint
        images: list[Any] = extract_images(table.files, mapping.image, extracted)
        image_dir: Path | None = extracted
        if len(images) != len(origin):
            raise DatasetError(f"{extracted}: image cache has {len(images)} rows, the table {len(origin)}; delete it")
    else:
        images = [{"path": p} if isinstance(p, str) and p else None for p in paths_column]
        image_dir = None
    problems: list[str] = []
    root = DatasetRoot(table.base) if table.base is not None else None
    samples = []
    for index, (file, row_in_file) in enumerate(origin):
        row = {c: values[c][index] for c in annotations}
        samples.append(
            _sample(index, file, row_in_file, row, images[index], mapping, table, root, image_dir, problems, classes)
        )
    return Loaded(
        name=table.name,
        samples=samples,
        files=[*table.files, *class_files],
        problems=problems,
        path=table.path,
        fingerprint=fingerprint,
    )


@functools.lru_cache(maxsize=65536)
def _child(folder: Path | None, name: str) -> Path:
    """One Path object per screen, however many rows share it (a Path costs microseconds to make)."""
    return Path(folder or ".") / name


@functools.lru_cache(maxsize=4096)
def _file_size(path: Path) -> tuple[int, int] | None:
    """A referenced file's size from its header, once per screen."""
    from PIL import Image

    try:
        with Image.open(path) as image:
            return (int(image.size[0]), int(image.size[1]))
    except Exception:  # missing or undecodable: validate and the run report it
        return None


def _sample(
    index: int,
    file: Path,
    row_in_file: int,
    row: dict[str, Any],
    image: Any,
    mapping: ColumnMap,
    table: Table,
    root: DatasetRoot | None,
    image_dir: Path | None,
    problems: list[str],
    classes: dict[str, list[str]],
):
    where = f"row {row_in_file} of {file.name}"
    raw_id = row.get(mapping.id) if mapping.id else None
    sample_id = str(raw_id) if raw_id not in (None, "") else f"{table.split or 'row'}_{index:05d}"
    size = size_of(_value(row.get(mapping.image_size))) if mapping.image_size else None
    image_defect = None
    raw_image: Any = None
    if isinstance(image, list):  # extracted: [name, width, height]
        path = _child(image_dir, image[0])
        if size is None and image[1]:
            size = (int(image[1]), int(image[2]))
        check_root = None
    elif isinstance(image, dict):  # a file the row refers to
        raw_image = image["path"]
        base = table.base or table.path
        path = _child(base, raw_image)
        check_root = root
        if size is None and mapping.units == "normalized" and path.is_file():
            size = _file_size(path)
    else:
        path, check_root = (image_dir or table.path) / f"{sample_id}.missing", None
        image_defect = f"{where}: no image (column {mapping.image!r} holds neither bytes nor a path)"
    if mapping.rows == "osworld-g":  # the benchmark's own row rules
        origin_fields: dict[str, Any] = {"source_file": file.name, "row": row_in_file}
        if table.split:
            origin_fields["split"] = table.split
        fields = {
            "instruction": row.get(mapping.instruction),
            "box_type": row.get(mapping.box_type),  # type: ignore[arg-type]
            "box_coordinates": _value(row.get(mapping.bbox)),
            "image_size": list(size) if size else None,
            "GUI_types": _value(row.get(mapping.gui_types)) if mapping.gui_types else None,
        }
        sample = osworld_g.sample_from_row(
            fields,
            sample_id=sample_id,
            image=path,
            root=check_root,
            raw_image=raw_image,
            problems=problems,
            classes=classes,
            variant=mapping.instruction,  # which text the column holds is the mirror's (docs/huggingface.md)
            extra=origin_fields,
        )
        defect = image_defect or (f"{where}: {sample.defect}" if sample.defect else None)
        return dataclasses.replace(sample, defect=defect) if defect != sample.defect else sample
    negative = bool(mapping.negative) and truthy(row.get(mapping.negative))  # type: ignore[arg-type]
    raw_box = row.get(mapping.bbox)
    box, box_defect = convert_box(raw_box, mapping, size)
    if negative and box is None:  # an absent target has no box to score against
        box, box_defect = PLACEHOLDER_BOX, None
    extra: dict[str, Any] = {"source_file": file.name, "row": row_in_file}
    if table.split:
        extra["split"] = table.split
    if negative:
        extra["negative"] = True
    if mapping.instruction_cn:  # kept as the screenspot-pro format keeps it, for --grounding-language cn
        extra["instruction_cn"] = row.get(mapping.instruction_cn)
    sample = build_sample(
        sample_id=sample_id,
        image=path,
        root=check_root,
        raw_image=raw_image,
        instruction=row.get(mapping.instruction),
        box=box,
        raw_box=raw_box,
        problems=problems,
        element_type=row.get(mapping.element_type) if mapping.element_type else None,
        app=row.get(mapping.app) if mapping.app else None,
        app_category=row.get(mapping.app_category) if mapping.app_category else None,
        platform=row.get(mapping.platform) if mapping.platform else None,
        image_size=size,
        extra=extra,
    )
    defect = image_defect or (f"{where}: {box_defect}" if box_defect else None)
    absent_box = negative and box is PLACEHOLDER_BOX and str(sample.defect).startswith("degenerate bbox")
    if defect is None and sample.defect and not absent_box:
        defect = f"{where}: {sample.defect}"
    if defect != sample.defect:
        sample = dataclasses.replace(sample, defect=defect)
    return sample


# ---- sources: a local folder or file, a hub name ---------------------------------------------


def load(path: Path) -> Loaded:
    """A folder or file of parquet / arrow tables recognised without the `hf:` prefix."""
    return load_local(path, None, {})


def open_spec(raw: str, base: Path | None) -> Loaded:
    spec = parse_spec(raw)
    spec = dataclasses.replace(spec, options=mapping_file_options(spec.options, base))
    if spec.options.get(CLASSIFICATION):  # a file, relative as the mapping file is
        file = Path(spec.options[CLASSIFICATION]).expanduser()
        file = base / file if base is not None and not file.is_absolute() else file
        spec = dataclasses.replace(spec, options={**spec.options, CLASSIFICATION: str(file.resolve())})
    local = Path(spec.source).expanduser()
    if base is not None and not local.is_absolute():
        local = base / local
    if local.exists():
        return load_local(local.resolve(), spec.split, spec.options)
    if HUB_NAME.match(spec.source) and not spec.source.startswith((".", "/")):
        return load_hub(spec.source, spec.split, spec.options)
    raise DatasetError(f"hf:{raw}: {local} does not exist and {spec.source!r} is not a hub name (OWNER/NAME)")


def load_local(path: Path, split: str | None, options: dict[str, str]) -> Loaded:
    files = table_files(path)
    if not files:
        raise DatasetError(f"{path}: no *.parquet or *.arrow files")
    root = path if path.is_dir() else path.parent
    files, split = choose_split(files, root, split, f"hf:{path}")
    name = root.name if root.name not in ("data", split) else root.parent.name
    return load_table(Table(name, path, files, split, None, root), options)


def load_hub(name: str, split: str | None, options: dict[str, str]) -> Loaded:
    repository = hf_files.repository_of(name)
    if repository is not None:  # JSON files and images, not a table: the format made for them reads them
        if options or (split is not None and split != repository.split):
            given = ":".join([*([split] if split else []), *(f"{k}={v}" for k, v in options.items())])
            raise DatasetError(
                f"hf:{name}:{given}: this repository publishes files, read by the {repository.format} format "
                f"as published ({'split ' + repository.split if repository.split else 'no split'}); "
                "column options and other splits do not apply"
            )
        ensure_reachable(name)
        return hf_files.load_repository(name, repository, cache_root())
    mirror = hf_columns.mirror_of(name)
    split = split or (mirror[1] if mirror else None)
    try:
        import datasets
    except ImportError:
        raise DatasetError(f"hf:{name}: {INSTALL_HINT}") from None
    ensure_reachable(name)
    try:
        loaded = datasets.load_dataset(name, split=split)
    except Exception as exc:  # the hub client raises many types (HTTP, not found, gated, offline)
        raise DatasetError(f"hf:{name}{':' + split if split else ''}: {type(exc).__name__}: {exc}") from None
    if isinstance(loaded, datasets.DatasetDict):
        if len(loaded) != 1:
            raise DatasetError(f"hf:{name}: holds splits {', '.join(loaded)}: name one, hf:{name}:SPLIT")
        split, loaded = next(iter(loaded.items()))
    files = [Path(entry["filename"]) for entry in loaded.cache_files]
    if not files:
        raise DatasetError(f"hf:{name}: the datasets library kept no arrow files for it (an in-memory dataset)")
    table = Table(name.split("/")[-1], files[0].parent, files, split, name, None)
    return load_table(table, options)


def ensure_reachable(name: str) -> None:
    """A hub name without network fails in seconds with a message, not after minutes of retries.
    With HF_HUB_OFFLINE=1 the datasets library answers from its cache."""
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes") or os.environ.get(
        "HF_DATASETS_OFFLINE", ""
    ).lower() in ("1", "true", "yes"):
        return
    endpoint = urlparse(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    host, port = endpoint.hostname or "huggingface.co", endpoint.port or (80 if endpoint.scheme == "http" else 443)
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise DatasetError(
            f"hf:{name}: cannot reach {host}:{port} ({exc}); a hub name needs the network the first time. "
            "Offline: set HF_HUB_OFFLINE=1 to use what the datasets library already downloaded, or download "
            "the parquet files and pass their folder (hf:path/to/folder[:SPLIT])"
        ) from None


FORMAT = Format("hf", sniff=sniff, load=load, open=open_spec)
