"""plugin/compat/pytest_compat.py leans on pytest's private internals: each test here names one and fails
when the installed pytest no longer has it (the versions tested are bounded in pyproject.toml)."""

import io

import pytest

from pytest_grounding.plugin.compat import pytest_compat


def test_the_terminal_writer_knows_how_far_its_line_has_got(pytestconfig):
    from _pytest.terminal import TerminalReporter

    out = io.StringIO()
    reporter = TerminalReporter(pytestconfig, out)
    reporter.write("....")  # progress dots, written past the reporter's own line tracking
    assert reporter._tw.width_of_current_line == 4
    pytest_compat.write_own_line(reporter, "grounding: 4/10 samples")
    assert out.getvalue().splitlines()[-1] == "grounding: 4/10 samples"
    assert out.getvalue().splitlines()[0] == "...."


@pytest.mark.slow
def test_a_loadgroup_suffix_lands_where_this_pytest_reads_node_ids(pytester):
    pytester.makepyfile(
        test_one="""
import pytest

@pytest.mark.xdist_group("screen-1")
def test_a():
    pass
"""
    )
    items, _ = pytester.inline_genitems()
    pytest_compat.name_groups(items)
    assert items[0].nodeid.endswith("test_a@screen-1")
    pytest_compat.name_groups(items)  # once only
    assert items[0].nodeid.count("@") == 1


def test_pytest_main_is_found_on_the_stack(pytester):
    # a pytester in-process run counts one more than this test sees (none in an xdist worker, one serially)
    pytester.makeconftest(
        """
from pytest_grounding.plugin.compat import pytest_compat

def pytest_configure(config):
    print("mains running:", pytest_compat.mains_running())
"""
    )
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest_inprocess("-s", "-p", "no:grounding")
    outer = pytest_compat.mains_running()
    result.stdout.fnmatch_lines([f"mains running: {outer + 1}"])


def test_pytest_config_main_is_where_the_frame_walk_looks():
    from _pytest.config import main

    assert main is pytest.main


def test_pytest_s_own_k_grammar_matches_words_in_a_text():
    from _pytest.mark.expression import Expression

    assert callable(Expression.compile)
    match = pytest_compat.keyword_matcher("ocr and not (zoom or seeker)")
    assert match("OCR mini") and not match("ocr+zoom mini")
    with pytest.raises(ValueError, match="-k 'ocr and'"):
        pytest_compat.keyword_matcher("ocr and")


def test_made_cases_find_the_terminal_reporter_s_progress_switch_and_pytest_s_crash_line(pytestconfig):
    from _pytest._code.code import ReprFileLocation
    from _pytest.terminal import TerminalReporter

    reporter = TerminalReporter(pytestconfig, io.StringIO())
    assert hasattr(reporter, "_show_progress_info") and hasattr(reporter, "currentfspath")
    failure = pytest_compat.MadeFailure("grounding", "gate FAILED: detector d overall")
    assert isinstance(failure.reprcrash, ReprFileLocation) and failure.reprcrash.message == str(failure)
