"""HFile (version 3), the file format of Hudi's metadata table: its base files (``*.hfile``) and
the content of its HFILE_DATA_BLOCK log blocks. Pure Python, read and written as Hudi's native
``hudi-io`` HFile reader and writer do; files HBase's writer left (Hudi 0.x/1.0) read as well."""
from .format import BlockType, Codec
from .proto import Trailer
from .reader import HFileReader, read_trailer
from .writer import LAYOUTS, write_hfile

__all__ = ["LAYOUTS", "BlockType", "Codec", "HFileReader", "Trailer", "read_trailer", "write_hfile"]
