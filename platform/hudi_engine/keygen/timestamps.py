"""Timestamp-based partition paths: the ``hoodie.keygen.timebased.*`` settings and their part."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from .. import config as C
from ..config import HoodieConfig
from ..errors import HoodieConfigError, HoodieValidationError
from .arrow_helpers import Batch, _all, _describe_row, _first_true, _is_text, _resolve
from .date_patterns import JavaDatePattern
from .parts import _PartitionPart

if TYPE_CHECKING:
    from .generators import KeyGenerator

_TIMESTAMP_TYPES = ("UNIX_TIMESTAMP", "DATE_STRING", "MIXED", "EPOCHMILLISECONDS",
                    "EPOCHMICROSECONDS", "SCALAR")
# java.util.concurrent.TimeUnit -> milliseconds factor (numerator, denominator)
_UNIT_TO_MS = {"NANOSECONDS": (1, 1_000_000), "MICROSECONDS": (1, 1000), "MILLISECONDS": (1, 1),
               "SECONDS": (1000, 1), "MINUTES": (60_000, 1), "HOURS": (3_600_000, 1),
               "DAYS": (86_400_000, 1)}


@dataclass(frozen=True)
class TimestampSpec:
    """The ``hoodie.keygen.timebased.*`` settings of one timestamp partition field.

    ``input_zone``/``output_zone`` are ``None`` when Hudi would leave the Joda zone unset (no
    ``timezone``/``input.timezone``/``output.timezone`` given): strings then keep the offset they
    were written with and numbers use the JVM zone, which we take to be UTC.
    """
    timestamp_type: str
    output_format: str
    input_formats: tuple[str, ...] = ()
    input_zone: str | None = None
    output_zone: str | None = None
    scalar_unit: str = "SECONDS"


class _TimestampPart(_PartitionPart):
    """TimestampBasedAvroKeyGenerator: a time value re-formatted with the output pattern.

    Hudi's rules, kept as is: a null value becomes "1" (one unit after the epoch) or, for string
    types, the epoch+1ms written with the first input pattern; numbers (float and decimal truncated,
    a date as its epoch-day count, a timestamp as its epoch-microsecond count unless the
    consistent-logical-timestamp option is on) are counted in the type's unit.
    """

    def __init__(self, field: str, spec: TimestampSpec, owner: KeyGenerator):
        super().__init__(field, owner)
        ttype = spec.timestamp_type.upper()
        if ttype not in _TIMESTAMP_TYPES:
            raise HoodieConfigError(f"{C.TIMESTAMP_TYPE.key}={spec.timestamp_type!r} is not valid; use "
                                    f"one of {', '.join(_TIMESTAMP_TYPES)}")
        self.ttype = ttype
        self.spec = spec
        if not spec.output_format:
            raise HoodieConfigError(f"{C.TIMESTAMP_OUTPUT_DATE_FORMAT.key} is required for "
                                    "timestamp-based partitioning (e.g. yyyy/MM/dd)")
        self.output = JavaDatePattern(spec.output_format, C.TIMESTAMP_OUTPUT_DATE_FORMAT.key)
        self.in_zone = _arrow_zone(spec.input_zone) if spec.input_zone else None
        self.out_zone = _arrow_zone(spec.output_zone) if spec.output_zone else None
        self.inputs: list[JavaDatePattern] = []
        self.unit = None
        if ttype in ("DATE_STRING", "MIXED"):
            if not spec.input_formats:
                raise HoodieConfigError(f"{C.TIMESTAMP_INPUT_DATE_FORMAT.key} is required when "
                                        f"{C.TIMESTAMP_TYPE.key}={ttype}")
            self.inputs = [JavaDatePattern(p, C.TIMESTAMP_INPUT_DATE_FORMAT.key, parse=True)
                           for p in spec.input_formats]
            # getDefaultPartitionVal: epoch+1ms printed with the first pattern in the input zone
            zone = self.in_zone or self.out_zone or "UTC"
            one_ms = pa.array([1], pa.int64()).cast(pa.timestamp("ms", zone))
            self.default_text = self.inputs[0].format(one_ms)[0].as_py()
        else:
            unit = {"UNIX_TIMESTAMP": "SECONDS", "EPOCHMILLISECONDS": "MILLISECONDS",
                    "EPOCHMICROSECONDS": "MICROSECONDS"}.get(ttype, (spec.scalar_unit or "SECONDS").upper())
            if unit not in _UNIT_TO_MS:
                raise HoodieConfigError(f"{C.TIMESTAMP_SCALAR_UNIT.key}={spec.scalar_unit!r} is not a "
                                        f"TimeUnit; use one of {', '.join(_UNIT_TO_MS)}")
            self.unit = unit

    def values(self, batch: Batch) -> pa.Array:
        arr = _resolve(batch, self.field, "partition")
        if pa.types.is_dictionary(arr.type):
            arr = arr.dictionary_decode()
        t = arr.type
        textual = _is_text(t)
        if textual and self.inputs:
            text = arr.cast(pa.string()).fill_null(self.default_text)
            millis, zone, offsets = self._parse_strings(batch, text)
        elif pa.types.is_timestamp(t) and t.tz is not None and self.owner.consistent_logical_timestamp:
            # java.sql.Timestamp branch: the instant itself, whatever the timestamp type
            millis = pc.divide(pc.cast(arr.cast(pa.timestamp("us", "UTC"), safe=False), pa.int64()), 1000)
            if self.inputs:
                default = self._parse_strings(batch, pa.array([self.default_text]))[0]
                millis = millis.fill_null(default[0])
            else:
                millis = millis.fill_null(self._to_millis(pa.array([1], pa.int64()))[0])
            zone, offsets = self.out_zone or "UTC", None
        elif self.inputs:
            raise HoodieValidationError(
                f"Partition field {self.field!r} has type {t} but {C.TIMESTAMP_TYPE.key}="
                f"{self.ttype} expects date strings; use UNIX_TIMESTAMP, EPOCHMILLISECONDS, "
                "EPOCHMICROSECONDS or SCALAR for numbers")
        else:
            longs = self._longs(batch, arr).fill_null(1)
            millis = self._to_millis(longs)
            zone, offsets = self.out_zone or "UTC", None
        return self.output.format(pc.cast(millis, pa.timestamp("ms", zone)), offsets)

    def _longs(self, batch: Batch, arr: pa.Array) -> pa.Array:
        t = arr.type
        if pa.types.is_integer(t):
            return arr.cast(pa.int64())
        if pa.types.is_floating(t):
            return pc.trunc(arr).cast(pa.int64())  # Double.longValue()
        if pa.types.is_decimal(t):
            return arr.cast(pa.int64(), safe=False)  # BigDecimal.longValue() truncates
        if pa.types.is_date(t):
            return pc.cast(arr.cast(pa.date32()), pa.int32()).cast(pa.int64())  # LocalDate.toEpochDay
        if pa.types.is_timestamp(t):
            return pc.cast(arr.cast(pa.timestamp("us", t.tz), safe=False), pa.int64())
        if _is_text(t):
            # 0.14 throws here; Hudi 1.1 writes epoch numbers held in strings (see v9 fixtures).
            text = pc.utf8_trim_whitespace(arr.cast(pa.string()))
            ok = pc.fill_null(pc.match_substring_regex(text, r"^[+-]?[0-9]+$"), True)
            if not _all(ok):
                row = _first_true(pc.invert(ok))
                raise HoodieValidationError(
                    f"Partition field {self.field!r} value {arr[row].as_py()!r} in row {row} is not a "
                    f"whole number of {self.unit.lower()} ({C.TIMESTAMP_TYPE.key}={self.ttype}); "
                    f"record: {_describe_row(batch, row, self.owner._fields())}")
            return text.cast(pa.int64())
        raise HoodieValidationError(
            f"Partition field {self.field!r} has type {t}, which a timestamp-based key generator "
            "cannot read; use a number, date, timestamp or string column")

    def _to_millis(self, longs: pa.Array) -> pa.Array:
        num, den = _UNIT_TO_MS[self.unit]
        if den > 1:
            return pc.divide(longs, den)  # TimeUnit.convert truncates toward zero
        return pc.multiply_checked(longs, num) if num > 1 else longs

    def _parse_strings(self, batch: Batch, text: pa.Array) -> tuple[pa.Array, str, pa.Array | None]:
        """Joda parse with the input patterns (first full match wins).

        -> (ms to print, zone to print them in, per-row offset minutes when printing wall-clock time)
        """
        local = offset = None
        matched = None
        for pattern in self.inputs:
            loc, off, ok = pattern.parse(text)
            if matched is None:
                local, offset, matched = loc, off, ok
            else:
                take = pc.and_(ok, pc.invert(matched))
                local = pc.if_else(take, loc, local)
                offset = pc.if_else(take, off, offset)
                matched = pc.or_(matched, ok)
        if not _all(matched):
            row = _first_true(pc.invert(matched))
            raise HoodieValidationError(
                f"Partition field {self.field!r} value {text[row].as_py()!r} in row {row} does not "
                f"match {C.TIMESTAMP_INPUT_DATE_FORMAT.key}={','.join(self.spec.input_formats)!r}; "
                f"record: {_describe_row(batch, row, self.owner._fields())}. Fix the value or add "
                "its pattern to the input formats")
        if self.in_zone is None and self.out_zone is None:
            # Joda prints in the zone it parsed (the string's own offset, else the JVM's):
            # the output is the wall-clock time written in the string, with its offset.
            return local, "UTC", offset.fill_null(0)
        # only rows without an offset of their own are read in the input zone
        naive = pc.cast(pc.if_else(pc.is_valid(offset), 0, local), pa.timestamp("ms"))
        try:
            assumed = pc.assume_timezone(naive, timezone=self.in_zone or "UTC",
                                         ambiguous="earliest", nonexistent="raise")
        except pa.ArrowInvalid as e:
            raise HoodieValidationError(
                f"Partition field {self.field!r} holds a local time that does not exist in "
                f"{self.in_zone} (daylight-saving gap): {e}") from None
        by_zone = pc.cast(assumed, pa.int64())
        by_offset = pc.subtract(local, pc.multiply(offset, 60_000))
        instants = pc.if_else(pc.is_valid(offset), by_offset, by_zone)
        return instants, (self.out_zone or self.in_zone), None


# Java's three-letter zone ids that the tz database lacks (java.time.ZoneId.SHORT_IDS)
_JAVA_SHORT_ZONES = {"PST": "America/Los_Angeles", "CST": "America/Chicago", "EST": "-05:00",
                     "MST": "-07:00", "HST": "-10:00", "IST": "Asia/Kolkata", "JST": "Asia/Tokyo",
                     "CTT": "Asia/Shanghai", "AET": "Australia/Sydney", "ECT": "Europe/Paris",
                     "BST": "Asia/Dhaka", "PRC": "Asia/Shanghai"}


def _arrow_zone(java_id: str) -> str:
    """A Java TimeZone id as Arrow understands it; unknown ids fail here instead of Java's silent GMT."""
    z = java_id.strip()
    m = re.fullmatch(r"(?:GMT|UTC|UT)?([+-])(\d{1,2})(?::?(\d{2}))?", z)
    if m:
        return f"{m.group(1)}{int(m.group(2)):02d}:{int(m.group(3) or 0):02d}"
    if z.upper() in ("GMT", "UTC", "UT", "Z", "ZULU", "UCT"):
        return "UTC"
    z = _JAVA_SHORT_ZONES.get(z, z)
    try:
        pc.hour(pa.array([0], pa.int64()).cast(pa.timestamp("ms", z)))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise HoodieConfigError(f"Time zone {java_id!r} is unknown; use an IANA id such as "
                                "'UTC' or 'Asia/Shanghai', or an offset like '+08:00'") from None
    return z


