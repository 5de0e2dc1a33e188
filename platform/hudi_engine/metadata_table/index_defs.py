"""Index definitions: ``.hoodie/.index_defs/index.json`` (``HoodieIndexMetadata``), as Hudi 1.x keeps them.

A secondary or expression index exists in two places: its definition here (what it indexes) and
its metadata partition (``secondary_index_<name>``, listed in ``hoodie.table.metadata.partitions``
once built). The file is Jackson's pretty-printed JSON of ``{"indexDefinitions": {<partition>:
HoodieIndexDefinition}}``; the table property ``hoodie.table.index.defs.path`` holds its path
relative to the base path. Definitions this engine does not write (Hudi 1.1's ``record_index`` or
``column_stats`` ones) are kept as they are when the file is rewritten.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from .. import config as C
from ..table.meta_client import PROPERTIES_FILE, HoodieTable
from ..table.properties import write_properties_text
from .keys import EXPRESSION_INDEX, SECONDARY_INDEX

INDEX_DEFS_PATH = ".hoodie/.index_defs/index.json"    # HoodieTableMetaClient's default location
SECONDARY_INDEX_TYPE = "secondary_index"
EXPRESSION_INDEX_TYPES = ("column_stats", "bloom_filters")     # what an expression index keeps per file
IDENTITY = "identity"


@dataclass(frozen=True)
class IndexDefinition:
    """``HoodieIndexDefinition``: ``name`` is the metadata partition (``secondary_index_<user name>``);
    ``version`` is ``V1`` (Hudi 1.0, table version 8) or ``V2`` (Hudi 1.1, table version 9)."""
    name: str
    index_type: str
    source_fields: tuple[str, ...]
    function: str = ""
    options: dict[str, str] = field(default_factory=dict)
    version: str | None = None

    @property
    def user_name(self) -> str:
        """The name a user gives (``idx_city`` of ``secondary_index_idx_city``, ``idx_day`` of
        ``expr_index_idx_day``)."""
        for prefix in (SECONDARY_INDEX.path, EXPRESSION_INDEX.path):
            if self.name.startswith(prefix):
                return self.name[len(prefix):]
        return self.name

    @property
    def index_version(self) -> int:
        return int(self.version[1:]) if self.version else 1

    def to_json_obj(self) -> dict:
        obj: dict = {"indexName": self.name, "indexType": self.index_type, "indexFunction": self.function,
                     "sourceFields": list(self.source_fields), "indexOptions": dict(self.options)}
        if self.version is not None:
            obj["version"] = self.version
        return obj

    @classmethod
    def from_json_obj(cls, obj: dict) -> "IndexDefinition":
        return cls(obj["indexName"], obj["indexType"], tuple(obj.get("sourceFields") or ()),
                   obj.get("indexFunction") or "", dict(obj.get("indexOptions") or {}), obj.get("version"))


def secondary_index_partition(user_name: str) -> str:
    """The metadata partition of a secondary index the user named ``user_name``."""
    return user_name if user_name.startswith(SECONDARY_INDEX.path) else SECONDARY_INDEX.path + user_name


def is_secondary_index_partition(partition: str) -> bool:
    return partition.startswith(SECONDARY_INDEX.path)


def secondary_index_version(table_version: int) -> str:
    """``HoodieIndexVersion.getCurrentVersion`` of a secondary index: V2 from table version 9 on."""
    return "V2" if table_version >= 9 else "V1"


def secondary_index_definition(user_name: str, column: str, table_version: int) -> IndexDefinition:
    """The definition ``CREATE INDEX <user_name> ON t (<column>)`` writes. Table version 8 keeps no
    version attribute (as Hudi 1.0 wrote it; Hudi 1.1 accepts that only on version 8)."""
    version = secondary_index_version(table_version) if table_version >= 9 else None
    return IndexDefinition(secondary_index_partition(user_name), SECONDARY_INDEX_TYPE, (column,), IDENTITY, {}, version)


def expression_index_partition(user_name: str) -> str:
    """The metadata partition of an expression index the user named ``user_name``."""
    return user_name if user_name.startswith(EXPRESSION_INDEX.path) else EXPRESSION_INDEX.path + user_name


def is_expression_index_partition(partition: str) -> bool:
    return partition.startswith(EXPRESSION_INDEX.path)


def expression_index_definition(user_name: str, column: str, index_type: str, options: dict[str, str],
                                table_version: int) -> IndexDefinition:
    """The definition ``CREATE INDEX <user_name> ON t USING <index_type>(<column>) OPTIONS(expr=...)``
    writes: the function is the ``expr`` option (``identity`` without one), every option is kept. Expression indexes are at
    ``V1`` (no version attribute on table version 8, as for secondary indexes)."""
    version = "V1" if table_version >= 9 else None
    return IndexDefinition(expression_index_partition(user_name), index_type, (column,),
                           options.get("expr", IDENTITY), dict(options), version)


# --- Jackson's DefaultPrettyPrinter --------------------------------------------------------------
def _jackson(value, indent: int) -> str:
    pad, inner = "  " * indent, "  " * (indent + 1)
    if isinstance(value, dict):
        if not value:
            return "{ }"
        items = [f'{inner}{json.dumps(k, ensure_ascii=False)} : {_jackson(v, indent + 1)}' for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list):
        if not value:
            return "[ ]"
        return "[ " + ", ".join(_jackson(v, indent + 1) for v in value) + " ]"
    return json.dumps(value, ensure_ascii=False)


def index_metadata_json(definitions: dict[str, dict]) -> str:
    """``HoodieIndexMetadata.toJson``: the definitions (JSON objects by index name), pretty printed."""
    return _jackson({"indexDefinitions": definitions}, 0)


def parse_index_metadata(text: str) -> dict[str, dict]:
    """Index name → definition object, in the file's order (Jackson reads a map in order)."""
    if not text.strip():
        return {}
    return dict(json.loads(text).get("indexDefinitions") or {})


