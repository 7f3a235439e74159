"""The matching logic on its own: no OCR, no model."""

import math

import pytest

pytest.importorskip("rapidfuzz")  # the `ocr` extra; the core install skips these tests

from pytest_grounding.detectors.textmatch import (
    CONTAINED_FLOOR,
    Label,
    Thresholds,
    choose,
    instruction_targets,
    lexical_score,
    normalize,
    quoted_labels,
)


def labels(*texts):
    return [Label.of(t) for t in texts]


def never_called():
    raise AssertionError("the semantic tier ran although a lexical tier had answered")


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("Save As...", "save as"),
        ("  FILE\tEdit ", "file edit"),
        ("Find & Replace", "find and replace"),
        ("I’ll Reserve", "ill reserve"),
        ("Price: Low to High", "price low to high"),
        ("Ctrl+H", "ctrl h"),
        ("…", ""),
    ],
)
def test_normalize(raw, expected):
    assert normalize(raw) == expected


@pytest.mark.parametrize(
    "instruction, expected",
    [
        ("Click the 'OK' button", ("OK",)),
        ("Click 'I'll Reserve'", ("I'll Reserve",)),
        ("Select 'Page Number'from the dropdown menu.", ("Page Number",)),
        ("Click on the most relevant result about today's news", ()),
        ("Browse items of children's clothing that you like.", ()),
        ('Click \'Replace All\' to replace "world" with "everyone".', ("Replace All", "world", "everyone")),
        ("Press “Save” now", ("Save",)),
        ("Press ‘Save’ now", ("Save",)),
        ("Open web browser (double-click on 'Firefox W...' icon)", ("Firefox W...",)),
        ("Click '' here", ()),
    ],
)
def test_quoted_labels(instruction, expected):
    assert quoted_labels(instruction) == expected


@pytest.mark.parametrize(
    "instruction, expected",
    [
        ("Click Search button.", ("search button", "search")),
        ("Click Reserve.", ("reserve",)),
        ("Open Firefox Web Browser.", ("firefox web browser",)),
        ("Locate and open the Firefox Web browser.", ("firefox web browser",)),
        (
            "Double-click on the Microsoft Edge icon to open the web browser.",
            ("microsoft edge icon to open the web browser", "microsoft edge icon", "microsoft edge"),
        ),
        ("Click on PDF to view", ("pdf to view", "pdf")),
        ("Click Add to Cart", ("add to cart", "add")),
        ("Right-click on the Start menu icon.", ("start menu icon", "start menu", "start")),
        (
            "Click on the Insert menu at the top of the screen.",
            ("insert menu at the top of the screen", "insert menu", "insert"),
        ),
        ("Choose Find from the Edit menu.", ("find from the edit menu", "find")),
        ("Click config in the file explorer.", ("config in the file explorer", "config")),
        ("Select the cell that shows Travel.", ("cell that shows travel", "travel")),
        ("Please click on the OK button", ("ok button", "ok")),
        ("Click the name of the Strings track.", ("strings track",)),
        ("Click", ("click",)),
    ],
)
def test_instruction_targets(instruction, expected):
    assert instruction_targets(instruction) == expected


def test_equal_texts_score_one():
    assert lexical_score(Label.of("save as"), Label.of("Save As...")) == 1.0


def test_ocr_misread_scores_by_fuzzy_ratio():
    assert 0.8 < lexical_score(Label.of("reserve"), Label.of("Reserue")) < 1.0


def test_characters_ocr_confuses_are_folded():
    score = lexical_score(Label.of("disk i o"), Label.of("Disk l/0"))
    assert 0.8 < score < 1.0  # a near-certain match, but not an exact one


def test_label_inside_phrase_scores_by_coverage():
    short = lexical_score(Label.of("microsoft edge icon to open the web browser"), Label.of("Microsoft"))
    longer = lexical_score(Label.of("microsoft edge icon to open the web browser"), Label.of("Microsoft Edge"))
    assert CONTAINED_FLOOR < short < longer < 1.0


def test_phrase_inside_label_counts_too():
    assert lexical_score(Label.of("triangle"), Label.of("Isosceles Triangle")) > CONTAINED_FLOOR


def test_containment_is_by_whole_words():
    assert lexical_score(Label.of("research papers"), Label.of("search")) < CONTAINED_FLOOR


def test_stop_words_alone_are_not_contained():
    assert lexical_score(Label.of("go to the settings page"), Label.of("to the")) < CONTAINED_FLOOR


def test_truncated_label_matches_as_prefix():
    label = Label.of("Firefox W...")
    assert label.truncated
    assert lexical_score(Label.of("firefox web browser"), label) >= 0.8
    assert lexical_score(Label.of("firefox web browser"), Label.of("Firefox W")) < 0.8


def test_too_short_truncated_label_is_no_prefix():
    assert lexical_score(Label.of("browse search results"), Label.of("br...")) < CONTAINED_FLOOR


def test_no_labels_no_match():
    assert choose("Click OK", []) is None


