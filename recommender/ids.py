"""What an id is, for every kind of id (papers, reviewers, publications, authors' profile
ids and emails): one policy, applied where ids are read. An id is refused, never rewritten.

- **Taken as given**, except spaces and tabs around it (a cell's padding) and, for people,
  OpenReview's leading ``~``. Nothing inside an id is changed: an id that needs changing is
  refused, naming the character, so that two different ids can never become one.
- **Refused**: an empty id; more than :data:`ID_MAX_LENGTH` characters; control characters
  and line breaks (Unicode Cc, Zl, Zp: ``\\n``, U+0085, U+2028 ...) and unpaired
  surrogates; invisible characters (format characters, Cf: zero-width spaces and joiners,
  direction marks, overrides and isolates, the BOM, soft hyphens; and every other
  Default_Ignorable_Code_Point: variation selectors, Hangul fillers ...); spaces other than
  U+0020 (no-break, ideographic, thin ...), which look like one and are not.
- **Look-alikes**: two different ids of one kind whose :func:`lookalike_key` is the same
  (e.g. Latin ``Ada``, ``Аda`` with a Cyrillic А, fullwidth ``Ａｄａ``, ``Adá`` composed and
  decomposed) would display as one person or paper. The key is the UTS #39 skeleton of the
  id's NFKC form: NFKC folds compatibility variants (fullwidth letters, ligatures), which
  UTS #39 leaves to identifier profiles; the skeleton (NFD, each character replaced by its
  prototype from Unicode's ``confusables.txt``, NFD again) folds look-alikes across scripts.
  The data is Unicode 16.0.0's, vendored in ``recommender/unicode_data`` under the Unicode
  License v3 (see ``tools/vendor_confusables.py``); no maintained Python package offers the
  skeleton with current data (PyICU does, but needs a compiled ICU).
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable
from functools import cache
from pathlib import Path

ID_MAX_LENGTH = 300
ID_RULE = (
    f"1 to {ID_MAX_LENGTH} characters, no control characters or line breaks, no invisible "
    "characters, no space other than a plain one"
)
CONFUSABLES = Path(__file__).parent / "unicode_data" / "confusables.txt"

# Default_Ignorable_Code_Point (DerivedCoreProperties.txt) outside category Cf
_IGNORABLE_RANGES = (
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x2065, 0x2065),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0xE0000, 0xE0FFF),
)
_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_PADDING = " \t"


# control characters have no Unicode name, only an alias
_CONTROL_NAMES = {
    "\x00": "NUL",
    "\t": "TAB",
    "\n": "LINE FEED",
    "\x0b": "LINE TABULATION",
    "\x0c": "FORM FEED",
    "\r": "CARRIAGE RETURN",
    "\x1b": "ESCAPE",
    "\x7f": "DELETE",
    "\x85": "NEXT LINE",
}


def describe(character: str) -> str:
    """``U+200B (ZERO WIDTH SPACE)``: a character as a chair can look it up."""
    if unicodedata.category(character) == "Cs":
        return f"U+{ord(character):04X} (an unpaired surrogate, not a character)"
    name = _CONTROL_NAMES.get(character) or unicodedata.name(character, "")
    return f"U+{ord(character):04X}" + (f" ({name})" if name else "")


def _invisible(character: str) -> bool:
    if unicodedata.category(character) == "Cf":
        return True
    code = ord(character)
    return any(low <= code <= high for low, high in _IGNORABLE_RANGES)


# ASCII's only characters an id may not hold: its control characters (line breaks among
# them); no ASCII character is invisible, ignorable or an odd space
_ASCII_CONTROL = re.compile("[\x00-\x1f\x7f]")


def _offending(value: str) -> tuple[str, str] | None:
    """(what kind of character, the character) of the first character of ``value`` that no
    id may hold, or None."""
    if value.isascii() and _ASCII_CONTROL.search(value) is None:
        return None
    for character in value:
        category = unicodedata.category(character)
        if character in _LINE_BREAKS or category in ("Zl", "Zp"):
            return "line break", character
        if category in ("Cc", "Cs"):
            return "control character", character
        if _invisible(character):
            return "invisible character", character
        if category == "Zs" and character != " ":
            return "odd space", character
    return None


_ADVICE = {
    "line break": "an id is one line",
    "control character": "ids may not hold control characters",
    "invisible character": "it changes what the id is, not how it looks; remove it",
    "odd space": "it looks like ' ' but is another character; use a plain space",
}


def character_problem(value: str) -> str | None:
    """Why a character of ``value`` cannot be in an id (the first such), or None."""
    found = _offending(value)
    if found is None:
        return None
    what, character = found
    return f"contains {describe(character)}, {_ARTICLE[what]} {what}: {_ADVICE[what]}"


_ARTICLE = {
    "line break": "a",
    "control character": "a",
    "invisible character": "an",
    "odd space": "an",
}


def shown(identifier: str) -> str:
    """``identifier`` quoted for a message: escapes visible, at most 40 characters."""
    return repr(identifier) if len(identifier) <= 40 else repr(identifier[:40]) + "…"


def id_refusal(kind: str, identifier: str) -> str | None:
    """Why ``identifier`` cannot be an id of ``kind`` (``"paper"``, ``"reviewer"``...), as a
    chair reads it in a list of problems, or None if it can."""
    if not identifier:
        return f"empty {kind} id"
    if len(identifier) > ID_MAX_LENGTH:
        return (
            f"{kind} id {shown(identifier)} is {len(identifier)} characters long; ids have "
            f"at most {ID_MAX_LENGTH}"
        )
    found = _offending(identifier)
    if found is None:
        return None
    what, character = found
    return f"{what} in {kind} id {shown(identifier)}: {describe(character)}; {_ADVICE[what]}"


def id_problem(value: str) -> str | None:
    """Why ``value`` cannot be an id (see the module rules), or None if it can."""
    if not value:
        return "is empty"
    if len(value) > ID_MAX_LENGTH:
        return f"is {len(value)} characters long; ids have at most {ID_MAX_LENGTH}"
    return character_problem(value)


def trim_id(value: str) -> str:
    """``value`` without the spaces and tabs around it: the only change an id undergoes."""
    return value.strip(_PADDING)


def trim_person_id(value: str) -> str:
    """A reviewer's or author's id: trimmed, without OpenReview's leading ``~``."""
    return value.strip(_PADDING).lstrip("~").strip(_PADDING)


