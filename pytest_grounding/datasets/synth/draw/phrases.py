"""How a person asks for an element: literal ("Click 'Save As'", "Select the Layers tab") and
functional ("Begin a recording.", "Undo the last change.").

Every phrase names the key it relies on being unique on the screen; the generator drops a phrase
when two things on the screen answer to its key (two "Save" labels, two record buttons, a save
icon and a Save menu item for "Save your work.").
"""

from __future__ import annotations

from collections.abc import Sequence

from .canvas import ElementSpec, Phrase
from .icons import ICON_INFO

# Functional phrasings by concept. "{ctx}" is the element's context (a track, a layer, a panel).
CONCEPTS: dict[str, tuple[str, ...]] = {
    "record": ("Begin a recording.", "Start recording."),
    "play": ("Start playback.", "Play the project from the playhead."),
    "pause": ("Pause playback.",),
    "stop": ("Stop playback.", "Stop the transport."),
    "skip_back": ("Go back to the beginning of the project.", "Return the playhead to the start."),
    "skip_forward": ("Jump to the end of the project.",),
    "rewind": ("Rewind a little.",),
    "fast_forward": ("Fast-forward a little.",),
    "loop": ("Turn on loop playback.", "Toggle looping of the selected region."),
    "metronome": ("Turn the click track on.", "Toggle the metronome."),
    "save": ("Save the current file.", "Save your work."),
    "save_as": ("Save a copy under a new name.",),
    "save_all": ("Save every open file.",),
    "open": ("Open an existing file.", "Browse for a file to open."),
    "new_file": ("Create a new file.", "Start a new document."),
    "search": ("Search the project.", "Find something in the workspace."),
    "zoom_in": ("Zoom in.", "Magnify the view."),
    "zoom_out": ("Zoom out.", "Make the view smaller."),
    "zoom_fit": ("Fit the whole drawing in the window.", "Zoom to fit everything."),
    "settings": ("Open the settings.", "Change the preferences."),
    "undo": ("Undo the last change.", "Revert the last action."),
    "redo": ("Redo the last undone action.", "Reapply what was just undone."),
    "brush": ("Switch to the brush tool.", "Paint with a brush."),
    "pencil": ("Draw a hard-edged freehand line.", "Pick the pencil tool."),
    "eraser": ("Erase part of the image.", "Select the eraser."),
    "fill": ("Fill an area with the foreground colour.",),
    "eyedropper": ("Sample a colour from the image.", "Pick a colour from the canvas."),
    "crop": ("Crop the image.", "Trim the canvas to a region."),
    "move": ("Move the selected layer.", "Switch to the move tool."),
    "select_rect": ("Make a rectangular selection.",),
    "pointer": ("Go back to the selection pointer.",),
    "text_tool": ("Add text to the image.", "Type some text on the canvas."),
    "visibility": ("Hide the {ctx} layer.", "Toggle the visibility of {ctx}."),
    "lock": ("Lock the {ctx} layer.", "Prevent edits to {ctx}."),
    "delete": ("Delete the selection.", "Remove the selected item."),
    "add": ("Add a new entry here.",),
    "close_panel": ("Close this panel.",),
    "refresh": ("Reload the data.", "Refresh the view."),
    "export": ("Export the result.", "Write the output to a file."),
    "import": ("Import data from a file.", "Bring in an external file."),
    "filter": ("Filter the list.", "Show only matching items."),
    "sort": ("Sort the data.", "Change the sort order."),
    "run": ("Run the program.", "Execute the current script."),
    "debug": ("Start debugging.", "Launch the debugger."),
    "step_over": ("Step over the current line.",),
    "explorer": ("Show the file explorer.",),
    "source_control": ("Open source control.", "Look at the uncommitted changes."),
    "extensions": ("Browse the extensions.", "Install a plugin."),
    "terminal": ("Open a terminal.", "Show a command prompt."),
    "copy": ("Copy the selection.",),
    "cut": ("Cut the selection to the clipboard.",),
    "paste": ("Paste from the clipboard.",),
    "notifications": ("Show the notifications.", "Check the alerts."),
    "account": ("Open your account.", "Manage the signed-in user."),
    "home": ("Go to the home page.",),
    "help": ("Get help.", "Open the documentation."),
    "info": ("Identify a feature on the map.", "Show details about what is clicked."),
    "bold": ("Make the text bold.",),
    "italic": ("Italicize the text.",),
    "underline": ("Underline the text.",),
    "autosum": ("Sum the selected cells.", "Insert a SUM formula."),
    "insert_function": ("Insert a function.",),
    "percent": ("Format the cells as percentages.",),
    "align_left": ("Align the text to the left.",),
    "align_center": ("Center the text.",),
    "align_right": ("Align the text to the right.",),
    "wrap_text": ("Wrap the text in the cell.",),
    "merge_cells": ("Merge the selected cells.",),
    "line": ("Draw a straight line.",),
    "circle": ("Draw a circle.",),
    "rectangle": ("Draw a rectangle.",),
    "polygon": ("Draw a polygon.",),
    "arc": ("Draw an arc.",),
    "rotate": ("Rotate the selected objects.",),
    "mirror": ("Mirror the selected objects.",),
    "measure": ("Measure a distance.", "Find the length between two points."),
    "snap": ("Toggle object snapping.",),
    "snap_grid": ("Snap to the grid.",),
    "placemark": ("Drop a placemark.", "Add a point feature."),
    "basemap": ("Change the basemap.",),
    "add_layer": ("Add a new layer.",),
    "add_track": ("Add a new track.",),
    "mute": ("Mute the {ctx} track.", "Silence {ctx}."),
    "solo": ("Solo the {ctx} track.", "Listen to {ctx} alone."),
    "arm": ("Arm the {ctx} track for recording.",),
    "minimize": ("Minimize the window.",),
    "maximize": ("Maximize the window.",),
    "close_window": ("Close the window.", "Quit this window."),
    "share": ("Share this with someone.",),
    "chart": ("Insert a chart.",),
    "table": ("Show the data as a table.",),
    "layers": ("Show the layers.",),
    "new_query": ("Write a new query.",),
    "database": ("Connect to a database.",),
    "mixer": ("Open the mixer.",),
    "piano_roll": ("Edit the notes in the piano roll.",),
    "waveform": ("Show the audio waveform editor.",),
    "breakpoint": ("Toggle a breakpoint.",),
    "wifi": ("Open the Wi-Fi settings.",),
    "bluetooth": ("Manage Bluetooth devices.",),
    "power": ("Open the power options.",),
    "display": ("Change the display settings.",),
    "keyboard": ("Change the keyboard layout.",),
    "battery": ("Check the battery status.",),
    "calendar": ("Show the calendar.",),
    "split": ("Split the editor.",),
    "start": ("Open the Start menu.",),
}

