"""Colours, screen sizes and platform styles the generator draws with.

Palettes are hand-picked so that small text keeps a readable contrast on every surface it is
drawn on (labels on panels, on fields, on the accent colour).
"""

from __future__ import annotations

from dataclasses import dataclass

RGB = tuple[int, int, int]


@dataclass(frozen=True)
class Theme:
    name: str
    dark: bool
    desktop: RGB  # behind the window (visible around it on some screens)
    titlebar: RGB
    title_text: RGB
    menubar: RGB
    toolbar: RGB
    panel: RGB  # side and bottom panels
    header: RGB  # panel headers, table headers, inactive tabs
    content: RGB  # editor, canvas, grid: the document area
    border: RGB
    text: RGB
    text_dim: RGB
    accent: RGB
    accent_text: RGB  # text drawn on the accent colour
    selection: RGB  # selected row in a list or tree
    field: RGB  # text fields, dropdowns
    field_border: RGB
    button: RGB
    button_border: RGB
    icon: RGB
    grid: RGB  # cell and ruler lines in the document area
    keyword: RGB
    string: RGB
    comment: RGB
    number: RGB
    function: RGB


THEMES: tuple[Theme, ...] = (
    Theme(
        name="light",
        dark=False,
        desktop=(0, 90, 158),
        titlebar=(243, 243, 243),
        title_text=(30, 30, 30),
        menubar=(248, 248, 248),
        toolbar=(240, 240, 240),
        panel=(246, 246, 246),
        header=(230, 230, 230),
        content=(255, 255, 255),
        border=(204, 204, 204),
        text=(28, 28, 28),
        text_dim=(96, 96, 96),
        accent=(0, 103, 192),
        accent_text=(255, 255, 255),
        selection=(204, 228, 247),
        field=(255, 255, 255),
        field_border=(160, 160, 160),
        button=(253, 253, 253),
        button_border=(173, 173, 173),
        icon=(52, 52, 52),
        grid=(218, 220, 224),
        keyword=(0, 0, 200),
        string=(163, 21, 21),
        comment=(0, 128, 0),
        number=(9, 134, 88),
        function=(121, 94, 38),
    ),
    Theme(
        name="light-blue",
        dark=False,
        desktop=(58, 110, 165),
        titlebar=(33, 115, 70),
        title_text=(255, 255, 255),
        menubar=(243, 242, 241),
        toolbar=(243, 242, 241),
        panel=(250, 249, 248),
        header=(225, 223, 221),
        content=(255, 255, 255),
        border=(200, 198, 196),
        text=(32, 31, 30),
        text_dim=(96, 94, 92),
        accent=(16, 110, 190),
        accent_text=(255, 255, 255),
        selection=(210, 230, 245),
        field=(255, 255, 255),
        field_border=(138, 136, 134),
        button=(255, 255, 255),
        button_border=(138, 136, 134),
        icon=(50, 49, 48),
        grid=(212, 212, 212),
        keyword=(175, 0, 219),
        string=(163, 21, 21),
        comment=(106, 153, 85),
        number=(9, 134, 88),
        function=(0, 92, 197),
    ),
    Theme(
        name="dark",
        dark=True,
        desktop=(24, 24, 24),
        titlebar=(50, 50, 51),
        title_text=(204, 204, 204),
        menubar=(50, 50, 51),
        toolbar=(45, 45, 48),
        panel=(37, 37, 38),
        header=(51, 51, 52),
        content=(30, 30, 30),
        border=(68, 68, 70),
        text=(212, 212, 212),
        text_dim=(150, 150, 150),
        accent=(14, 99, 156),
        accent_text=(255, 255, 255),
        selection=(9, 71, 113),
        field=(60, 60, 60),
        field_border=(90, 90, 92),
        button=(63, 63, 70),
        button_border=(85, 85, 90),
        icon=(197, 197, 197),
        grid=(56, 56, 58),
        keyword=(86, 156, 214),
        string=(206, 145, 120),
        comment=(106, 153, 85),
        number=(181, 206, 168),
        function=(220, 220, 170),
    ),
    Theme(
        name="dark-gray",
        dark=True,
        desktop=(40, 40, 40),
        titlebar=(35, 35, 35),
        title_text=(220, 220, 220),
        menubar=(43, 43, 43),
        toolbar=(56, 56, 56),
        panel=(66, 66, 66),
        header=(52, 52, 52),
        content=(40, 40, 40),
        border=(30, 30, 30),
        text=(224, 224, 224),
        text_dim=(165, 165, 165),
        accent=(71, 114, 179),
        accent_text=(255, 255, 255),
        selection=(84, 84, 84),
        field=(42, 42, 42),
        field_border=(28, 28, 28),
        button=(84, 84, 84),
        button_border=(36, 36, 36),
        icon=(214, 214, 214),
        grid=(58, 58, 58),
        keyword=(204, 120, 50),
        string=(106, 135, 89),
        comment=(128, 128, 128),
        number=(104, 151, 187),
        function=(255, 198, 109),
    ),
    Theme(
        name="midnight",
        dark=True,
        desktop=(10, 14, 24),
        titlebar=(22, 27, 34),
        title_text=(201, 209, 217),
        menubar=(22, 27, 34),
        toolbar=(22, 27, 34),
        panel=(13, 17, 23),
        header=(33, 38, 45),
        content=(13, 17, 23),
        border=(48, 54, 61),
        text=(201, 209, 217),
        text_dim=(139, 148, 158),
        accent=(31, 111, 235),
        accent_text=(255, 255, 255),
        selection=(23, 52, 96),
        field=(1, 4, 9),
        field_border=(48, 54, 61),
        button=(33, 38, 45),
        button_border=(54, 60, 68),
        icon=(177, 186, 196),
        grid=(33, 38, 45),
        keyword=(255, 123, 114),
        string=(165, 214, 255),
        comment=(139, 148, 158),
        number=(121, 192, 255),
        function=(210, 168, 255),
    ),
)

