"""The OSWorld-G refined split as its own benchmark (issue 28): run beside the original in one run,
each gets its own headline line, named apart, scored as counted by hand; serial and -n 2."""

import pytest
from test_benchmarks import OSWORLD, run

from helpers import FIXTURES, SERIAL

# The refined fixture holds the original's rows with "Refined: " before each instruction.
REFINED = {f"Refined: {k}": v for k, v in OSWORLD.items()}


@pytest.mark.slow
@SERIAL
def test_osworld_g_refined_and_original_are_never_pooled(project, workers):
    original = FIXTURES / "osworld-g" / "OSWorld-G.json"
    refined = f"osworld-g:{FIXTURES / 'osworld-g' / 'OSWorld-G_refined.json'}"
    # the original answered as in test_benchmarks (3 hits of 6 scored); the refined with only its first two
    answers = {**OSWORLD, **{k: v for k, v in list(REFINED.items())[:2]}}
    result, document = run(project, original, answers, f"--dataset={refined}", *workers)
    assert result.ret in (0, 1), result.stdout.str()
    benches = {b["benchmark"]: b for b in document["summary"]["table"]["benchmarks"]}
    assert set(benches) == {"osworld-g", "osworld-g-refined"}
    assert benches["osworld-g"]["dataset"] == "osworld-g-original" and benches["osworld-g"]["value"] == pytest.approx(
        3 / 6
    )
    # refined: og-1 hit, og-2 miss (one pixel left), og-3..og-6 unanswered (wrong format: misses), og-7 an error
    assert benches["osworld-g-refined"]["dataset"] == "osworld-g-refined"
    assert benches["osworld-g-refined"]["value"] == pytest.approx(1 / 6)
    result.stdout.fnmatch_lines_random(
        [
            "*osworld-g-original (osworld-g) headline 50.0%: accuracy over all rows, refusal rows included*",
            "*osworld-g-refined (osworld-g-refined) headline 16.7%: accuracy over all rows of the REFINED split*",
        ]
    )
