"""plugin/common/plan.py, specs.py, catalog.py and item_index.py: the run's plan, built the same way in
every process, its specs parsed once, its datasets loaded once, its items looked up by test id."""

from helpers import FIXTURES
from pytest_grounding.plugin.sessions import controller_of, plan_of, startup_of, worker_of

MINI = str(FIXTURES / "mini")


def test_a_plan_is_built_with_its_sessions_in_the_only_process(configured):
    config = configured(f"--dataset={MINI}", "--detector", "center", "--detector", "random:seed=3")
    plan = plan_of(config)
    assert plan.settings.selection.detector_specs == ("center", "random:seed=3")
    assert worker_of(config).plan is plan and controller_of(config).plan is plan
    startup_of(config).check_run_settings(lambda line: None)
    (dataset,) = plan.catalog.all()
    assert dataset.format == "pointerbench" and plan.catalog.fingerprint_of(dataset.name) == dataset.fingerprint
    assert plan.samples_in_order() == list(dataset.samples)


def test_epochs_apply_to_detectors_that_sample_not_to_deterministic_ones(configured):
    config = configured(f"--dataset={MINI}", "--grounding-epochs=3", "--detector=center")
    plan, startup = plan_of(config), startup_of(config)
    assert (
        plan.epochs_for(["center"]) == 1 and plan.epochs_for(["openai:preset=uitars-1.5-point,model=m", "center"]) == 3
    )
    startup.note_deterministic()
    assert any("center is deterministic" in note for note in startup.notes)


def test_the_controller_indexes_the_items_its_workers_will_make(configured):
    config = configured(f"--dataset={MINI}", "--detector", "center", "--detector", "random:seed=3")
    plan = plan_of(config)
    startup_of(config).check_run_settings(lambda line: None)
    sample = plan.samples_in_order()[2]
    found = plan.index.lookup(f"suite.py::test_sample[random-seed-3-{sample.uid}]")
    assert found is not None and found.spec == "random:seed=3" and found.sample == sample
    record = plan.crash_record(f"suite.py::test_sample[center-{sample.uid}]@group-1", "worker gw0 crashed")
    assert record is not None
    assert (record["outcome"], record["detector"], record["uid"]) == ("error", "center", sample.uid)
    assert record["fingerprint"] == plan.catalog.fingerprint_of(sample.dataset)
    assert plan.crash_record("test_other.py::test_other", "crashed") is None


def test_the_sweep_is_on_the_frozen_plan_and_one_expand_makes_the_items_samples(configured):
    """--grounding-perturb's registry and variants live on the plan (no stash key of their own);
    `plan.expand` is the one way samples become items' samples: variants after each sample, then epochs."""
    import dataclasses

    import pytest

    config = configured(
        f"--dataset={MINI}", "--detector=openai:model=m", "--grounding-perturb=invert", "--grounding-epochs=2"
    )
    plan = plan_of(config)
    assert [p.label for p in plan.sweep.perturbations] == ["invert"] and "invert" in plan.sweep.registry
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.sweep = None  # type: ignore[misc]
    from pathlib import Path

    plan.datasets_for((), Path.cwd())  # the run's datasets loaded (check_run_settings would preflight openai)
    sample = next(s for s in plan.samples_in_order() if not s.defect)
    made = plan.expand([sample])
    assert [s.uid for s in made] == [
        f"{sample.uid}-e1",
        f"{sample.uid}-e2",
        f"{sample.uid}~invert-e1",
        f"{sample.uid}~invert-e2",
    ]
    assert [s.uid for s in plan.expand([sample], ["center"])] == [sample.uid, f"{sample.uid}~invert"]
    assert plan.run_items() == plan.expand(plan.samples_in_order())


def test_the_plan_holds_settings_and_registries_only(configured):
    """No mutable field on the frozen plan, and none of the controller's checks: what the start-up
    checks find (preflights, frame checks, requests sent, notes) is kept by controller/startup.py."""
    import ast
    import dataclasses
    from pathlib import Path

    from pytest_grounding.plugin.common import plan as plan_module

    config = configured(f"--dataset={MINI}", "--detector=center")
    plan, startup = plan_of(config), startup_of(config)
    for field in dataclasses.fields(plan):
        assert field.default_factory is dataclasses.MISSING, field.name
        assert not isinstance(getattr(plan, field.name), (list, set, dict)), field.name
    tree = ast.parse(Path(plan_module.__file__).read_text(encoding="utf-8"))
    imported = {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not {m for m in imported if m.split(".")[0] in ("worker", "controller") or "preflight" in m}
    startup.check_run_settings(lambda line: None)
    assert startup.preflighted == {"center"} and startup.requests == 0 and startup.frame_checks == {}
