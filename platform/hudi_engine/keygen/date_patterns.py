"""Java (Joda) date patterns, parsed and printed with Arrow."""
from __future__ import annotations

import datetime as _dt

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import HoodieConfigError
from .arrow_helpers import _floor_divmod

_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december"]
_DAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_NUMERIC_LETTERS = set("yYxMdHhkKmsSDwe")
_PARSE_LETTERS = set("yYMdHhkKmsSaEZ")
_PRINT_LETTERS = set("yYxMdHhkKmsSaEZzDwe")


def _re_literal(text: str) -> str:
    return "".join(c if c.isalnum() and c.isascii() else f"\\x{{{ord(c):x}}}" for c in text)


class JavaDatePattern:
    """A Joda/Java ``DateTimeFormat`` pattern (``yyyy-MM-dd'T'HH:mm:ss.SSSZ``) run with Arrow.

    Parsing builds one RE2 regex with a named group per field (``extract_regex``), so it takes any
    digit counts Joda takes, fractions and ``Z``/``+hh:mm`` offsets, which ``strptime`` cannot.
    Printing assembles the pieces per field, so unpadded (``M``, ``d``) and fraction (``SSS``)
    fields come out as Joda prints them.
    """

    def __init__(self, pattern: str, key: str = "pattern", parse: bool = False):
        self.pattern = pattern
        self.tokens = self._tokenize(pattern, key)
        allowed = _PARSE_LETTERS if parse else _PRINT_LETTERS
        for tok in self.tokens:
            if tok[0] != "'" and tok[0] not in allowed:
                raise HoodieConfigError(
                    f"{key}={pattern!r}: pattern letter {tok[0]!r} is not supported for "
                    f"{'parsing' if parse else 'printing'} (supported: {''.join(sorted(allowed))})")
        if parse:
            self.regex = self._build_regex()

    @staticmethod
    def _tokenize(pattern: str, key: str) -> list[tuple[str, object]]:
        tokens: list[tuple[str, object]] = []
        i, n = 0, len(pattern)
        lit = []
        while i < n:
            c = pattern[i]
            if c == "'":
                if i + 1 < n and pattern[i + 1] == "'":
                    lit.append("'")
                    i += 2
                    continue
                end = i + 1
                buf = []
                while True:
                    if end >= n:
                        raise HoodieConfigError(f"{key}={pattern!r}: unterminated quote")
                    if pattern[end] == "'":
                        if end + 1 < n and pattern[end + 1] == "'":
                            buf.append("'")
                            end += 2
                            continue
                        break
                    buf.append(pattern[end])
                    end += 1
                lit.append("".join(buf))
                i = end + 1
            elif ("a" <= c <= "z") or ("A" <= c <= "Z"):
                j = i
                while j < n and pattern[j] == c:
                    j += 1
                if lit:
                    tokens.append(("'", "".join(lit)))
                    lit = []
                tokens.append((c, j - i))
                i = j
            else:
                lit.append(c)
                i += 1
        if lit:
            tokens.append(("'", "".join(lit)))
        return tokens

    def _is_numeric(self, idx: int) -> bool:
        if idx >= len(self.tokens):
            return False
        letter, count = self.tokens[idx]
        return letter in _NUMERIC_LETTERS and not (letter == "M" and count >= 3)

    def _build_regex(self) -> str:
        out = ["^"]
        names = "|".join(sorted(_MONTHS + [m[:3] for m in _MONTHS], key=len, reverse=True))
        days = "|".join(sorted(_DAYS + [d[:3] for d in _DAYS], key=len, reverse=True))
        for idx, (letter, count) in enumerate(self.tokens):
            if letter == "'":
                out.append(f"(?i:{_re_literal(count)})")
                continue
            if letter in "yY":
                if count == 2:
                    body = r"\d{2}"
                else:
                    body = rf"\d{{1,{count}}}" if self._is_numeric(idx + 1) else r"\d{1,9}"
            elif letter == "M":
                body = f"(?i:{names})" if count >= 3 else r"\d{1,2}"
            elif letter in "dHhkKms":
                body = r"\d{1,2}"
            elif letter == "S":
                body = r"\d{1,9}"
            elif letter == "a":
                body = "(?i:am|pm)"
            elif letter == "E":
                body = f"(?i:{days})"
            elif letter == "Z":
                if count > 2:
                    raise HoodieConfigError(f"{self.pattern!r}: zone ids (ZZZ) cannot be parsed; "
                                            "use Z or ZZ for offsets")
                body = r"Z|[+-]\d{2}(?::?\d{2})?"
            else:  # pragma: no cover - guarded in __init__
                raise AssertionError(letter)
            out.append(f"(?P<g{idx}>{body})")
        out.append("$")
        return "".join(out)

    def parse(self, text: pa.Array) -> tuple[pa.Array, pa.Array, pa.Array]:
        """-> (wall-clock ms as if UTC, offset minutes or null, matched-and-valid mask)."""
        n = len(text)
        groups = pc.extract_regex(text, self.regex)
        matched = pc.fill_null(pc.is_valid(groups), False)

        def grp(idx: int) -> pa.Array:
            return pc.struct_field(groups, f"g{idx}")

        def num(idx: int) -> pa.Array:
            return pc.cast(pc.if_else(matched, grp(idx), "0"), pa.int64())

        def const(v: int) -> pa.Array:
            return pa.nulls(n, pa.int64()).fill_null(v)

        year, month, day = const(1970), const(1), const(1)
        hour, minute, second, millis = const(0), const(0), const(0), const(0)
        hour12 = pm = None
        offset = pa.nulls(n, pa.int64())
        for idx, (letter, count) in enumerate(self.tokens):
            if letter == "'":
                continue
            if letter in "yY":
                year = num(idx)
                if count == 2:  # Joda two-digit year: pivot 30 years back, window of 100
                    pivot = _dt.date.today().year - 30
                    base = pivot - 50
                    century = base - base % 100
                    year = pc.add(year, century)
                    year = pc.if_else(pc.less(year, base), pc.add(year, 100), year)
            elif letter == "M":
                if count >= 3:
                    lower = pc.utf8_lower(pc.if_else(matched, grp(idx), "jan"))
                    pos = pc.index_in(lower, value_set=pa.array(_MONTHS + [m[:3] for m in _MONTHS]))
                    month = pc.add(_floor_divmod(pos.cast(pa.int64()), 12)[1], 1)
                else:
                    month = num(idx)
            elif letter == "d":
                day = num(idx)
            elif letter == "H":
                hour = num(idx)
            elif letter == "k":  # 1-24
                hour = _floor_divmod(num(idx), 24)[1]
            elif letter in "hK":  # 1-12 / 0-11 with an am/pm marker
                hour12 = _floor_divmod(num(idx), 12)[1]
            elif letter == "m":
                minute = num(idx)
            elif letter == "s":
                second = num(idx)
            elif letter == "S":  # fraction of second; Joda keeps milliseconds
                digits = pc.binary_join_element_wise(pc.if_else(matched, grp(idx), "0"),
                                                     pa.scalar("00"), "")
                millis = pc.cast(pc.utf8_slice_codeunits(digits, 0, 3), pa.int64())
            elif letter == "a":
                pm = pc.equal(pc.utf8_lower(pc.if_else(matched, grp(idx), "am")), "pm")
            elif letter == "Z":
                offset = _offset_minutes(pc.if_else(matched, grp(idx), pa.scalar(None, pa.string())))
        if hour12 is not None:
            hour = hour12 if pm is None else pc.if_else(pm, pc.add(hour12, 12), hour12)

        def pad(a: pa.Array, width: int) -> pa.Array:
            return pc.utf8_lpad(a.cast(pa.string()), width=width, padding="0")

        text_ts = pc.binary_join_element_wise(
            pad(year, 4), pa.scalar("-"), pad(month, 2), pa.scalar("-"), pad(day, 2), pa.scalar(" "),
            pad(hour, 2), pa.scalar(":"), pad(minute, 2), pa.scalar(":"), pad(second, 2), "")
        ts = pc.strptime(text_ts, format="%Y-%m-%d %H:%M:%S", unit="s", error_is_null=True)
        # strptime rolls Feb 30 over to Mar 2; Joda rejects it, so demand an exact round trip.
        same = [pc.equal(pc.year(ts), year), pc.equal(pc.month(ts), month),
                pc.equal(pc.day(ts), day), pc.equal(pc.hour(ts), hour),
                pc.equal(pc.minute(ts), minute), pc.equal(pc.second(ts), second)]
        ok = matched
        for s in same:
            ok = pc.and_(ok, pc.fill_null(s, False))
        local = pc.add(pc.multiply(pc.cast(ts, pa.int64()), 1000), millis)
        local = pc.if_else(ok, local, None)
        return local, pc.if_else(ok, offset, None), ok

    def format(self, ts: pa.Array, offsets: pa.Array | None = None) -> pa.Array:
        """Print zoned timestamps (the zone of ``ts``'s type) the way Joda prints this pattern.

        ``offsets`` (minutes) stands for per-row fixed-offset zones: ``ts`` then holds wall-clock
        times and zone letters print these offsets.
        """
        n = len(ts)
        pieces: list = [pa.nulls(n, pa.string()).fill_null("")]

        def pad(a: pa.Array, width: int) -> pa.Array:
            return pc.utf8_lpad(a.cast(pa.string()), width=width, padding="0")

        for letter, count in self.tokens:
            if letter == "'":
                pieces.append(pa.scalar(count))
            elif letter in "yYx":
                year = pc.iso_year(ts) if letter == "x" else pc.year(ts)
                year = year.cast(pa.int64())
                pieces.append(pad(_floor_divmod(year, 100)[1], 2) if count == 2 else pad(year, count))
            elif letter == "M":
                if count >= 3:
                    pieces.append(pc.strftime(ts, format="%B" if count >= 4 else "%b"))
                else:
                    pieces.append(pad(pc.month(ts), count))
            elif letter == "d":
                pieces.append(pad(pc.day(ts), count))
            elif letter == "D":
                pieces.append(pad(pc.day_of_year(ts), count))
            elif letter == "w":
                pieces.append(pad(pc.iso_week(ts), count))
            elif letter == "e":
                pieces.append(pad(pc.day_of_week(ts, count_from_zero=False, week_start=1), count))
            elif letter == "E":
                pieces.append(pc.strftime(ts, format="%A" if count >= 4 else "%a"))
            elif letter in "HhkK":
                hour = pc.hour(ts).cast(pa.int64())
                if letter == "k":
                    hour = pc.if_else(pc.equal(hour, 0), 24, hour)
                elif letter in "hK":
                    hour = _floor_divmod(hour, 12)[1]
                    if letter == "h":
                        hour = pc.if_else(pc.equal(hour, 0), 12, hour)
                pieces.append(pad(hour, count))
            elif letter == "m":
                pieces.append(pad(pc.minute(ts), count))
            elif letter == "s":
                pieces.append(pad(pc.second(ts), count))
            elif letter == "S":
                ms = pad(pc.millisecond(ts), 3)
                if count < 3:
                    ms = pc.utf8_slice_codeunits(ms, 0, count)
                elif count > 3:
                    ms = pc.binary_join_element_wise(ms, pa.scalar("0" * (count - 3)), "")
                pieces.append(ms)
            elif letter == "a":
                pieces.append(pc.if_else(pc.less(pc.hour(ts), 12), "AM", "PM"))
            elif letter in "Zz" and offsets is not None:
                # a parsed offset is a fixed-offset zone: its id is "+05:30", or "UTC" for zero
                text = _offset_text(offsets, ":" if count == 2 or count >= 3 or letter == "z" else "")
                if letter == "z" or count >= 3:
                    text = pc.if_else(pc.equal(offsets, 0), "UTC", text)
                pieces.append(text)
            elif letter == "Z":
                if count >= 3:
                    pieces.append(pa.scalar(ts.type.tz or "UTC"))
                else:
                    pieces.append(pc.strftime(ts, format="%z" if count == 1 else "%Ez"))
            elif letter == "z":
                pieces.append(pc.strftime(ts, format="%Z"))
        return pc.binary_join_element_wise(*pieces, "")


def _offset_text(minutes: pa.Array, separator: str) -> pa.Array:
    sign = pc.if_else(pc.less(minutes, 0), "-", "+")
    hours, mins = _floor_divmod(pc.abs(minutes), 60)
    pad = lambda a: pc.utf8_lpad(a.cast(pa.string()), width=2, padding="0")  # noqa: E731
    return pc.binary_join_element_wise(sign, pad(hours), pa.scalar(separator), pad(mins), "")


def _offset_minutes(text: pa.Array) -> pa.Array:
    parts = pc.extract_regex(text, r"^(?P<sign>[+-])(?P<hh>\d{2}):?(?P<mm>\d{2})?$")
    hh = pc.cast(pc.struct_field(parts, "hh"), pa.int64())
    mm = pc.cast(pc.fill_null(pc.if_else(pc.equal(pc.struct_field(parts, "mm"), ""), "0",
                                         pc.struct_field(parts, "mm")), "0"), pa.int64())
    total = pc.add(pc.multiply(hh, 60), mm)
    total = pc.if_else(pc.equal(pc.struct_field(parts, "sign"), "-"), pc.negate(total), total)
    return pc.if_else(pc.equal(text, "Z"), 0, total)

