"""plugin/controller/ledger.py: one record per item, whatever xdist reports twice or never."""

from pytest_grounding.core.record import Outcome
from pytest_grounding.plugin.compat.xdist_compat import item_key
from pytest_grounding.plugin.controller.ledger import Ledger, NotRun
from pytest_grounding.render.notes import not_run_line


def record(uid, outcome=Outcome.HIT):
    return {"uid": uid, "outcome": outcome}


def test_an_item_keeps_its_first_real_record_and_a_crash_only_stands_in():
    ledger, records = Ledger(), []
    ledger.expect(["t.py::test[c-a]", "t.py::test[c-b]", "t.py::test[c-c]"])
    assert ledger.place(records, "t.py::test[c-a]", record("a"), crash=False)
    assert not ledger.place(records, "t.py::test[c-a]", record("a", Outcome.MISS), crash=False)
    assert ledger.place(records, "t.py::test[c-b]", record("b", Outcome.ERROR), crash=True)
    assert ledger.place(records, "t.py::test[c-b]", record("b"), crash=False)  # the re-run replaces the crash
    assert [r["outcome"] for r in records] == [Outcome.HIT, Outcome.HIT]
    assert ledger.crashes == 1 and ledger.take_stand_ins() == []
    ledger.saw("t.py::test[c-a]")
    ledger.saw("tests0/t.py::test[c-b]@screen-2")  # another rootdir, a loadgroup suffix: the same item
    assert ledger.missing() == ["t.py::test[c-c]"]


def test_an_item_key_drops_the_group_suffix_and_the_folder():
    assert item_key("a/b/t.py::test[x-y]@g-1") == "t.py::test[x-y]" == item_key("t.py::test[x-y]")


def test_the_not_run_line_names_why_how_many_and_the_first_few():
    missing = [NotRun(f"t.py::test[c-{i}]", "c", "d", f"s{i}", f"s{i}") for i in range(7)]
    line = not_run_line(missing, 20, crashes=0, interrupted=True, resumable=True)
    assert line.startswith("not run: 7 of 20 samples (the run was interrupted")
    assert "s0, s1, s2, s3, s4 and 2 more" in line and "--grounding-resume runs them" in line
    crashed = not_run_line(missing[:1], 3, crashes=2, interrupted=False, resumable=False)
    assert "after 2 worker crashes" in crashed and "resume" not in crashed
