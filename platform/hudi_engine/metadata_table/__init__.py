"""The metadata table's records (``.hoodie/metadata``): schema, keys, builders/parsers and merging.

Pure logic, no I/O: :mod:`.schema` (the ``HoodieMetadataRecord`` Avro schema), :mod:`.hashing`
and :mod:`.keys` (record keys and file groups exactly as Hudi computes them), :mod:`.values`
(column-stats value wrappers), :mod:`.stats` (a Parquet footer's column ranges),
:mod:`.records` (build, parse, encode, decode) and :mod:`.merge` (combining a key's base and log
values as ``HoodieMetadataPayload`` does).
"""