@cache
def _prototypes() -> dict[int, str]:
    table: dict[int, str] = {}
    for line in CONFUSABLES.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        source, target = line.split("\t")
        table[int(source, 16)] = "".join(chr(int(code, 16)) for code in target.split())
    return table


def skeleton(value: str) -> str:
    """The UTS #39 skeleton of ``value``: NFD, default-ignorable characters dropped, each
    character replaced by its prototype, NFD again."""
    if value.isascii():  # NFD leaves it as it is, and no ASCII character is ignorable
        return unicodedata.normalize("NFD", value.translate(_prototypes()))
    decomposed = unicodedata.normalize("NFD", value)
    visible = "".join(c for c in decomposed if not _invisible(c))
    return unicodedata.normalize("NFD", visible.translate(_prototypes()))


def lookalike_key(value: str) -> str:
    """Equal for ids that display alike (see the module rules)."""
    return skeleton(unicodedata.normalize("NFKC", value))


def lookalike_groups(ids: Iterable[str]) -> list[list[str]]:
    """Every set of two or more different ids (in first-seen order) that display alike."""
    by_key: dict[str, list[str]] = defaultdict(list)
    for identifier in ids:
        group = by_key[lookalike_key(identifier)]
        if identifier not in group:
            group.append(identifier)
    return [group for group in by_key.values() if len(group) > 1]


def how_they_differ(first: str, second: str) -> str:
    """The characters that tell two look-alike ids apart, in words."""
    only_first = [c for c in dict.fromkeys(first) if c not in second]
    only_second = [c for c in dict.fromkeys(second) if c not in first]
    parts = []
    if only_first:
        parts.append(f"{first!r} has " + ", ".join(describe(c) for c in only_first[:3]))
    if only_second:
        parts.append(f"{second!r} has " + ", ".join(describe(c) for c in only_second[:3]))
    return "; ".join(parts) or "they differ only in how their characters are composed"


def lookalike_message(kind: str, first: str, second: str, first_where: str) -> str:
    """A refusal naming both ids (``first`` seen at ``first_where``) and what to fix."""
    return (
        f"{kind} id {second!r} looks like {kind} id {first!r} ({first_where}) but is a "
        f"different id ({how_they_differ(first, second)}): they would show as one {kind}; "
        "use the same id for the same one, or ids that read differently"
    )
