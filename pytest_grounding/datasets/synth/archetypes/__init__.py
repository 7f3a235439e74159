"""Screens of professional software, one module per archetype: each module draws its window body
with `compose(ui, body, app, document)`, from widgets, with content that varies with the screen's
rng (panel sizes, which panels are shown, names, data, an open dialog), and describes itself in
`ARCHETYPE`. Helpers they share are in `_layout`; the menus the generator drops open, in `_menus`.
"""

from __future__ import annotations

from . import analytics, cad, daw, gis, ide, image_editor, settings, spreadsheet, terminal
from ._layout import Archetype
from ._menus import MENU_ITEMS, open_menu_for

# Screen i of a set is drawn as ARCHETYPES[(i + seed) % len(ARCHETYPES)]: this order, and the
# number of archetypes, are part of every generated set (add a new one at the end, and bump
# GENERATOR_VERSION and the golden digests, since every screen after the change moves).
ARCHETYPES: tuple[Archetype, ...] = (
    ide.ARCHETYPE,
    daw.ARCHETYPE,
    cad.ARCHETYPE,
    gis.ARCHETYPE,
    image_editor.ARCHETYPE,
    spreadsheet.ARCHETYPE,
    analytics.ARCHETYPE,
    terminal.ARCHETYPE,
    settings.ARCHETYPE,
)

ARCHETYPES_BY_NAME: dict[str, Archetype] = {a.name: a for a in ARCHETYPES}

__all__ = ["ARCHETYPES", "ARCHETYPES_BY_NAME", "MENU_ITEMS", "Archetype", "open_menu_for"]
