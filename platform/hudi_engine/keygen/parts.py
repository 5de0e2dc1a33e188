"""One partition field's segment of the partition path: the value, escaped and hive-style prefixed."""
from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from .arrow_helpers import Batch, _map_rare, _resolve
from .paths import _ESCAPE_RE, DEFAULT_PARTITION_PATH, escape_path_name
from .values import java_strings

if TYPE_CHECKING:
    from .generators import KeyGenerator

class _PartitionPart:
    def __init__(self, field: str, owner: KeyGenerator):
        self.field = field
        self.owner = owner

    def render(self, batch: Batch) -> pa.Array:
        values = self.values(batch)
        if self.owner.url_encode_partitioning:
            values = _map_rare(values, pc.fill_null(pc.match_substring_regex(values, _ESCAPE_RE), False),
                               escape_path_name)
        if self.owner.hive_style_partitioning:
            values = pc.binary_join_element_wise(pa.scalar(self.field + "="), values, "")
        return values

    def values(self, batch: Batch) -> pa.Array:
        raise NotImplementedError


class _SimplePart(_PartitionPart):
    """The value as a string; null or empty becomes ``__HIVE_DEFAULT_PARTITION__``."""

    def values(self, batch: Batch) -> pa.Array:
        owner = self.owner
        vals = java_strings(_resolve(batch, self.field, "partition"), owner.consistent_logical_timestamp,
                            self.field, legacy_float_format=owner.legacy_float_format)
        return pc.if_else(pc.fill_null(pc.equal(vals, ""), True), DEFAULT_PARTITION_PATH, vals)
