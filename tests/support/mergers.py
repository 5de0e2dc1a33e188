"""Python mergers for the CUSTOM merge mode tests, importable by name on Spark's executors."""
import pyarrow as pa
import pyarrow.compute as pc

from hudi_engine.api import MergedRows

RUNNING_TOTAL_ID = "3f0c6a52-6a4b-4a1e-9b6e-2d0f3c1e8a11"


class RunningTotal:
    """``total`` adds up over a key's versions and ``ts`` is the latest (so the order in which a
    batch's versions meet does not matter); a running total below zero deletes the record."""
    strategy_id = RUNNING_TOTAL_ID

    def merge(self, older: pa.Table, newer: pa.Table) -> MergedRows:
        total = pc.add(pc.fill_null(older["total"], 0), pc.fill_null(newer["total"], 0))
        ts = pc.max_element_wise(older["ts"], newer["ts"])
        rows = newer.set_column(newer.schema.get_field_index("total"), "total", total.cast(newer.schema.field("total").type))
        rows = rows.set_column(rows.schema.get_field_index("ts"), "ts", ts.cast(rows.schema.field("ts").type))
        return MergedRows(rows, pc.less(total, 0))


class WrongShape:
    strategy_id = "wrong-shape"

    def merge(self, older, newer):
        return MergedRows(newer.slice(0, 0), pa.array([], pa.bool_()))


class NoStrategy:
    def merge(self, older, newer):
        return MergedRows(newer, pa.array([False] * newer.num_rows))
