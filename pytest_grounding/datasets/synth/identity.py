"""The generated set's identity and layout, apart from the code that finds it (default.py) and the
code that draws it (generator.py), which both read them."""

# Bump whenever the output for a given seed changes: the default set's cache folder is keyed on it.
GENERATOR_VERSION = 1
DEFAULT_COUNT = 300
DEFAULT_SEED = 0
SPLIT = ("data", "test")
METADATA = "metadata.jsonl"
