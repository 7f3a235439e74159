"""The grounding benchmark: one test item per sample and detector.

    pytest suites/ --dataset PATH --detector NAME -n 4

Datasets and detectors come from the command line (or the ini file); a suite of your own can pin
them with ``@pytest.mark.grounding(dataset="path", detector="ocr")``.
"""


def test_grounding(grounding_sample, grounding_detector, grounding_check):
    grounding_check(grounding_sample, grounding_detector)
