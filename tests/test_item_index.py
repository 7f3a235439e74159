"""plugin/common/item_index.py: test id -> detector spec and sample, looked up, never parsed back."""

from helpers import FIXTURES
from pytest_grounding.core.types import with_epochs
from pytest_grounding.plugin.common.item_index import ItemIndex, params_of, spec_id
from pytest_grounding.plugin.sessions import plan_of, startup_of

MINI = str(FIXTURES / "mini")


def test_an_item_of_a_sample_never_loaded_is_named_from_its_id():
    index = ItemIndex(("center", "openai:model=x"))
    entry = index.lookup("suite.py::test_pinned[openai-model-x-pinned_007]")
    assert entry is not None and entry.spec == "openai:model=x" and entry.sample.uid == "pinned_007"
    assert entry.sample.dataset == "?"
    assert index.lookup("suite.py::test_pinned[other-thing]") is None
    assert params_of("a.py::t[x-y]@screen-3") == "x-y" and params_of("a.py::t") is None
    assert spec_id("ocr:lang=en") == "ocr-lang-en" and spec_id("center") == "center"


def test_epoch_items_are_indexed_by_the_ids_collection_gives_them(configured):
    config = configured(f"--dataset={MINI}", "--detector=center", "--grounding-epochs=2")
    plan = plan_of(config)
    startup_of(config).check_run_settings(lambda line: None)
    repeated = list(with_epochs(plan.samples_in_order(), 2))
    plan.index.add(["openai:model=m"], repeated)
    for sample in repeated:
        entry = plan.index.lookup(f"s.py::t[openai-model-m-{sample.uid}]")
        assert entry is not None and entry.sample.uid == sample.uid and sample.uid.endswith(("-e1", "-e2"))
