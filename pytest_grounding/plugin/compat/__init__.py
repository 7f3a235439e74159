"""The hosts' internals, fenced: pytest, pytest-xdist and pytest-benchmark details, each with a test."""