# What a labelled control is for, asked without its label ("Restore the factory settings." for
# "Reset to Defaults"): functional phrasings of text targets, keyed by the exact label.
TEXT_FUNCTIONS: dict[str, tuple[str, ...]] = {
    # buttons
    "Apply": ("Apply the changes.",),
    "Reset to Defaults": ("Restore the factory settings.",),
    "Cancel": ("Dismiss the dialog without doing anything.",),
    "Check for Updates": ("See whether a newer version is available.",),
    "Sync Now": ("Synchronize the clock right away.",),
    "Manage Apps...": ("Choose which apps may send notifications.",),
    "Export Selection": ("Export only the selected items.",),
    "Print Preview": ("See how the printout will look.",),
    "Replace All": ("Replace every match at once.",),
    "Plot Preview": ("Preview the plot before sending it.",),
    "Save dashboard": ("Keep the changes made to this dashboard.",),
    "Export CSV": ("Download the data as a CSV file.",),
    "Processing Toolbox": ("Open the geoprocessing algorithms.",),
    "Field Calculator": ("Compute a new attribute column.",),
    "Select by Expression": ("Select features with a formula.",),
    "Select by Location": ("Select features by where they lie relative to another layer.",),
    "Insert Sheet Rows": ("Add rows above the selected cells.",),
    "Format as Table": ("Turn the range into a styled table.",),
    "Find & Select": ("Look for a value in the sheet.",),
    # tabs and ribbon tabs
    "Problems": ("List the errors and warnings.",),
    "Output": ("Show the program output.",),
    "Debug Console": ("Open the debugger's console.",),
    "Ports": ("Show the forwarded ports.",),
    "Swatches": ("Pick from the saved colours.",),
    "Gradients": ("Choose a colour gradient.",),
    "Channels": ("Show the colour channels.",),
    "Paths": ("Show the vector paths.",),
    "Page Layout": ("Change the margins and orientation of the page.",),
    "Formulas": ("Browse the function library.",),
    "Review": ("Check spelling and add comments.",),
    "Annotate": ("Add dimensions and notes to the drawing.",),
    "Parametric": ("Apply geometric constraints.",),
    "Express Tools": ("Open the extra productivity tools.",),
    "Model": ("Go back to model space.",),
    "Automate": ("Record a script for repetitive work.",),
    # menus and menu items
    "Show Grid": ("Display the grid.",),
    "Show Rulers": ("Display the rulers.",),
    "Full Screen": ("Hide everything but the document.",),
    "Duplicate Layer": ("Make a copy of the current layer.",),
    "Merge Down": ("Combine the layer with the one below it.",),
    "Flatten Image": ("Merge all layers into one.",),
    "Paste Special...": ("Paste only the values or the formatting.",),
    "Exit": ("Quit the application.",),
    "Open Recent": ("Reopen a file you worked on lately.",),
    "Find and Replace": ("Substitute one word for another everywhere.",),
    # navigation
    "Dashboards": ("Browse all dashboards.",),
    "Alerting": ("Manage the alert rules.",),
    "Data sources": ("Configure where the metrics come from.",),
    "Explore": ("Run an ad-hoc query.",),
    "Administration": ("Manage the organisation.",),
    "Displays": ("Open the screen settings.",),
    "Sound": ("Open the audio settings.",),
    "Privacy & Security": ("Review which apps may use the camera.",),
    "Users & Groups": ("Add another user account.",),
    "Date & Time": ("Open the clock settings.",),
    "Wallpaper": ("Change the desktop background.",),
    "Notifications": ("Open the alert settings.",),
    # status bar
    "UTF-8": ("Change the file encoding.",),
    "LF": ("Change the line endings.",),
    "Spaces: 4": ("Change the indentation.",),
    "RGB/8": ("Change the colour mode.",),
    "Ready": ("Click the sheet's status message.",),
    # files
    "conftest.py": ("Open the file with the shared test fixtures.",),
    "pyproject.toml": ("Open the project's packaging metadata.",),
    "requirements.txt": ("Open the list of pinned dependencies.",),
    "Dockerfile": ("Open the container build recipe.",),
    "Makefile": ("Open the file with the build targets.",),
    "README.md": ("Open the project's readme.",),
    ".gitignore": ("Open the list of files git ignores.",),
    "requirements-dev.txt": ("Open the development dependencies.",),
    # layers, tracks, rooms, metrics
    "Rivers": ("Select the layer with the waterways.",),
    "Roads": ("Select the layer with the street network.",),
    "Contours 10m": ("Select the layer with the elevation lines.",),
    "Bus Stops": ("Select the layer of transit stops.",),
    "Flood Zones": ("Select the layer of flood risk areas.",),
    "Satellite Imagery": ("Select the aerial photo layer.",),
    "Administrative Boundaries": ("Select the layer of district borders.",),
    "Parcels": ("Select the land parcel layer.",),
    "Lead Vocal": ("Select the main singer's track.",),
    "Kick": ("Select the bass drum track.",),
    "Claps": ("Select the hand-clap track.",),
    "Sub Bass": ("Select the lowest bass track.",),
    "KITCHEN": ("Click the label of the room where meals are cooked.",),
    "BATH": ("Click the label of the room with the shower.",),
    "Error rate": ("Open the card that shows how often requests fail.",),
    "p95 latency": ("Open the card with the tail latency.",),
    "Owner": ("Click the header of the team column.",),
}

