import contextlib
import importlib
import importlib.util
import pkgutil

import numpy  # noqa: F401  (imported once here: pytester runs in-process and numpy cannot load twice)
import pytest

import pytest_grounding
from helpers import make_project

# pytester's in-process runs restore sys.modules afterwards, so a module first imported inside one
# (the package's lazily imported modules, httpx) is imported anew by the next, and a thread or a
# cache of the earlier run can hold classes of another copy (an exception that no longer matches
# its `except`). Every module of the package, and the HTTP client, is imported once, here.
for _module in pkgutil.walk_packages(pytest_grounding.__path__, "pytest_grounding."):
    with contextlib.suppress(ImportError):  # an extra this install lacks (the core-only CI run)
        importlib.import_module(_module.name)
for _name in ("httpx", "httpcore"):
    if importlib.util.find_spec(_name) is not None:
        importlib.import_module(_name)

pytest_plugins = ["pytester"]

# The fast tier (`pytest tests/ -m "not slow" -n 2`) leaves out what takes long: every scenario's
# xdist variant (its serial twin stays), the documented commands (each in a fresh copy of the
# repo), real models on real screens, tiny checkpoints on torch, and the terminal/X11 drivers.
# Single tests mark themselves with @pytest.mark.slow. CI runs everything.
SLOW_FILES = {
    "test_curation_record.py",
    "test_curation_tui.py",
    "test_ocr_plugin.py",
    "test_omniparser.py",
    "test_scale.py",
    "test_uitars.py",
}
# ... and the tests that took 10 s or more each in a fast-tier run (`--durations`, 2026-11-24).
SLOW_TESTS = {
    "test_documented_commands_run",
    "test_a_benchmark_run_reads_in_a_few_lines_and_ends_with_a_verdict",
    "test_a_broken_pinned_dataset_is_a_collection_error_naming_the_file",
    "test_a_fifo_stays_a_fifo_and_receives_the_report",
    "test_a_link_planted_at_the_old_temporary_name_is_not_followed",
    "test_a_served_qwen25_preset_stays_within_the_processor_budget",
    "test_a_users_format_registered_from_a_conftest",
    "test_a_worker_that_dies_leaves_an_error_record",
    "test_an_improvement_passes_and_is_reported",
    "test_another_dataset_version_or_detector_spec_is_a_usage_error",
    "test_baseline_from_the_ini_file_is_relative_to_it",
    "test_baselines_with_bad_values_are_clear_errors",
    "test_batch_option",
    "test_browser_shows_the_gallery_and_filters_it",
    "test_cache_forgets_the_least_recently_used_screen",
    "test_compare_markdown",
    "test_compare_reports_of_separate_runs",
    "test_compare_samples_fixed_between_two_reports",
    "test_compare_samples_lists_what_changed",
    "test_cuactspot_mean_over_modalities",
    "test_first_run_writes_and_fails_second_passes_regression_fails_update_rewrites",
    "test_gallery_has_one_entry_per_non_hit",
    "test_hostile_dataset_every_row_recorded_nothing_read_outside",
    "test_ids_are_readable_unique_and_selectable",
    "test_interrupted_run_keeps_predictions_and_writes_partial_report",
    "test_junit_xml_carries_each_samples_outcome_and_figures",
    "test_latency_ratio_gate_is_off_unless_asked",
    "test_mmbench_gui_mean_of_basic_and_advanced",
    "test_moved_boxes_give_identical_predictions",
    "test_odd_answers_are_scored_or_errors_never_lost_or_repaired",
    "test_omniparser_locates_known_controls_of_synthetic_screens",
    "test_osworld_g_refined_and_original_are_never_pooled",
    "test_osworld_g_refined_file_and_bad_policy",
    "test_osworld_g_refusal_rows_excluded_and_a_false_refusal",
    "test_plugin_marks_the_page_of_an_interrupted_run",
    "test_progress_says_samples_rate_and_eta",
    "test_pytest_benchmark_autosave_and_compare_fail_work_on_each_sample",
    "test_pytest_benchmark_table_is_left_out_unless_asked_but_its_json_keeps_every_sample",
    "test_refusal_rows_from_the_ini_file",
    "test_report_html_into_a_fifo",
    "test_report_html_of_a_crafted_report_is_refused_or_inert",
    "test_report_with_a_baseline_written_then_compared_validates",
    "test_resume_skips_what_was_done_and_reports_the_whole_run",
    "test_screenspot_pro_in_chinese",
    "test_screenspot_variants_styles_and_negatives",
    "test_semantic_model_loads_offline_from_the_package_files",
    "test_shared_screenagent_accuracy_matches_an_independent_scorer",
    "test_shared_screenspot_v1_in_its_original_format",
    "test_showdown_clicks_with_bootstrap_interval",
    "test_slice_drop_beyond_its_tolerance_fails_within_it_only_the_regression_fails",
    "test_suite_pins_dataset_and_detector_with_a_marker",
    "test_suite_runs_on_a_sniffed_folder_with_the_center_floor",
    "test_suite_scores_the_osworld_g_mirror_as_its_authors",
    "test_summary_command_appends_and_says_when_there_is_no_report",
    "test_the_cache_is_laid_out_as_huggingface_hub_reads_it",
    "test_the_cost_and_the_verdict_are_the_same_with_and_without_xdist",
    "test_the_cpu_install_resolves_to_the_cpu_build_of_torch",
    "test_the_embedded_default_is_named_the_same_with_and_without_xdist",
    "test_the_gallery_never_reads_an_image_the_run_refused_as_outside_the_dataset",
    "test_the_run_page_does_not_read_the_refused_image_and_says_why",
    "test_the_same_dataset_twice_runs_once",
    "test_the_table_is_the_same_with_and_without_xdist_but_for_latency",
    "test_totals_identical_with_and_without_xdist",
    "test_validate_reports_bad_rows_by_row",
    "test_verdicts_identical_with_and_without_xdist",
    "test_workflow_commands_fail_a_broken_slice_pass_unchanged_and_report_an_improvement",
}


