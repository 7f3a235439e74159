"""Another harness's result file checked against this plugin's scoring, without its dataset: every
row that carries its own target box and verdict (ScreenSpot-Pro's official results, OmniParser's
published log) is scored by this plugin's rule against that box, and the verdicts are compared.

    python benchmarks/replay_selfcheck.py path/to/logs_sspro_omniv2.json

Prints the rows compared, how many verdicts agree, and each disagreement with its reason.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_grounding.detectors.replay.agreement import against_own_targets
from pytest_grounding.detectors.replay.files import ReplayError, read_replay_file


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path, help="a predictions file whose rows carry bbox and a verdict")
    args = parser.parse_args(argv)
    try:
        replay = read_replay_file(args.file)
    except ReplayError as exc:
        print(exc, file=sys.stderr)
        return 2
    found = against_own_targets(replay.answers, file=str(args.file), fmt=replay.format)
    theirs = sum(1 for a in replay.answers if a.their_correct)
    ours = theirs + sum(1 if d["ours"] == "hit" else -1 for d in found["disagreements"])
    total = len(replay.answers)
    print(f"{args.file}: {replay.format}, {total} rows; {found['compared']} carry their own box and verdict")
    print(f"verdicts: {found['agree']} agree, {len(found['disagreements'])} differ")
    print(
        f"accuracy: the file's {theirs}/{total} = {theirs / total:.2%}; "
        f"by this plugin's rule {ours}/{total} = {ours / total:.2%}"
    )
    kinds = Counter(str(d["reason"]).split(" (")[0].split(":")[0] for d in found["disagreements"])
    for kind, count in kinds.most_common():
        print(f"  {count:5d}  {kind}")
    for item in found["disagreements"]:
        print(f"  row {item['row']}: ours {item['ours']}, theirs {item['theirs']}: {item['reason']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
