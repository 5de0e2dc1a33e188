"""Reading tables with hudi-rs (the ``hudi`` PyPI package, Apache Hudi's Rust reader): the
outside opinion every table we write must agree with."""
from __future__ import annotations

import pyarrow as pa
from hudi import HudiQueryType, HudiReadOptions, HudiTableBuilder

from hudi_engine.storage import Storage

# hudi-rs (object_store) names for the fs.s3a.* settings a table's storage carries.
_OBJECT_STORE_KEYS = {"fs.s3a.access.key": "aws_access_key_id", "fs.s3a.secret.key": "aws_secret_access_key",
                      "fs.s3a.endpoint.region": "aws_region"}


def storage_options(base_path) -> dict[str, str]:
    """What hudi-rs needs to reach the table's object store: the endpoint and keys our engine uses."""
    storage = Storage(str(base_path))
    if not storage.is_object_store:
        return {}
    options = {theirs: storage.settings[ours] for ours, theirs in _OBJECT_STORE_KEYS.items()
               if ours in storage.settings}
    endpoint = storage.settings.get("fs.s3a.endpoint")
    if endpoint:
        options["aws_endpoint"] = endpoint
        options["aws_allow_http"] = str(endpoint.startswith("http://")).lower()
        options["aws_virtual_hosted_style_request"] = str(
            storage.settings.get("fs.s3a.path.style.access", "false").lower() != "true").lower()
    return options


def hudi_rs_read(base_path, *, as_of: str | None = None, begin: str | None = None,
                 end: str | None = None, read_optimized: bool = False) -> pa.Table:
    table = HudiTableBuilder.from_base_uri(str(base_path)).with_storage_options(storage_options(base_path)).build()
    options = HudiReadOptions()
    if read_optimized:
        options = options.with_hudi_option("hoodie.read.use.read_optimized.mode", "true")
    if begin is not None:
        options = options.with_query_type(HudiQueryType.Incremental).with_start_timestamp(begin)
        if end is not None:
            options = options.with_end_timestamp(end)
    elif as_of is not None:
        options = options.with_as_of_timestamp(as_of)
    batches = table.read(options)
    if not batches:
        return table.get_schema_with_meta_fields().empty_table() if hasattr(
            table, "get_schema_with_meta_fields") else pa.table({})
    return pa.Table.from_batches(batches)


def rows(table: pa.Table, columns: list[str]) -> list[tuple]:
    """Rows as sorted tuples of the given columns: order-free comparison of two readers."""
    return sorted(tuple(r[c] for c in columns) for r in table.select(columns).to_pylist())
