"""How many file groups a record index (or secondary index) gets when it is built: Hudi's
``HoodieTableMetadataUtil.estimateFileGroupCount`` rule, so a table's index is laid out as Hudi
would lay it out from the same record count and ``hoodie.metadata.record.index.*`` settings.

The count is fixed at build time (keys hash over it), so the index is sized for the table's
expected growth: ``ceil(records * growth factor)`` entries at 48 bytes each, in file groups of at
most ``max.filegroup.size`` bytes, clamped to ``[min, max]`` file groups (exactly ``min`` when the
two are equal).
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import HoodieConfigError

AVERAGE_RECORD_SIZE = 48       # RECORD_INDEX_AVERAGE_RECORD_SIZE: bytes of one entry, for sizing


def estimate_file_group_count(records: int, min_groups: int, max_groups: int, growth_factor: float,
                              max_group_bytes: int, average_record_size: int = AVERAGE_RECORD_SIZE) -> int:
    """The file groups of an index of ``records`` entries (Java's float product and long division)."""
    if min_groups == max_groups and min_groups != 0:
        return min_groups
    expected = math.ceil(float(np.float32(records) * np.float32(growth_factor)))
    per_group = max_group_bytes // max(average_record_size, 1)
    if per_group <= 0:
        raise HoodieConfigError(f"hoodie.metadata.record.index.max.filegroup.size={max_group_bytes} is smaller than "
                                f"one record-index entry ({average_record_size} bytes); set it to at least that")
    estimated = expected // per_group
    if estimated >= max_groups:
        return max_groups
    if estimated <= min_groups:
        return min_groups
    return max(1, estimated)
