"""Curation: turn an application's own screens into a `harness` dataset (annotations.json).

`annotate` drafts elements from a parser, `review` lets a person accept, reject and fix them in the
terminal, `record` saves real clicks on an X11 desktop. Pure parts (the file model, the box edits, the
review's state machine, the recorded dataset) are apart from the I/O (the terminal UI, the preview
images, the X11 recorder); prompt_toolkit, mss and pynput are imported only by the command that needs them.
"""