# What a menu holds, for asking to open it without naming it.
MENU_FUNCTIONS: dict[str, tuple[str, ...]] = {
    "Edit": ("Open the menu with copy and paste.",),
    "View": ("Open the menu that controls what is shown.",),
    "Window": ("Open the menu for arranging windows.",),
    "Run": ("Open the menu for running and debugging.",),
    "Go": ("Open the navigation menu.",),
    "Selection": ("Open the menu for multi-cursor editing.",),
    "Image": ("Open the menu for resizing the image.",),
    "Filter": ("Open the menu with blur and sharpen effects.",),
    "Select": ("Open the menu with the selection commands.",),
    "Type": ("Open the menu with the typography commands.",),
    "Format": ("Open the menu for formatting cells.",),
    "Data": ("Open the menu for sorting and filtering data.",),
    "Insert": ("Open the menu for adding objects.",),
    "Track": ("Open the menu for adding and routing tracks.",),
    "Clip": ("Open the menu for editing clips.",),
    "Create": ("Open the menu for making new tracks and clips.",),
    "Draw": ("Open the menu of drawing commands.",),
    "Dimension": ("Open the menu for adding dimensions.",),
    "Modify": ("Open the menu for changing existing objects.",),
    "Project": ("Open the menu with the project file commands.",),
    "Vector": ("Open the menu of vector analysis tools.",),
    "Raster": ("Open the menu of raster analysis tools.",),
    "Processing": ("Open the menu of processing algorithms.",),
    "Plugins": ("Open the menu for managing plugins.",),
    "Profiles": ("Open the menu of terminal profiles.",),
    "Session": ("Open the menu for the shell session.",),
    "Help": ("Open the menu with the documentation.",),
}

