"""Column values as the Java strings Hudi's writers put into keys and partition paths."""
from __future__ import annotations

import struct
from decimal import ROUND_HALF_EVEN, Decimal

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import HoodieValidationError
from .arrow_helpers import _any, _floor_divmod, _is_text, _map_rare

def java_strings(arr: pa.Array, consistent_logical_timestamp: bool = False, field: str = "", *,
                 legacy_float_format: bool = True) -> pa.Array:
    """Each value as ``String.valueOf`` of what Hudi's Avro record holds for it (nulls stay null).

    Spark hands Hudi an Avro record, so: ints/longs/booleans/strings print as Java does; float and
    double use ``Float/Double.toString``; decimals ``BigDecimal.toString`` (scientific below 1e-6
    when the scale is large: ``0E-18``); dates ``LocalDate.toString``; timestamps are the raw epoch
    microseconds unless the consistent-logical-timestamp option turns them into
    ``java.sql.Timestamp.toString`` (rendered in UTC, i.e. a JVM running in UTC).
    """
    t = arr.type
    if pa.types.is_dictionary(t):
        arr = arr.dictionary_decode()
        t = arr.type
    if isinstance(t, pa.ExtensionType):
        arr = arr.storage
        t = arr.type
    if pa.types.is_null(t):
        return pa.nulls(len(arr), pa.string())
    if _is_text(t):
        return arr.cast(pa.string())
    if pa.types.is_boolean(t) or pa.types.is_integer(t) or pa.types.is_decimal(t):
        # Arrow's decimal text follows the same to-scientific-string rule as BigDecimal.toString.
        return arr.cast(pa.string())
    if pa.types.is_floating(t):
        return _java_float_strings(arr, legacy_float_format)
    if pa.types.is_date(t):
        return arr.cast(pa.date32()).cast(pa.string())
    if pa.types.is_timestamp(t):
        if consistent_logical_timestamp and t.tz is not None:
            return _java_sql_timestamp_strings(arr)
        # Spark's timestamps reach Avro as timestamp-micros longs.
        return pc.cast(arr.cast(pa.timestamp("us", t.tz), safe=False), pa.int64()).cast(pa.string())
    raise HoodieValidationError(
        f"Field {field!r} has type {t}; Hudi only builds keys and partition paths from scalar "
        "columns (string, integer, boolean, float, decimal, date, timestamp). Pick another field "
        "or derive a string column first.")


def _java_float_strings(arr: pa.Array, legacy: bool = True) -> pa.Array:
    """Java's Float/Double.toString: plain within [1e-3, 1e7) ("1.0", "0.001"), else "1.0E7".

    The digits are the shortest that round-trip (JDK 19+), except that with ``legacy`` (JDK 8-18,
    what Spark 3 / Hudi 0.14-0.15 run on) integral values from 2^53 (float: 2^24) up to 2^63 print
    their exact integer digits as the old FloatingDecimal did: 5.995244730532772E17 becomes
    "5.9952447305327718E17".  Other old-JDK oddities (a few values >= 1e19) are not reproduced.
    """
    if arr.type == pa.float16():
        arr = arr.cast(pa.float32())
    single = arr.type == pa.float32()
    text = arr.cast(pa.string())  # shortest round-trip digits, for float32 and float64 alike
    magnitude = pc.abs(arr)
    plain = pc.or_(pc.and_(pc.greater_equal(magnitude, 1e-3), pc.less(magnitude, 1e7)),
                   pc.equal(magnitude, 0))
    fast = pc.fill_null(pc.and_(plain, pc.invert(pc.match_substring(text, "e"))), False)
    fixed = pc.if_else(pc.match_substring(text, "."), text,
                       pc.binary_join_element_wise(text, pa.scalar(".0"), ""))
    out = pc.if_else(fast, fixed, text)
    # Scientific notation, rebuilt from Arrow's three layouts: "1.5e+300", "12345678", "0.000025".
    tiny = 1.1754943508222875e-38 if single else 2.2250738585072014e-308
    normal = pc.and_(pc.is_finite(arr), pc.greater_equal(magnitude, tiny))
    sci = pc.fill_null(pc.and_(pc.invert(plain), normal), False)
    if _any(sci):
        g = pc.extract_regex(pc.if_else(sci, text, "0e0"),
                             r"^(?P<s>-?)(?:(?P<a>\d)(?:\.(?P<af>\d+))?e(?P<ae>[+-]\d+)"
                             r"|(?P<b>\d+)|0\.(?P<cz>0*)(?P<c>\d+))$")
        f = {name: pc.struct_field(g, name) for name in ("s", "a", "af", "ae", "b", "cz", "c")}
        is_a = pc.not_equal(f["a"], "")
        is_b = pc.not_equal(f["b"], "")
        first = pc.if_else(is_a, f["a"], pc.utf8_slice_codeunits(pc.if_else(is_b, f["b"], f["c"]), 0, 1))
        rest = pc.if_else(is_a, f["af"], pc.utf8_rtrim(
            pc.utf8_slice_codeunits(pc.if_else(is_b, f["b"], f["c"]), 1), characters="0"))
        rest = pc.if_else(pc.equal(rest, ""), "0", rest)
        exp_a = pc.cast(pc.utf8_ltrim(pc.if_else(is_a, f["ae"], "0"), characters="+"), pa.int64())
        exp_b = pc.subtract(pc.cast(pc.utf8_length(f["b"]), pa.int64()), 1)
        exp_c = pc.negate(pc.add(pc.cast(pc.utf8_length(f["cz"]), pa.int64()), 1))
        exp = pc.if_else(is_a, exp_a, pc.if_else(is_b, exp_b, exp_c))
        built = pc.binary_join_element_wise(f["s"], first, pa.scalar("."), rest, pa.scalar("E"),
                                            exp.cast(pa.string()), "")
        sci = pc.and_(sci, pc.is_valid(g))
        out = pc.if_else(sci, built, out)
    # NaN, infinities and subnormals (Java then prints two digits: "4.9E-324") in Python.
    rare = pc.and_(pc.is_valid(arr), pc.invert(pc.or_(fast, sci)))
    out = _map_rare(out, rare, lambda s: _java_float_text(s, single))
    if legacy:
        big = pc.and_(pc.greater_equal(magnitude, 2.0 ** (24 if single else 53)),
                      pc.less(magnitude, 2.0 ** 63))
        big = pc.and_(big, pc.equal(pc.trunc(arr), arr))
        out = _map_rare(out, big, lambda s: _legacy_integral_text(s, single), keys=text)
    return out


