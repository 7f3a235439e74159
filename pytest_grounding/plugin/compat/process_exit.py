"""The end of a grounding process: what the run leaves behind is taken out of the garbage
collector's sight once the run is over, so the process exits without walking it again and again.

A pytest process ends with many full collections: pytest's unraisable-exception check collects
five times after the session (to surface a `__del__` that raised) and the interpreter collects
again as it shuts down. Each walks every object the run left (~80,000: modules, items, reports,
records), 40 ms each on a 2-core machine, and under xdist the controller waits for its workers'
before its own: half a second after the last answer of a served run. So at the very end of a
grounding session (its last `pytest_unconfigure`) one collection runs, which collects what is
garbage then (a `__del__` that raises there is still reported by pytest), and `gc.freeze()`
moves the survivors out of the later collections' way.

Not done for a session that scored no sample and made no grounding item (a project's other
tests), nor for one inside another (pytester's in-process
runs, a test calling `pytest.main`): that process goes on. A later session in the same process
(a script calling `pytest.main` in a loop) unfreezes first, so nothing stays out of reach."""

from __future__ import annotations

import gc

from .pytest_compat import mains_running

_sessions: list[list[bool]] = []  # the grounding sessions open in this process: [inside another?, items made?]
_frozen = False  # this module froze the heap (and nobody else's freeze is undone here)


def session_opened() -> None:
    global _frozen
    if not _sessions and _frozen:
        gc.unfreeze()
        _frozen = False
    _sessions.append([mains_running() > 1, False])


def items_made() -> None:
    """The innermost session collected grounding items (a --collect-only run ends like a run: its
    samples and items are the heap the last collections would walk)."""
    if _sessions:
        _sessions[-1][1] = True


def session_closed(scored: bool) -> None:
    """`scored`: this process ran or received grounding samples."""
    global _frozen
    inside_another, made = _sessions.pop() if _sessions else (True, False)
    if _sessions or inside_another or not (scored or made):
        return
    gc.collect()
    gc.freeze()
    _frozen = True