LIGHT_THEMES = tuple(t for t in THEMES if not t.dark)
DARK_THEMES = tuple(t for t in THEMES if t.dark)

# (width, height, weight): the common desktop sizes, one 4:3, and an ultra-wide.
RESOLUTIONS: tuple[tuple[int, int, int], ...] = (
    (1024, 768, 2),
    (1280, 800, 2),
    (1366, 768, 2),
    (1440, 900, 2),
    (1920, 1080, 6),
    (2560, 1440, 3),
    (3440, 1440, 2),
)

PLATFORMS: tuple[str, ...] = ("windows", "macos", "linux")

# Colours that mean something in real software: record is red, play is green, folders are yellow.
SEMANTIC_COLORS = {
    "red": (220, 53, 53),
    "green": (52, 168, 83),
    "yellow": (230, 176, 40),
    "blue": (50, 130, 220),
    "orange": (235, 125, 35),
    "purple": (140, 90, 200),
}

# Clip, track and chart colours (mid-saturation, readable with white or black labels).
PALETTE: tuple[RGB, ...] = (
    (86, 156, 214),
    (214, 105, 86),
    (106, 176, 96),
    (200, 160, 60),
    (160, 110, 200),
    (70, 170, 170),
    (220, 120, 170),
    (130, 140, 150),
    (230, 140, 60),
    (90, 120, 210),
)


def mix(a: RGB, b: RGB, t: float) -> RGB:
    """a blended towards b by t (0..1)."""
    return (round(a[0] + (b[0] - a[0]) * t), round(a[1] + (b[1] - a[1]) * t), round(a[2] + (b[2] - a[2]) * t))


def luminance(color: RGB) -> float:
    r, g, b = color
    return (0.299 * r + 0.587 * g + 0.114 * b) / 255.0


def text_on(color: RGB) -> RGB:
    """Black or white, whichever reads on `color`."""
    return (20, 20, 20) if luminance(color) > 0.55 else (250, 250, 250)
