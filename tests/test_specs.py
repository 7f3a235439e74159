"""plugin/common/specs.py: a detector spec parsed once, its factory and whether it is deterministic."""

import pytest

from helpers import FIXTURES
from pytest_grounding.plugin.common.settings import SettingError
from pytest_grounding.plugin.sessions import plan_of

MINI = str(FIXTURES / "mini")


def test_a_spec_is_parsed_once_and_a_bad_one_is_one_message_naming_its_source(configured):
    plan = plan_of(configured(f"--dataset={MINI}"))
    first = plan.specs.get("random:seed=3")
    assert plan.specs.get("random:seed=3") is first
    assert (first.name, first.options, first.chain.strategies) == ("random", {"seed": "3"}, ())
    assert plan.specs.deterministic("center") and not plan.specs.deterministic("openai:model=m")
    assert not plan.specs.deterministic("no-such-detector")
    with pytest.raises(SettingError, match=r"--detector no-such-detector: .*no-such-detector"):
        plan.check_specs(["no-such-detector"], "--detector")
