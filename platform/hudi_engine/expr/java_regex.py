"""Java regular expressions (what Spark's ``regexp_replace`` and ``regexp_extract`` take) run with
Python's ``re``, for the expression-index functions.

The two dialects agree on the common syntax. Where they differ, the pattern is translated
(``(?<name>...)`` groups, ``\\z``, ``\\Q...\\E`` quoting) or refused with a message (``\\Z``, ``\\G``,
``\\h``, ``\\R``, ``\\p{..}`` classes, class unions and intersections), never run with other
meanings. ``re.ASCII`` makes ``\\d \\w \\s \\b`` and case folding ASCII, as Java's defaults.
A replacement string follows ``Matcher.appendReplacement``: ``$n`` and ``${name}`` are groups (an
unmatched group adds nothing), a backslash takes the next character literally.
Pure: no I/O.
"""
from __future__ import annotations

import re
import warnings
from functools import lru_cache
from typing import Callable

from ..errors import HoodieConfigError

_UNSUPPORTED_ESCAPES = {
    "Z": "end of input but for the final line terminator", "G": "end of the previous match",
    "h": "horizontal whitespace", "H": "non-horizontal whitespace", "v": "vertical whitespace",
    "V": "non-vertical whitespace", "R": "any line break", "X": "a grapheme cluster",
    "p": "a Unicode or POSIX class", "P": "a negated Unicode or POSIX class", "k": "a named back reference",
    "e": "the escape character", "c": "a control character",
}


def _translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern[i] == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt == "Q":
                end = pattern.find("\\E", i + 2)
                end = len(pattern) if end < 0 else end
                out.append(re.escape(pattern[i + 2:end]))
                i = end + 2
                continue
            if nxt in _UNSUPPORTED_ESCAPES:
                raise HoodieConfigError(
                    f"regular expression {pattern!r}: \\{nxt} ({_UNSUPPORTED_ESCAPES[nxt]}) is not supported by "
                    "expression indexes; write the pattern without it (e.g. a character class such as [ \\t])")
            out.append(r"\Z" if nxt == "z" else pattern[i:i + 2])
            i += 2
            continue
        if pattern.startswith("(?<", i) and not pattern.startswith(("(?<=", "(?<!"), i):
            out.append("(?P<")
            i += 3
            continue
        out.append(pattern[i])
        i += 1
    return "".join(out)


@lru_cache(maxsize=64)
def compile_java(pattern: str) -> re.Pattern:
    """The pattern for Python's ``re``, or a refusal naming what is not supported."""
    translated = _translate(pattern)
    try:
        with warnings.catch_warnings():
            # Python warns where Java's nested classes and && intersections would mean something else.
            warnings.simplefilter("error", FutureWarning)
            return re.compile(translated, re.ASCII)
    except (re.error, FutureWarning) as e:
        raise HoodieConfigError(f"regular expression {pattern!r} cannot be used by an expression index: {e}; "
                                "use Java syntax that Python's re shares (no nested classes or &&)") from None


@lru_cache(maxsize=64)
def replacement(pattern: str, text: str) -> Callable[[re.Match], str]:
    """``Matcher.appendReplacement``'s reading of ``text`` against ``pattern``'s groups, as a
    function of a match; a reference Java would refuse is refused here."""
    compiled = compile_java(pattern)
    groups, names = compiled.groups, compiled.groupindex
    parts: list[str | int] = []          # literals, and group numbers
    literal: list[str] = []
    i = 0

    def refuse(why: str) -> HoodieConfigError:
        return HoodieConfigError(f"replacement {text!r} of pattern {pattern!r}: {why}; write $n or ${{name}} for a "
                                 "group, \\$ for a dollar sign")

    while i < len(text):
        c = text[i]
        if c == "\\":
            if i + 1 == len(text):
                raise refuse("a backslash at the end escapes nothing")
            literal.append(text[i + 1])
            i += 2
        elif c == "$":
            if i + 1 == len(text):
                raise refuse("a dollar sign at the end names no group")
            if text[i + 1] == "{":
                end = text.find("}", i + 2)
                name = text[i + 2:end] if end > 0 else ""
                if not name or name not in names:
                    raise refuse(f"no group named {name!r}")
                number, i = names[name], end + 1
            elif text[i + 1].isdigit():
                number, i = int(text[i + 1]), i + 2
                if number > groups:
                    raise refuse(f"there is no group {number}")
                # Java takes further digits while the number stays a group of the pattern.
                while i < len(text) and text[i].isdigit() and number * 10 + int(text[i]) <= groups:
                    number, i = number * 10 + int(text[i]), i + 1
            else:
                raise refuse(f"'${text[i + 1]}' is not a group reference")
            parts.extend(["".join(literal), number])
            literal = []
        else:
            literal.append(c)
            i += 1
    parts.append("".join(literal))

    def expand(m: re.Match) -> str:
        return "".join(p if isinstance(p, str) else (m.group(p) or "") for p in parts)
    return expand
