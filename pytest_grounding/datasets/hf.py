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
import json
import os
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from ..core import safejson
from . import hf_columns, hf_files, osworld_g
from ._common import DatasetError, DatasetRoot, Format, Loaded
from .hf_arrow import INSTALL_HINT, cache_root, embedded, extract_images, read_table, schema_of
from .hf_columns import ColumnMap, MappingError
from .rows import Row, sample_id_of, sample_of

TABLE_SUFFIXES = (".parquet", ".arrow")
SHARD = re.compile(r"^(?P<split>.+?)-\d{5}-of-\d{5}$")
HUB_NAME = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
CONNECT_TIMEOUT_S = 5.0
CLASSIFICATION = "classification"  # OSWorld-G's classification_result.json, beside a mirror of its rows


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
        fields = safejson.read_path(file)
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


# Benchmarks whose mirrors are converted by the benchmark's own row rules (ColumnMap.rows).
SCHEMAS = {"osworld-g": osworld_g.SCHEMA}


@dataclass(frozen=True)
class Table:
    name: str  # the dataset's name
    path: Path  # what the dataset is called by
    files: list[Path]
    split: str | None
    hub_name: str | None  # a hub name picks its mirror's mapping
    base: Path | None  # the folder relative image paths are inside
    images: Path | None = None  # the folder its embedded screenshots were extracted to
    classes: Mapping[str, list[str]] = dataclasses.field(default_factory=dict)  # OSWorld-G's categories


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
        if len(images) != len(origin):
            raise DatasetError(f"{extracted}: image cache has {len(images)} rows, the table {len(origin)}; delete it")
        table = dataclasses.replace(table, images=extracted)
    else:
        images = [{"path": p} if isinstance(p, str) and p else None for p in paths_column]
    table = dataclasses.replace(table, classes=classes)
    # Paths a row refers to stay inside the folder of a local table. A hub table's paths are the
    # datasets library's own (it wrote them, into its cache, when it downloaded the files).
    root = DatasetRoot(table.base) if table.base is not None else None
    schema = SCHEMAS.get(mapping.rows or "") or dataclasses.replace(
        mapping, extra=functools.partial(_hf_extra, mapping)
    )
    problems: list[str] = []
    samples = []
    for index, (file, row_in_file) in enumerate(origin):
        row = {c: values[c][index] for c in annotations}
        samples.append(
            sample_of(_row(index, file, row_in_file, row, images[index], mapping, table), schema, root, problems)
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


def _row(
    index: int, file: Path, row_in_file: int, row: dict[str, Any], image: Any, mapping: ColumnMap, table: Table
) -> Row:
    """One table row for the row loop, under the mapping's columns (or, for a benchmark's mirror,
    under that benchmark's own field names), with where its image is."""
    context: dict[str, Any] = {"source_file": file.name, "row": row_in_file}
    if table.split:
        context["split"] = table.split
    if mapping.rows == "osworld-g":  # the benchmark's own row rules read the row by its own names
        fields = {
            "id": row.get(mapping.id) if mapping.id else None,
            "instruction": row.get(mapping.instruction),
            "box_type": row.get(mapping.box_type),  # type: ignore[arg-type]
            "box_coordinates": _value(row.get(mapping.bbox)),
            "image_size": _value(row.get(mapping.image_size)) if mapping.image_size else None,
            "GUI_types": _value(row.get(mapping.gui_types)) if mapping.gui_types else None,
        }
        # which text the instruction column holds is the mirror's (docs/huggingface.md)
        context = {"origin": context, "classes": table.classes, "variant": mapping.instruction}
    else:
        fields = dict(row)
        fields[mapping.bbox] = _value(row.get(mapping.bbox))
        if mapping.image_size:
            fields[mapping.image_size] = _value(row.get(mapping.image_size))
    default_id = f"{table.split or 'row'}_{index:05d}"
    where = f"row {row_in_file} of {file.name}"
    if isinstance(image, list):  # extracted: [name, width, height]
        size = (int(image[1]), int(image[2])) if image[1] else None
        return Row(fields, default_id, _child(table.images, image[0]), None, context, size, True, where)
    if isinstance(image, dict):  # a file the row refers to: read only inside the dataset, and only when needed
        path = _child(table.base or table.path, image["path"])
        header = functools.partial(_file_size, path) if mapping.units == "normalized" else None
        return Row(fields, default_id, path, image["path"], context, header, False, where)
    sample_id = sample_id_of(Row(fields, default_id, table.path), SCHEMAS.get(mapping.rows or "", mapping))
    missing = (table.images or table.path) / f"{sample_id}.missing"
    defect = f"no image (column {mapping.image!r} holds neither bytes nor a path)"
    return Row(fields, default_id, missing, None, context, None, True, where, defect)


def _hf_extra(mapping: ColumnMap, row: Row) -> dict[str, Any]:
    """What a table row's sample carries: where it came from, the mirror's negative flag and
    Chinese instruction (kept as the screenspot-pro format keeps it, for --grounding-language cn)."""
    extra = dict(row.context)
    if mapping.negative and truthy(row.fields.get(mapping.negative)):
        extra["negative"] = True
    if mapping.instruction_cn:
        extra["instruction_cn"] = row.fields.get(mapping.instruction_cn)
    return extra


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
