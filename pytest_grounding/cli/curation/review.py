"""The review's state machine (pure): the current element, and what each decision does to the
document. The terminal UI (tui.py) asks the keys and saves after every call that changes something."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .boxedit import PixelBox
from .document import (
    ACCEPTED,
    DRAFT,
    REJECTED,
    REVIEW_KEY,
    ElementRef,
    element_of,
    element_refs,
    next_draft,
    resume_index,
    status_of,
)

DIGITS = 10  # normalized coordinates: a millionth of a pixel on a 10,000 px side; whole pixels read back whole


def to_pixels(bbox: Any, width: int, height: int) -> PixelBox | None:
    try:
        x1, y1, x2, y2 = (float(v) for v in bbox)
    except (TypeError, ValueError):
        return None
    return (x1 * width, y1 * height, x2 * width, y2 * height)


def to_normalized(box: PixelBox, width: int, height: int) -> list[float]:
    x1, y1, x2, y2 = box
    return [
        round(x1 / width, DIGITS),
        round(y1 / height, DIGITS),
        round(x2 / width, DIGITS),
        round(y2 / height, DIGITS),
    ]


def instruction_of(element: dict[str, Any]) -> str:
    return str(element.get("instruction") or element.get("text") or "")


@dataclass
class Review:
    """The document under review and the element shown. Every method that changes the document
    also moves the stored resume position, so that a save after it is complete."""

    document: dict[str, Any]
    refs: list[ElementRef] = field(default_factory=list)
    index: int | None = None

    @classmethod
    def start(cls, document: dict[str, Any]) -> Review:
        refs = element_refs(document)
        return cls(document, refs, resume_index(document, refs))

    @property
    def done(self) -> bool:
        return self.index is None

    @property
    def ref(self) -> ElementRef:
        if self.index is None:
            raise LookupError("nothing left to review")
        return self.refs[self.index]

    @property
    def element(self) -> dict[str, Any]:
        return element_of(self.document, self.ref)

    @property
    def sample(self) -> dict[str, Any]:
        return self.document["samples"][self.ref.sample]

    def size(self) -> tuple[int, int] | None:
        """The screen's size from the document (the UI fills it in from the image when it is absent)."""
        try:
            width, height = int(self.sample["width"]), int(self.sample["height"])
        except (KeyError, TypeError, ValueError):
            return None
        return (width, height) if width > 0 and height > 0 else None

    def _known_size(self) -> tuple[int, int]:
        size = self.size()
        if size is None:
            raise ValueError(f"screen {self.ref.key.split('/')[0]} has no known size: its box cannot be edited")
        return size

    def pixel_box(self) -> PixelBox | None:
        size = self.size()
        return to_pixels(self.element.get("bbox"), *size) if size else None

    def position(self) -> tuple[int, int]:
        """(1-based number of the element shown, number of elements)."""
        return ((self.index or 0) + 1, len(self.refs))

    # --- decisions ---------------------------------------------------------------------------
    def accept(self) -> None:
        self._decide(ACCEPTED)

    def reject(self) -> None:
        self._decide(REJECTED)

    def skip(self) -> None:
        """Leave it a draft and show the next draft (a skipped one comes round again at the end)."""
        if self.index is not None:
            found = next_draft(self.document, self.refs, self.index)
            self._move(found)

    def set_box(self, box: PixelBox) -> None:
        self.element["bbox"] = to_normalized(box, *self._known_size())
        self.element.pop("click_point", None)  # a point recorded for the old box may now lie outside it
        self._remember()

    def set_instruction(self, text: str) -> None:
        self.element["instruction"] = " ".join(text.split())
        self._remember()

    def add_element(self, box: PixelBox, instruction: str) -> None:
        """A person's own element on the current screen: accepted as it is made, shown next."""
        sample = self.sample
        taken = {str(e.get("id")) for e in sample["elements"]}
        number = len(sample["elements"])
        while f"added{number}" in taken:
            number += 1
        sample["elements"].append(
            {
                "id": f"added{number}",
                "bbox": to_normalized(box, *self._known_size()),
                "instruction": " ".join(instruction.split()),
                "type": "other",
                "status": ACCEPTED,
                "source": "review",
            }
        )
        current = self.ref
        self.refs = element_refs(self.document)
        self.index = self.refs.index(current)
        self._remember()

    def _decide(self, status: str) -> None:
        self.element["status"] = status
        found = next_draft(self.document, self.refs, self.index or 0)
        self._move(found)

    def _move(self, index: int | None) -> None:
        self.index = index
        self._remember()

    def _remember(self) -> None:
        review = self.document.setdefault(REVIEW_KEY, {})
        if self.index is None:
            review.pop("at", None)
        else:
            review["at"] = self.refs[self.index].key

    def drafts_left(self) -> int:
        return sum(1 for ref in self.refs if status_of(element_of(self.document, ref)) == DRAFT)
