"""Hooks a project's conftest.py (or a plugin) implements to add its own detectors or formats.
Both are historic: a conftest registered after the registry was built is still called."""

import pytest


@pytest.hookspec(historic=True)
def pytest_grounding_register_detectors(registry):
    """Add detectors: ``registry.register("mine", MyDetector)`` or ``"pkg.module:MyDetector"``.
    The factory is called with the ``key=value`` options of ``--detector mine:key=value``."""


@pytest.hookspec(historic=True)
def pytest_grounding_register_formats(registry):
    """Add dataset formats: ``registry.register("myformat", Format(name, sniff, load))``."""


@pytest.hookspec(historic=True)
def pytest_grounding_register_strategies(registry):
    """Add cropping strategies: ``registry.register("mine", MyStrategy)``; the factory is called as
    ``MyStrategy(detector, **options)`` for ``--detector NAME+mine:key=value``."""


@pytest.hookspec(historic=True)
def pytest_grounding_register_presets(registry):
    """Add model presets for the VLM detectors: ``registry.register(Preset(...))`` or
    ``registry.register("mine", base="qwen2.5-vl", max_pixels=2000000)``; then
    ``--detector openai:preset=mine``."""


@pytest.hookspec(historic=True)
def pytest_grounding_register_perturbations(registry):
    """Add robustness axes for --grounding-perturb: ``registry.register("mine", factory)``, where
    ``factory(**options)`` returns a list of perturbations (pytest_grounding.perturb.base.Perturbation:
    a label, ``derive(sample, size)`` and ``render(image, sample)``) for ``--grounding-perturb mine:key=value``."""


@pytest.hookspec(historic=True)
def pytest_grounding_register_sections(registry):
    """Add report sections (pytest_grounding.sections.Section: one feature's figures, terminal lines,
    markdown, HTML, tracker metrics and schema fragment): ``registry.register("mine", MySection())``
    or ``"pkg.module:SECTION"``; the name is the section's own `name`."""
