"""Paths as shared artifacts show them (JUnit messages, the HTML pages, the audit page): relative to a
root the reader has (the dataset's folder, the run's folder), never an absolute home path. Pure."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path


def shown_path(path: str | os.PathLike[str], roots: Iterable[str | os.PathLike[str] | None] = ()) -> str:
    """`path` relative to the first of `roots` (then the working directory, the run's folder) that holds it;
    else under the home folder as `~/...`; else as it is (a path outside both names no person)."""
    text = os.fspath(path)
    if not text:
        return text
    try:
        target = Path(text).absolute()
    except (OSError, ValueError):
        return text
    for root in (*roots, Path.cwd()):
        if root is None or not os.fspath(root):
            continue
        try:
            base = Path(root).absolute()
            base = base.parent if base.is_file() else base
            if base == Path(base.anchor):  # the filesystem's root holds every path: no root of the run
                continue
            relative = target.relative_to(base)
        except (OSError, ValueError):
            continue
        return relative.as_posix() or "."
    home = os.path.expanduser("~")
    if home and home != "~" and home != "/":
        try:
            return "~/" + target.relative_to(home).as_posix()
        except ValueError:
            pass
    return text


def shown_text(text: str, home: str | None = None) -> str:
    """`text` (a page, a message) with every absolute path under the home folder written `~/...`: the last
    pass over a shared artifact, for the paths that come inside other text (an exception's message, the
    command line, a dataset's folder). Only a whole leading component matches (`/home/ann` in
    `/home/ann/x`, never in `/home/anna` or `/srv/home/ann`)."""
    home = (home if home is not None else os.path.expanduser("~")).rstrip("/")
    if not text or not home or home == "~" or not home.startswith("/"):
        return text
    return re.sub(r"(?<![\w.~/-])" + re.escape(home) + r"(?![\w.-])", "~", text)


def unusable(path: str | os.PathLike[str]) -> str | None:
    """Why no file operation can use `path` at all (a name longer than the file system takes, a folder on
    the way that cannot be searched, a NUL byte), or None: whether it exists or not is the caller's
    question. pathlib's `exists()` and `is_dir()` raise for these instead of answering False."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    except ValueError as exc:
        return str(exc)
    return None


def os_problem(exc: OSError) -> str:
    """An OSError in one line of bounded length: what failed and the file, shown as shared artifacts show it."""
    what = exc.strerror or type(exc).__name__
    name = exc.filename if isinstance(exc.filename, str) else None
    return f"{what}: {shown_path(name)[:200]}" if name else what
