"""Test support shipped for the project's tests, benchmarks and documented reproductions, never
imported by the harness itself (the top floor of the layers: nothing in the package imports it):
tiny.py builds a tiny random Qwen-VL checkpoint offline."""