# Literal phrasings by role; "{label}" is the visible text, "{ctx}" the element's context.
ROLE_TEMPLATES: dict[str, tuple[str, ...]] = {
    "menu": ("Open the {label} menu.", "Click '{label}' in the menu bar."),
    "menu item": ("Click '{label}' in the {ctx} menu.", "Choose {label} from the {ctx} menu."),
    "tab": ("Select the {label} tab.", "Switch to the '{label}' tab."),
    "button": ("Click the '{label}' button.", "Press {label}."),
    "toolbar button": ("Click '{label}' in the toolbar.", "Click the {label} button."),
    "tree item": ("Select '{label}' in the {ctx}.", "Click {label} in the {ctx}."),
    "list item": ("Select '{label}' in the {ctx}.", "Click '{label}' in the list."),
    "nav item": ("Go to {label}.", "Open the {label} page."),
    "label": ("Click '{label}'.", "Click the text '{label}'."),
    "status item": ("Click '{label}' in the status bar.", "Click the status bar entry '{label}'."),
    "column header": ("Click the {label} column header.", "Click the header of the {label} column."),
    "layer": ("Select the {label} layer.", "Click the layer named {label}."),
    "track name": ("Select the {label} track.", "Click the name of the {label} track."),
    "clip": ("Select the clip '{label}'.", "Click the {label} clip."),
    "link": ("Click the '{label}' link.", "Follow the {label} link."),
    "sheet tab": ("Switch to the {label} sheet.", "Open the '{label}' worksheet."),
    "chip": ("Click the '{label}' filter chip.", "Remove the {label} filter."),
    "card": ("Open the {label} card.", "Click the '{label}' tile."),
    "cell": ("Click the cell containing '{label}'.", "Select the cell that shows {label}."),
    "legend item": ("Click '{label}' in the chart legend.",),
    "window title": ("Click the window title '{label}'.",),
}


def _fill(template: str, label: str = "", ctx: str | None = None) -> str:
    return template.replace("{label}", label).replace("{ctx}", ctx or "")


def concept_phrases(concept: str | None, ctx: str | None) -> tuple[Phrase, ...]:
    if not concept or concept not in CONCEPTS:
        return ()
    out = []
    for template in CONCEPTS[concept]:
        if "{ctx}" in template:
            if ctx:
                out.append(Phrase(_fill(template, ctx=ctx), "functional", ("concept", concept, ctx)))
        else:
            out.append(Phrase(template, "functional", ("concept", concept, None)))
    return tuple(out)


def text_spec(
    label: str,
    role: str,
    ctx: str | None = None,
    concept: str | None = None,
    element_type: str = "text",
    targetable: bool = True,
) -> ElementSpec:
    """A visible string the user can be asked to click by its text (or by what it does)."""
    phrases = []
    for template in ROLE_TEMPLATES.get(role, ROLE_TEMPLATES["label"]):
        if "{ctx}" in template:
            if ctx:
                phrases.append(Phrase(_fill(template, label, ctx), "literal", ("text", label.lower(), ctx)))
        else:
            phrases.append(Phrase(_fill(template, label), "literal", ("text", label.lower(), None)))
    phrases.extend(concept_phrases(concept, ctx))
    purpose = ("purpose", label.lower(), None)  # one label, one purpose: two "Export" buttons cancel out
    purposes = MENU_FUNCTIONS.get(label, ()) if role == "menu" else TEXT_FUNCTIONS.get(label, ())
    phrases.extend(Phrase(text, "functional", purpose) for text in purposes)
    keys = (("concept", concept, None),) if concept else ()
    return ElementSpec(element_type, role, tuple(phrases), keys, targetable)


def icon_spec(
    kind: str,
    concept: str | None,
    ctx: str | None = None,
    role: str = "toolbar button",
    extra: Sequence[Phrase] = (),
) -> ElementSpec:
    """An icon-only control: asked for by its look ("the gear icon") or by what it does."""
    description = ICON_INFO[kind].description
    phrases = [Phrase(f"Click the {description} icon.", "literal", ("icon", kind, None))]
    if ctx:
        phrases.append(Phrase(f"Click the {description} icon in the {ctx}.", "literal", ("icon", kind, ctx)))
    phrases.extend(concept_phrases(concept, ctx))
    phrases.extend(extra)
    keys = (("concept", concept, None),) if concept else ()
    return ElementSpec("icon", role, tuple(phrases), keys)


def other_spec(
    role: str, subject: str, literal: Sequence[str], functional: Sequence[str] = (), element_type: str = "other"
) -> ElementSpec:
    """A control that is neither a label nor an icon (checkbox, slider, swatch, field, scrollbar,
    cell): `subject` says what it is ("checkbox:Snap to grid") and must be unique on the screen."""
    key = (role, subject.lower(), None)
    phrases = tuple(Phrase(t, "literal", key) for t in literal) + tuple(
        Phrase(t, "functional", key) for t in functional
    )
    return ElementSpec(element_type, role, phrases, ())
