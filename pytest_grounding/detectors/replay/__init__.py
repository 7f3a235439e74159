"""Replaying predictions made elsewhere: the detector (detector.py), the files (files.py),
matching rows to samples (match.py), our verdict beside the file's own per record (agreement.py).
Over a run: analysis/agreement.py (tallies), analysis/official_metrics.py (ScreenSpot-Pro's own
`metrics`), sections/replay_text.py (the summary block), plugin/common/replay.py (the run-level check). All pure
but for reading the file."""

from .detector import ReplayDetector
from .files import Answer, ReplayError, ReplayFile, read_replay_file
from .match import Index, Match

__all__ = ["Answer", "Index", "Match", "ReplayDetector", "ReplayError", "ReplayFile", "read_replay_file"]