def _timestamp_spec(cfg: HoodieConfig) -> TimestampSpec:
    ttype = (cfg.get_str(C.TIMESTAMP_TYPE) or "").strip().upper()
    if not ttype:
        raise HoodieConfigError(
            f"{C.TIMESTAMP_TYPE.key} is required for timestamp-based partitioning (one of "
            f"{', '.join(_TIMESTAMP_TYPES)}); version 6 tables do not store it in hoodie.properties, "
            "so pass it with the write options")
    delimiter = cfg.get_str(C.TIMESTAMP_INPUT_DATE_FORMAT_DELIMITER) or ","
    raw_inputs = cfg.get_str(C.TIMESTAMP_INPUT_DATE_FORMAT) or ""
    inputs = tuple(p.strip() for p in re.split(delimiter, raw_inputs) if p.strip()) if raw_inputs else ()
    # HoodieDateTimeParser: an explicit `timezone` overrides both sides; otherwise an unset side
    # stays unset (it does not fall back to the declared "UTC" default).
    if cfg.contains(C.TIMESTAMP_TIMEZONE):
        both = (cfg.get_str(C.TIMESTAMP_TIMEZONE) or "").strip() or None
        in_zone = out_zone = both
    else:
        in_zone = (cfg.get_str(C.TIMESTAMP_INPUT_TIMEZONE) or "").strip() or None
        out_zone = (cfg.get_str(C.TIMESTAMP_OUTPUT_TIMEZONE) or "").strip() or None
    return TimestampSpec(ttype, cfg.get_str(C.TIMESTAMP_OUTPUT_DATE_FORMAT) or "", inputs,
                         in_zone, out_zone, (cfg.get_str(C.TIMESTAMP_SCALAR_UNIT) or "SECONDS").upper())