def _legacy_integral_text(shortest: str, single: bool) -> str:
    """Old FloatingDecimal for an integral value below 2^63: its exact digits, less the ones the
    binary precision cannot vouch for (floor(p * log10 2) of them, p = excess exponent - 1),
    rounded half up."""
    value = float(shortest)
    if single:
        value = struct.unpack("<f", struct.pack("<f", value))[0]
    v = int(abs(value))
    bin_exp = v.bit_length() - 1
    significant_bits = 24 if single else 53
    dropped = 0
    if bin_exp > significant_bits:
        p = bin_exp - significant_bits - 1
        dropped = int(p * 0.30102999566398120) if p > 1 else 0
    if dropped:
        scale = 10 ** dropped
        v, residue = divmod(v, scale)
        if residue >= scale // 2:
            v += 1
    digits = str(v)
    e10 = len(digits) - 1 + dropped
    digits = digits.rstrip("0") or "0"
    return f"{'-' if value < 0 else ''}{digits[0]}.{digits[1:] or '0'}E{e10}"


def _java_float_text(shortest: str, single: bool = False) -> str:
    """One value from its shortest round-trip text (Arrow's), laid out as the JDK (19+) does."""
    if shortest in ("nan", "-nan"):
        return "NaN"
    if shortest in ("inf", "-inf"):
        return "-Infinity" if shortest.startswith("-") else "Infinity"
    sign, digits, exp = Decimal(shortest).as_tuple()
    digits = list(digits)
    while len(digits) > 1 and digits[-1] == 0:
        digits.pop()
        exp += 1
    neg = "-" if sign else ""
    if digits == [0]:
        return neg + "0.0"
    if len(digits) == 1:
        # Java never prints fewer than two significant digits: it takes the 2-digit decimal
        # closest to the binary value (Double.MIN_VALUE is "4.9E-324", not "5.0E-324").
        value = float(shortest)
        if single:
            value = struct.unpack("<f", struct.pack("<f", value))[0]
        exact = abs(Decimal(value))
        two = exact.scaleb(-exact.adjusted()).quantize(Decimal("0.1"), rounding=ROUND_HALF_EVEN)
        shift = exact.adjusted()
        if two >= 10:
            two, shift = Decimal("1.0"), shift + 1
        _, digits2, _ = two.as_tuple()
        digits = list(digits2)
        if len(digits) > 1 and digits[-1] == 0:
            digits.pop()
        exp = shift - (len(digits) - 1)
    e10 = len(digits) - 1 + exp
    if -3 <= e10 < 7:
        txt = format(Decimal((0, tuple(digits), exp)), "f")
        return neg + (txt if "." in txt else txt + ".0")
    mantissa = "".join(map(str, digits[1:])) or "0"
    return f"{neg}{digits[0]}.{mantissa}E{e10}"


def _java_sql_timestamp_strings(arr: pa.Array) -> pa.Array:
    """``new java.sql.Timestamp(micros / 1000).toString()`` in UTC: "2023-04-01 17:01:00.0"."""
    micros = pc.cast(arr.cast(pa.timestamp("us", "UTC"), safe=False), pa.int64())
    millis = pc.divide(micros, 1000)  # Java long division truncates, like Arrow's
    secs, rem = _floor_divmod(millis, 1000)
    base = pc.strftime(pc.cast(secs, pa.timestamp("s", "UTC")), format="%Y-%m-%d %H:%M:%S")
    frac = pc.utf8_rtrim(pc.utf8_lpad(rem.cast(pa.string()), width=3, padding="0"), characters="0")
    frac = pc.if_else(pc.equal(rem, 0), "0", frac)
    return pc.binary_join_element_wise(base, frac, ".")