def test_quoted_label_wins_over_other_words():
    screen = labels("Find and Replace", "Replace All", "world", "everyone")
    match = choose('Click \'Replace All\' to replace "world" with "everyone".', screen, never_called)
    assert (match.index, match.kind, match.accepted) == (1, "quoted", True)


def test_first_quoted_label_that_is_on_screen_is_used():
    match = choose("Click 'Undo' or 'Cancel'", labels("OK", "Cancel"), never_called)
    assert (match.index, match.kind) == (1, "quoted")


def test_quoted_label_off_screen_falls_back_to_the_instruction():
    match = choose("Click the 'Undo' Save button", labels("Edit", "Save"), never_called)
    assert match.index == 1 and match.kind != "quoted"


def test_named_label_exact_and_fuzzy():
    exact = choose("Click Search button.", labels("Search results", "Search"), never_called)
    assert (exact.index, exact.kind, exact.score) == (1, "exact", 1.0)
    fuzzy = choose("Click Reserve.", labels("Home", "Reserue"), never_called)
    assert (fuzzy.index, fuzzy.kind, fuzzy.accepted) == (1, "fuzzy", True)


def test_ties_go_to_the_label_standing_alone():
    sentence_word = Label.of("apply", line_words=7)
    button = Label.of("Apply")
    match = choose("Click 'Apply'", [sentence_word, button], never_called)
    assert match.index == 1


def test_best_label_across_phrases():
    match = choose("Select the Save As option", labels("Save", "Save As", "As"), never_called)
    assert labels("Save", "Save As", "As")[match.index].text == "save as"


def test_semantic_tier_answers_when_lexical_does_not():
    screen = labels("Stop", "Record", "Settings")
    calls = []

    def scores():
        calls.append(1)
        return [0.15, 0.56, float("nan")]

    match = choose("Begin a performance recording.", screen, scores, Thresholds(semantic=0.5))
    assert (match.index, match.kind, match.accepted) == (1, "semantic", True)
    assert calls == [1]


def test_semantic_ties_go_to_the_label_standing_alone_then_the_first():
    screen = [Label.of("Strings", line_words=5), Label.of("Strings"), Label.of("Strings")]
    match = choose("Click the name of the violin section.", screen, lambda: [0.6, 0.6, 0.6])
    assert (match.index, match.kind) == (1, "semantic")


def test_below_thresholds_is_rejected_with_best_candidate():
    match = choose(
        "Begin a performance recording.", labels("Stop", "Record"), lambda: [0.15, 0.4], Thresholds(semantic=0.5)
    )
    assert match is not None and not match.accepted
    assert match.index == 1 and math.isclose(match.score, 0.4)


def test_without_semantic_tier_nothing_close_is_rejected():
    match = choose("Open the preferences dialog", labels("File", "Edit"), None)
    assert match is not None and not match.accepted and match.kind == "fuzzy"


def test_all_nan_semantic_scores_do_not_answer():
    match = choose("Begin a performance recording.", labels("Stop"), lambda: [float("nan")])
    assert match is None or not match.accepted


def test_thresholds_are_respected():
    screen = labels("Reserue")
    assert choose("Click Reserve.", screen, None, Thresholds(lexical=0.8)).accepted
    assert not choose("Click Reserve.", screen, None, Thresholds(lexical=0.9)).accepted


# -- the semantic tier's pick does not hang on last-digit float differences ---------------------------


def test_semantic_scores_a_last_digit_apart_are_a_tie_broken_by_the_shortest_line():
    from pytest_grounding.detectors.textmatch import SEMANTIC_TIE, best_semantic

    # the default set's syn_00026: "Search" (a word of a 7-word line) and "search" (a line of its own)
    # score 0.6491122245788574 both on AVX-512, 0.6491122 and 0.6491121 on AVX2 (docs/figures.md)
    found = [Label.of("Search", 7), Label.of("search", 1)]
    for scores in ([0.6491122245788574, 0.6491122245788574], [0.6491122, 0.6491121], [0.6491121, 0.6491122]):
        assert best_semantic(scores, found) == (1, max(scores))
    assert best_semantic([0.6491122 + 2 * SEMANTIC_TIE, 0.6491122], found) == (0, 0.6491122 + 2 * SEMANTIC_TIE)
    assert best_semantic([math.nan, math.nan], found) is None


def test_the_semantic_pick_survives_perturbed_last_digits():
    import random

    from pytest_grounding.detectors.textmatch import Thresholds, choose

    rng = random.Random(7)
    for _ in range(300):
        count = rng.randint(2, 12)
        found = [Label.of(f"label {i}", rng.randint(1, 4)) for i in range(count)]
        # scores on a 1e-3 grid: a real difference, or a tie that only the last digits could break
        base = [rng.randint(400, 420) / 1000 for _ in range(count)]
        picks = set()
        for _ in range(5):
            noisy = [s + rng.uniform(-3e-7, 3e-7) for s in base]  # float32's last digits of a cosine
            match = choose("do the thing", found, lambda noisy=noisy: noisy, Thresholds(lexical=0.99, semantic=0.3))
            picks.add((match.index, match.kind, match.accepted))
        assert len(picks) == 1, (base, picks)
