"""Rows shaped for Parquet: Spark's null structs with required fields, and bad input in them."""
import decimal
import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_engine.errors import HoodieValidationError
from hudi_engine.schema.arrow import conform

INNER = pa.struct([pa.field("x", pa.int32(), nullable=False), pa.field("d", pa.decimal128(18, 4), nullable=False),
                   pa.field("ts", pa.timestamp("us"), nullable=False)])
DEVICE = pa.struct([pa.field("os", pa.string(), nullable=False), pa.field("inner", INNER, nullable=False),
                    pa.field("opt", pa.string())])
SCHEMA = pa.schema([pa.field("device", DEVICE), pa.field("items", pa.list_(pa.field("element", DEVICE)))])


def _devices() -> pa.StructArray:
    """Three devices, the second null as a whole, its fields null as Spark's Arrow writer leaves them."""
    inner = pa.StructArray.from_arrays(
        [pa.array([1, None, 3], pa.int32()), pa.array([decimal.Decimal("1.5"), None, 2], pa.decimal128(18, 4)),
         pa.array([1, None, 2], pa.timestamp("us"))], fields=list(INNER), mask=pa.array([False, True, False]))
    return pa.StructArray.from_arrays([pa.array(["a", None, "c"]), inner, pa.array([None, None, "z"])],
                                      fields=list(DEVICE), mask=pa.array([False, True, False]))


@pytest.mark.parametrize("start", [0, 1, 2])
def test_null_structs_with_required_fields_write_and_read_back_as_null(start):
    devices = _devices()
    items = pa.ListArray.from_arrays(pa.array([0, 2, 3, 3]), devices, mask=pa.array([False, False, True]))
    rows = pa.table({"device": devices, "items": items}, schema=SCHEMA).slice(start)
    if start < 2:                                        # the slice still holds the null device
        with pytest.raises(pa.ArrowInvalid, match="non-nullable"):
            pq.write_table(rows, io.BytesIO())           # what Parquet says without conform
    sink = io.BytesIO()
    pq.write_table(conform(rows, SCHEMA), sink)
    assert pq.read_table(io.BytesIO(sink.getvalue())).to_pylist() == rows.to_pylist()


def test_a_null_in_a_required_field_of_a_present_struct_is_named():
    bad = pa.StructArray.from_arrays([pa.array(["a", None]), pa.array([1, 2], pa.int32())],
                                     fields=[pa.field("os", pa.string(), False), pa.field("n", pa.int32())])
    with pytest.raises(HoodieValidationError, match=r"'d\.os' is declared non-nullable but is null in row 1"):
        conform(pa.table({"d": bad}), pa.schema([pa.field("d", bad.type)]))


def test_split_by_value_groups_rows_in_arrival_order_and_groups_sorted():
    from hudi_engine.schema.arrow import split_by_value

    table = pa.table({"i": list(range(7)), "p": ["b", "a", "b", "c", "a", "b", "a"]})
    got = [(p, part["i"].to_pylist()) for p, part in split_by_value(table, table["p"])]
    assert got == [("a", [1, 4, 6]), ("b", [0, 2, 5]), ("c", [3])]
    assert [(p, part.to_pylist()) for p, part in split_by_value(pa.array([3, 4]), pa.array(["x", "x"]))] == [
        ("x", [3, 4])]
    assert split_by_value(table.slice(0, 0), table["p"].slice(0, 0)) == []
    chunked = pa.chunked_array([["z", "y"], ["z"]])
    assert [(p, t.num_rows) for p, t in split_by_value(pa.table({"p": chunked}), chunked)] == [("y", 1), ("z", 2)]