def pytest_collection_modifyitems(items):
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if item.path.name in SLOW_FILES or item.originalname in SLOW_TESTS or params.get("workers") == ["-n", "2"]:
            item.add_marker(pytest.mark.slow)


# Detectors for harness tests, registered through the plugin's own hook. `colour` is a real
# (if simple) detector: it finds the named colour's pixels; it never sees the target box.
PROJECT_CONFTEST = """
import time
import numpy as np
from pytest_grounding.core.types import Box, Prediction

COLOURS = {"red": (220, 30, 30), "green": (30, 170, 60), "blue": (40, 70, 220)}


class Colour:
    name = "colour"

    def predict(self, query):
        word = next((c for c in COLOURS if c in query.instruction.lower()), None)
        if word is None:
            return Prediction.no_answer(raw="I see no such colour")
        pixels = np.asarray(query.image).astype(int)
        mask = np.all(np.abs(pixels - COLOURS[word]) < 12, axis=-1)
        ys, xs = np.nonzero(mask)
        return Prediction(box=Box(int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1),
                          raw=word, meta={"pixels": np.int64(mask.sum())})

    def locate(self, query):
        # The element-at-click task: the extent of the colour under the point (the target box unseen).
        pixels = np.asarray(query.image).astype(int)
        x, y = (min(int(v), limit - 1) for v, limit in zip(query.point, (pixels.shape[1], pixels.shape[0])))
        if pixels[y, x].sum() > 700:  # white background: nothing there
            return Prediction.no_answer(raw="background")
        mask = np.all(np.abs(pixels - pixels[y, x]) < 12, axis=-1)
        ys, xs = np.nonzero(mask)
        return Prediction(box=Box(int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1))


class Boom:
    name = "boom"

    def predict(self, query):
        if "green" in query.instruction:
            raise RuntimeError("model backend unavailable")
        return Colour().predict(query)


class Sleepy:
    name = "sleepy"

    def predict(self, query):
        if "blue" in query.instruction:
            time.sleep(30)
        return Colour().predict(query)


class Garbage:
    name = "garbage"

    def predict(self, query):
        return "click somewhere nice"


class Interrupting:
    name = "interrupting"
    calls = 0

    def predict(self, query):
        Interrupting.calls += 1
        if Interrupting.calls == 3:
            raise KeyboardInterrupt
        return Colour().predict(query)


def broken_factory():
    raise OSError("weights not found at /nowhere/model.onnx")


def pytest_grounding_register_detectors(registry):
    registry.register("colour", Colour)
    registry.register("boom", Boom)
    registry.register("sleepy", Sleepy)
    registry.register("garbage", Garbage)
    registry.register("interrupting", Interrupting)
    registry.register("broken", broken_factory)
"""


@pytest.fixture
def project(pytester):
    """A pytester folder holding our suite and the test detectors."""
    make_project(pytester, conftest=PROJECT_CONFTEST)
    return pytester