# --- on storage ----------------------------------------------------------------------------------
def index_defs_path(table: HoodieTable) -> str:
    return table.props.get(C.TABLE_INDEX_DEFS_PATH.key) or INDEX_DEFS_PATH


def read_definitions(table: HoodieTable) -> dict[str, dict]:
    """The table's index definitions (JSON objects by name); none without the table property."""
    if not table.props.get(C.TABLE_INDEX_DEFS_PATH.key):
        return {}
    try:
        return parse_index_metadata(table.storage.read_text(index_defs_path(table)))
    except FileNotFoundError:
        return {}


def secondary_indexes(table: HoodieTable) -> list[IndexDefinition]:
    """The table's secondary index definitions (built or not)."""
    return [IndexDefinition.from_json_obj(d) for d in read_definitions(table).values()
            if d.get("indexType") == SECONDARY_INDEX_TYPE]


def expression_indexes(table: HoodieTable) -> list[IndexDefinition]:
    """The table's expression index definitions (built or not)."""
    return [IndexDefinition.from_json_obj(d) for name, d in read_definitions(table).items()
            if is_expression_index_partition(name) and d.get("indexType") in EXPRESSION_INDEX_TYPES]


def write_definitions(table: HoodieTable, definitions: dict[str, dict]) -> HoodieTable:
    """Write index.json and, the first time, point ``hoodie.table.index.defs.path`` at it."""
    path = index_defs_path(table)
    table.storage.write_text(path, index_metadata_json(definitions))
    if table.props.get(C.TABLE_INDEX_DEFS_PATH.key) == path:
        return table
    props = {**table.props, C.TABLE_INDEX_DEFS_PATH.key: path}
    table.storage.write_text(PROPERTIES_FILE, write_properties_text(props))
    return HoodieTable(table.storage, props)


def add_definition(table: HoodieTable, definition: IndexDefinition) -> HoodieTable:
    """The definition added after the others (the caller refuses a name already taken)."""
    definitions = read_definitions(table)
    definitions[definition.name] = definition.to_json_obj()
    return write_definitions(table, definitions)


def remove_definition(table: HoodieTable, name: str) -> HoodieTable:
    definitions = read_definitions(table)
    definitions.pop(name, None)
    return write_definitions(table, definitions)


def index_listing(table: HoodieTable) -> list[dict[str, str]]:
    """``SHOW INDEXES``: each metadata partition but ``files``; a secondary or expression index with
    its type and columns, the others named by their partition (Hudi's ``ShowIndexesCommand``)."""
    from .layout import FILES, table_partitions

    definitions = read_definitions(table)
    rows = []
    for partition in table_partitions(table):
        if partition in definitions and definitions[partition].get("indexType") != partition:
            d = definitions[partition]
            rows.append({"index_name": partition, "col_name": ",".join(d.get("sourceFields") or ()),
                         "index_type": d["indexType"].lower()})
        elif partition != FILES:
            rows.append({"index_name": partition, "col_name": "", "index_type": partition})
    return rows
