"""Replaying predictions made elsewhere: the files (files.py), matching rows to samples
(match.py), our verdict beside the file's own (agreement.py) and ScreenSpot-Pro's official
`metrics` recomputed from records (official.py). The detector is detectors/replay.py; the run-level
check (answers that match no sample) is check.py. All pure but for reading the file."""

from .files import Answer, ReplayError, ReplayFile, read_replay_file
from .match import Index, Match

__all__ = ["Answer", "Index", "Match", "ReplayError", "ReplayFile", "read_replay_file"]
