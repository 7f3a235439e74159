"""The public home of the domain types (`from pytest_grounding.types import Box`); they live in
`pytest_grounding.core.types`."""

from .core.types import ELEMENT_TYPES, Box, Point, Prediction, Query, Sample, image_digest

__all__ = ["ELEMENT_TYPES", "Box", "Point", "Prediction", "Query", "Sample", "image_digest"]
