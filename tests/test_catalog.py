"""plugin/common/catalog.py: the run's datasets loaded once per process and named uniquely."""

from helpers import FIXTURES
from pytest_grounding.plugin.sessions import plan_of, startup_of

MINI = str(FIXTURES / "mini")


def test_the_same_folder_given_twice_is_one_dataset_said_once(configured, tmp_path):
    config = configured(f"--dataset={MINI}", f"--dataset=pointerbench:{MINI}")
    plan, startup = plan_of(config), startup_of(config)
    startup.check_run_settings(lambda line: None)
    assert len(plan.catalog.all()) == 1
    assert [n for n in startup.notes if "given again" in n] and len(startup.notes) == 1
