"""core/safefile.py: the one reader of a user-given file reads regular files only, and at most its limit."""

import os
import time

import pytest

from pytest_grounding.core import safefile


def _special(tmp_path, kind):
    path = tmp_path / f"{kind}.json"
    if kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    return path


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "folder"])
def test_anything_but_a_regular_file_is_refused_at_once(tmp_path, kind):
    path = _special(tmp_path, kind)
    started = time.monotonic()
    with pytest.raises(safefile.NotRegularFile) as raised:
        safefile.read_bytes(path)
    assert time.monotonic() - started < 2
    assert str(path) in str(raised.value) and "not a regular file" in str(raised.value)


def test_a_file_is_read_up_to_its_limit_only(tmp_path):
    path = tmp_path / "big.json"
    with open(path, "wb") as file:
        file.truncate(1 << 20)  # sparse
    assert safefile.read_bytes(path, limit=1 << 20) == b"\0" * (1 << 20)
    with pytest.raises(safefile.FileTooLarge):
        safefile.read_bytes(path, limit=(1 << 20) - 1)


def test_a_link_to_a_regular_file_is_followed_unless_told_not_to(tmp_path):
    (tmp_path / "real.json").write_text("{}")
    (tmp_path / "link.json").symlink_to(tmp_path / "real.json")
    assert safefile.read_text(tmp_path / "link.json") == "{}"
    with pytest.raises(safefile.NotRegularFile):
        safefile.read_bytes(tmp_path / "link.json", follow_links=False)
