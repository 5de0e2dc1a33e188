"""The two Protobuf messages of an HFile, encoded by hand (no protobuf runtime here): the trailer
(``TrailerProto``) and the file info map (``InfoProto`` of ``BytesBytesPair``). Fields are written
in field-number order as protobuf-java does; unknown fields are skipped on reading."""
from __future__ import annotations

from dataclasses import dataclass, fields

from .varint import decode_uvarint, encode_uvarint

_VARINT, _LEN = 0, 2


@dataclass
class Trailer:
    """TrailerProto; ``None`` fields are absent from the message. ``version`` is not part of the
    message: it is the trailer's last 4 bytes (minor version byte, then 3-byte major version)."""
    file_info_offset: int | None = None                 # 1
    load_on_open_data_offset: int | None = None         # 2
    uncompressed_data_index_size: int | None = None     # 3
    total_uncompressed_bytes: int | None = None         # 4
    data_index_count: int | None = None                 # 5
    meta_index_count: int | None = None                 # 6
    entry_count: int | None = None                      # 7
    num_data_index_levels: int | None = None            # 8
    first_data_block_offset: int | None = None          # 9
    last_data_block_offset: int | None = None           # 10
    comparator_class_name: str | None = None            # 11
    compression_codec: int | None = None                # 12
    encryption_key: bytes | None = None                 # 13
    version: int = 3
    minor_version: int = 0


_TRAILER_FIELDS = [f.name for f in fields(Trailer)][:13]   # index + 1 = field number


def _key(number: int, wire: int) -> bytes:
    return encode_uvarint(number << 3 | wire)


def _len_field(number: int, raw: bytes) -> bytes:
    return _key(number, _LEN) + encode_uvarint(len(raw)) + raw


def encode_trailer_message(trailer: Trailer) -> bytes:
    out = []
    for number, name in enumerate(_TRAILER_FIELDS, 1):
        value = getattr(trailer, name)
        if value is None:
            continue
        if isinstance(value, str):
            out.append(_len_field(number, value.encode()))
        elif isinstance(value, bytes):
            out.append(_len_field(number, value))
        else:
            out.append(_key(number, _VARINT) + encode_uvarint(value))
    return b"".join(out)


def _fields(data: bytes, pos: int, end: int):
    """(field number, value) pairs: ints for varints, bytes for length-delimited fields."""
    while pos < end:
        key, pos = decode_uvarint(data, pos, end)
        number, wire = key >> 3, key & 7
        if wire == _VARINT:
            value, pos = decode_uvarint(data, pos, end)
        elif wire == _LEN:
            size, pos = decode_uvarint(data, pos, end)
            if pos + size > end:
                raise ValueError("protobuf field runs past its message")
            value, pos = data[pos:pos + size], pos + size
        elif wire == 1:
            value, pos = int.from_bytes(data[pos:pos + 8], "little"), pos + 8
        elif wire == 5:
            value, pos = int.from_bytes(data[pos:pos + 4], "little"), pos + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        yield number, value
    if pos != end:
        raise ValueError("protobuf message overruns its length")


def decode_trailer_message(data: bytes, pos: int, end: int) -> Trailer:
    trailer = Trailer()
    for number, value in _fields(data, pos, end):
        if 1 <= number <= 13:
            name = _TRAILER_FIELDS[number - 1]
            if name == "comparator_class_name":
                value = bytes(value).decode("utf-8", "replace")
            elif name == "encryption_key":
                value = bytes(value)
            elif number not in (11, 13) and value >= 1 << 63:
                value -= 1 << 64
            setattr(trailer, name, value)
    return trailer


def encode_file_info_message(entries: list[tuple[bytes, bytes]]) -> bytes:
    return b"".join(_len_field(1, _len_field(1, k) + _len_field(2, v)) for k, v in entries)


def decode_file_info_message(data: bytes, pos: int, end: int) -> list[tuple[bytes, bytes]]:
    entries = []
    for number, value in _fields(data, pos, end):
        if number != 1:
            continue
        pair = dict(_fields(value, 0, len(value)))
        entries.append((bytes(pair.get(1, b"")), bytes(pair.get(2, b""))))
    return entries
