"""Block compression. Hudi's GZ is a gzip member as ``java.util.zip.GZIPOutputStream`` writes it
(header with zero mtime, no flags, OS byte 0; deflate at zlib's default level 6), which zlib
reproduces byte for byte; Python's ``gzip`` module would differ in the header."""
from __future__ import annotations

import gzip
import struct
import zlib

from .format import Codec

_JAVA_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x00"


def compress(codec: Codec, data: bytes) -> bytes:
    if codec == Codec.NONE:
        return data
    if codec == Codec.GZ:
        deflater = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
        body = deflater.compress(data) + deflater.flush()
        return _JAVA_GZIP_HEADER + body + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)
    raise NotImplementedError(f"HFile compression {codec.name} is not supported (only NONE and GZ)")


def decompress(codec: Codec, data: bytes, size: int) -> bytes:
    """``data`` inflated to its ``size`` uncompressed bytes (``ValueError`` if it does not)."""
    if codec == Codec.NONE:
        out = data
    elif codec == Codec.GZ:
        try:
            out = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise ValueError(f"bad gzip data: {e}") from None
    else:
        raise NotImplementedError(f"HFile compression {codec.name} is not supported (only NONE and GZ)")
    if len(out) != size:
        raise ValueError(f"block holds {len(out)} uncompressed bytes, its header says {size}")
    return out
