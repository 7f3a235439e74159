"""python -m pytest_grounding: the commands beside the plugin (generate, validate, report, compare, ...)."""
