"""Issue 60 (hostile inputs, round 5): each class fixed at its root, several inputs each."""

from __future__ import annotations

import pytest

from pytest_grounding.analysis.compare import Method, on_shared_ids, paired, shared_ids

# -- ids from a diff are pairs (old id, new id), never positions -------------------------------------------


def _record(sid, outcome, fingerprint):
    return {"dataset": "ss", "uid": f"ss-{sid}", "id": sid, "outcome": outcome, "fingerprint": fingerprint}


@pytest.mark.parametrize("removed", [0, 1, 3, 7])
@pytest.mark.parametrize("swap", [False, True])
def test_a_renumbering_version_pairs_each_row_with_its_own_new_row(removed, swap):
    """ids are positions: one removed row shifts every later id by one. A deterministic model on the same
    rows gives the same outcome on each: nothing fixed, nothing broken, whatever the order of the reports."""
    rows = 10
    outcome = ["hit" if k % 3 else "miss" for k in range(rows)]  # row k's answer, whatever its id
    kept = [k for k in range(rows) if k != removed]
    old = Method("old", {}, tuple(_record(f"r{k}", outcome[k], "v1") for k in range(rows)), source="a")
    new = Method("new", {}, tuple(_record(f"r{i}", outcome[k], "v2") for i, k in enumerate(kept)), source="b")
    lines = ["# pytest-grounding unchanged ids: OLD<TAB>NEW", "# old ss v1", "# new ss v2"]
    lines += [f"r{k}\tr{i}" for i, k in enumerate(kept)]
    ids = shared_ids("\n".join(lines) + "\n")
    methods = [new, old] if swap else [old, new]
    first, second = on_shared_ids(methods, ids, methods[0].source)
    pair = paired(first, second)
    assert (pair.n, pair.fixed, pair.broken) == (rows - 1, 0, 0)


def test_without_a_header_the_first_report_is_the_old_version():
    old = Method("old", {}, tuple(_record(f"r{k}", "hit" if k == 2 else "miss", None) for k in range(4)), source="a")
    new = Method("new", {}, tuple(_record(f"r{k}", "hit" if k == 1 else "miss", None) for k in range(3)), source="b")
    ids = shared_ids("r0\tr0\nr2\tr1\nr3\tr2\n")  # r1 removed
    pair = paired(*on_shared_ids([old, new], ids, "a"))
    assert (pair.n, pair.fixed, pair.broken) == (3, 0, 0)


@pytest.mark.parametrize("text", ["a\tb\nc\tb\n", "a\tb\na\tc\n", "a\tb\tc\n"])
def test_an_ids_file_naming_a_row_twice_is_refused(text):
    with pytest.raises(ValueError, match="line 2|line 1"):
        shared_ids(text)
