"""plugin/plan.py, specs.py, catalog.py and item_index.py: the run's plan, built the same way in
every process, its specs parsed once, its datasets loaded once, its items looked up by test id."""

import pytest

from helpers import FIXTURES
from pytest_grounding.core.types import with_epochs
from pytest_grounding.plugin.item_index import ItemIndex, params_of, spec_id
from pytest_grounding.plugin.sessions import controller_of, local_worker, plan_of, worker_of
from pytest_grounding.plugin.settings import SettingError

MINI = str(FIXTURES / "mini")


@pytest.fixture
def configured(pytester):
    def configure(*args):
        config = pytester.parseconfigure(*args)
        return config

    return configure


def test_a_plan_is_built_with_its_sessions_in_the_only_process(configured):
    config = configured(f"--dataset={MINI}", "--detector", "center", "--detector", "random:seed=3")
    plan = plan_of(config)
    assert plan.settings.selection.detector_specs == ("center", "random:seed=3")
    assert worker_of(config).plan is plan and controller_of(config).plan is plan
    plan.check_run_settings(lambda line: None)
    (dataset,) = plan.catalog.all()
    assert dataset.format == "pointerbench" and plan.catalog.fingerprint_of(dataset.name) == dataset.fingerprint
    assert plan.samples_in_order() == list(dataset.samples)


def test_a_spec_is_parsed_once_and_a_bad_one_is_one_message_naming_its_source(configured):
    plan = plan_of(configured(f"--dataset={MINI}"))
    first = plan.specs.get("random:seed=3")
    assert plan.specs.get("random:seed=3") is first
    assert (first.name, first.options, first.chain.strategies) == ("random", {"seed": "3"}, ())
    assert plan.specs.deterministic("center") and not plan.specs.deterministic("openai:model=m")
    assert not plan.specs.deterministic("no-such-detector")
    with pytest.raises(SettingError, match=r"--detector no-such-detector: .*no-such-detector"):
        plan.check_detector_specs(["no-such-detector"], "--detector", lambda line: None)


def test_the_same_folder_given_twice_is_one_dataset_said_once(configured, tmp_path):
    plan = plan_of(configured(f"--dataset={MINI}", f"--dataset=pointerbench:{MINI}"))
    plan.check_run_settings(lambda line: None)
    assert len(plan.catalog.all()) == 1
    assert [n for n in plan.notes if "given again" in n] and len(plan.notes) == 1


def test_epochs_apply_to_detectors_that_sample_not_to_deterministic_ones(configured):
    plan = plan_of(configured(f"--dataset={MINI}", "--grounding-epochs=3", "--detector=center"))
    assert plan.epochs_for(["center"]) == 1 and plan.epochs_for(["openai:model=m", "center"]) == 3
    plan.note_deterministic()
    assert any("center is deterministic" in note for note in plan.notes)


def test_the_controller_indexes_the_items_its_workers_will_make(configured):
    config = configured(f"--dataset={MINI}", "--detector", "center", "--detector", "random:seed=3")
    plan = plan_of(config)
    plan.check_run_settings(lambda line: None)
    sample = plan.samples_in_order()[2]
    found = plan.index.lookup(f"suite.py::test_sample[random-seed-3-{sample.uid}]")
    assert found is not None and found.spec == "random:seed=3" and found.sample == sample
    record = plan.crash_record(f"suite.py::test_sample[center-{sample.uid}]@group-1", "worker gw0 crashed")
    assert record is not None
    assert (record["outcome"], record["detector"], record["uid"]) == ("error", "center", sample.uid)
    assert record["fingerprint"] == plan.catalog.fingerprint_of(sample.dataset)
    assert plan.crash_record("test_other.py::test_other", "crashed") is None


def test_an_item_of_a_sample_never_loaded_is_named_from_its_id():
    index = ItemIndex(("center", "openai:model=x"))
    entry = index.lookup("suite.py::test_pinned[openai-model-x-pinned_007]")
    assert entry is not None and entry.spec == "openai:model=x" and entry.sample.uid == "pinned_007"
    assert entry.sample.dataset == "?"
    assert index.lookup("suite.py::test_pinned[other-thing]") is None
    assert params_of("a.py::t[x-y]@screen-3") == "x-y" and params_of("a.py::t") is None
    assert spec_id("ocr:lang=en") == "ocr-lang-en" and spec_id("center") == "center"


def test_epoch_items_are_indexed_by_the_ids_collection_gives_them(configured):
    plan = plan_of(configured(f"--dataset={MINI}", "--detector=center", "--grounding-epochs=2"))
    plan.check_run_settings(lambda line: None)
    repeated = list(with_epochs(plan.samples_in_order(), 2))
    plan.index.add(["openai:model=m"], repeated)
    for sample in repeated:
        entry = plan.index.lookup(f"s.py::t[openai-model-m-{sample.uid}]")
        assert entry is not None and entry.sample.uid == sample.uid and sample.uid.endswith(("-e1", "-e2"))


def test_a_worker_session_exists_only_where_samples_are_predicted(configured):
    config = configured(f"--dataset={MINI}", "-n", "2")
    assert local_worker(config) is None
    assert controller_of(config).plan is plan_of(config)
