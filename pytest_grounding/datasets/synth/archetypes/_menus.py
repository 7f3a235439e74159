"""The menus the generator drops open under a window's menu bar, and their items."""

from __future__ import annotations

from collections.abc import Sequence

from ..draw.widgets import UI

# What an open menu holds, with the near-identical labels that make good distractors.
MENU_ITEMS: dict[str, tuple[tuple[str, str, str | None], ...]] = {
    "File": (
        ("New", "Ctrl+N", "new_file"),
        ("Open...", "Ctrl+O", "open"),
        ("Open Recent", "", None),
        ("-", "", None),
        ("Save", "Ctrl+S", "save"),
        ("Save As...", "Ctrl+Shift+S", "save_as"),
        ("Save All", "", "save_all"),
        ("-", "", None),
        ("Export", "", None),
        ("Export Selection...", "", None),
        ("-", "", None),
        ("Close", "Ctrl+W", None),
        ("Exit", "", None),
    ),
    "Edit": (
        ("Undo", "Ctrl+Z", "undo"),
        ("Redo", "Ctrl+Y", "redo"),
        ("-", "", None),
        ("Cut", "Ctrl+X", "cut"),
        ("Copy", "Ctrl+C", "copy"),
        ("Copy Special", "", None),
        ("Paste", "Ctrl+V", "paste"),
        ("Paste Special...", "", None),
        ("-", "", None),
        ("Find", "Ctrl+F", None),
        ("Find and Replace", "Ctrl+H", None),
        ("Preferences", "", "settings"),
    ),
    "View": (
        ("Zoom In", "Ctrl++", "zoom_in"),
        ("Zoom Out", "Ctrl+-", "zoom_out"),
        ("Zoom to Fit", "", None),
        ("-", "", None),
        ("Show Grid", "", None),
        ("Show Rulers", "", None),
        ("Full Screen", "F11", None),
        ("Appearance", "", None),
    ),
    "Layer": (
        ("New Layer", "Ctrl+Shift+N", None),
        ("Duplicate Layer", "", None),
        ("Delete Layer", "", None),
        ("-", "", None),
        ("Layer Properties...", "", None),
        ("Layer Style", "", None),
        ("Merge Down", "Ctrl+E", None),
        ("Flatten Image", "", None),
    ),
}


def open_menu_for(ui: UI, menus: Sequence[str], positions: dict[str, int], top: int) -> None:
    """Drop one of the menus that has items down under its title."""
    candidates = [m for m in menus if m in MENU_ITEMS and m in positions]
    if not candidates:
        return
    menu = ui.rng.choice(candidates)
    ui.open_menu(positions[menu] - ui.px(4), top, menu, MENU_ITEMS[menu])
