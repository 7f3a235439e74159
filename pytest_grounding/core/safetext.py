"""Data-derived text made safe for a terminal: ids, instructions, app names, answers and server
error texts may hold escape sequences (clear the screen, set the title, move the cursor) or CR/LF
(forge a line of their own). Control characters are shown escaped (`\\x1b`, `\\r`, `\\n`), as are
the Unicode controls that reorder or hide text. Pure."""

from __future__ import annotations

import re

# C0 (but tab), DEL, C1, the bidirectional overrides and isolates, the line/paragraph separators.
_CONTROLS = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_CONTROLS_BUT_NEWLINE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def terminal_line(text: object) -> str:
    """One line for the terminal: every control character, CR and LF included, shown escaped."""
    return _CONTROLS.sub(_escape, str(text))


def terminal_text(text: object) -> str:
    """Several lines (a traceback): newlines kept, every other control character shown escaped."""
    return _CONTROLS_BUT_NEWLINE.sub(_escape, str(text))


def terminal_traceback(failure: BaseException) -> str:
    """A traceback whose exception messages (the data-derived part) are each one escaped line, so
    a message with CR/LF cannot add lines of its own; the frames keep their layout."""
    import traceback

    root = traceback.TracebackException.from_exception(failure)
    seen: set[int] = set()
    pending = [root]
    while pending:
        part = pending.pop()
        if id(part) in seen:
            continue
        seen.add(id(part))
        message = getattr(part, "_str", None)  # the message as format() prints it (no public field)
        if isinstance(message, str):
            setattr(part, "_str", terminal_line(message))  # noqa: B010
        pending += [p for p in (part.__cause__, part.__context__) if p is not None]
    return terminal_text("".join(root.format()))


# `_` inside a word (element_type) emphasises nothing in GFM: escaped only at a word's edge
_MARKDOWN = re.compile(r"[\\`*\[\]|~!$]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def markdown_text(text: object) -> str:
    """Data as inert GitHub-flavoured markdown on one line (a table cell, a list item): HTML
    (`<!--`, `<img>`, entities) shown as text, markdown punctuation (emphasis, links, images, code,
    pipes) backslash-escaped, control characters and CR/LF shown escaped."""
    line = terminal_line(text)
    line = "".join(_HTML.get(char, char) for char in line)
    return _MARKDOWN.sub(lambda m: "\\" + m.group(0), line)
