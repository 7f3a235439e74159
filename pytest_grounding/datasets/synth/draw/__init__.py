"""The drawing kit every screen is made from: the canvas that records each element as it is drawn,
widgets, themes, icons, phrases and the vendored fonts. It knows no archetype and no generator."""
