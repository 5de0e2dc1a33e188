"""A table's persisted identity (``hoodie.properties``) plus its timeline and file view."""
from __future__ import annotations

from functools import cached_property

from .. import config as C
from ..config import HoodieConfig
from ..errors import HoodieConfigError, HoodieTableNotFoundError
from ..file_group.fs_view import FileSystemView
from ..merge.custom import custom_merger_name, strategy_id_of
from ..merge.partial import IGNORE_DEFAULTS, partial_payload_class, partial_update
from ..merge.record_merger import PAYLOAD_MERGE_MODES, merge_mode, mode_payload_class
from ..storage import FileInfo, Storage
from ..timeline.timeline import META_DIR, Timeline
from .properties import read_properties_text, table_checksum, write_properties_text

PROPERTIES_FILE = f"{META_DIR}/hoodie.properties"
READ_TABLE_VERSIONS = (5, 6, 8, 9)
WRITE_TABLE_VERSIONS = (6, 8, 9)
# Version 9 persists the ordering field under this name instead of hoodie.table.precombine.field.
ORDERING_FIELDS_KEY = next(k for k in C.PRECOMBINE_FIELD.alternatives if k.startswith("hoodie.table."))


def ordering_key_of_version(props: dict[str, str], version: int) -> dict[str, str]:
    """``props`` with the ordering field under the key ``version`` reads: Hudi 1.1 (9) renamed
    hoodie.table.precombine.field to hoodie.table.ordering.fields."""
    old, new = (C.PRECOMBINE_FIELD.key, ORDERING_FIELDS_KEY) if version >= 9 else (ORDERING_FIELDS_KEY,
                                                                                    C.PRECOMBINE_FIELD.key)
    out = {k: v for k, v in props.items() if k != old}
    if old in props:
        out[new] = props[old]
    return out
# Hudi's HoodieRecordMerger strategy ids, persisted from table version 8 on.
MERGE_STRATEGY_IDS = {"EVENT_TIME_ORDERING": "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5",
                      "COMMIT_TIME_ORDERING": "ce9acb64-bde0-424c-9b91-f6ebba25356d"}


def timeline_properties(version: int) -> dict[str, str]:
    """What a table of ``version`` says of its version and timeline layout (a data table and its
    metadata table alike): layout 2, in ``.hoodie/timeline/`` with its history, from version 8 on."""
    if version < 8:
        return {C.TABLE_VERSION.key: str(version), C.TIMELINE_LAYOUT_VERSION.key: "1"}
    return {C.TABLE_VERSION.key: str(version), C.TIMELINE_LAYOUT_VERSION.key: "2",
            C.TIMELINE_PATH.key: C.TIMELINE_PATH.default, C.TIMELINE_HISTORY_PATH.key: C.TIMELINE_HISTORY_PATH.default}


def merge_properties(mode: str, version: int, custom: str | None = None) -> dict[str, str]:
    """How a table of version 8+ says its records merge: the mode, and (version 8) Hudi's strategy id;
    under CUSTOM, at either version, the merger's strategy id and (this engine's) its Python name."""
    if custom is not None:
        return {C.RECORD_MERGE_MODE.key: mode, C.RECORD_MERGE_STRATEGY_ID.key: strategy_id_of(custom),
                C.RECORD_MERGE_CUSTOM_CLASSES.key: custom}
    return {C.RECORD_MERGE_MODE.key: mode, **({C.RECORD_MERGE_STRATEGY_ID.key: MERGE_STRATEGY_IDS[mode]}
                                              if version < 9 else {})}


def make_timeline_folders(storage: Storage, props: dict[str, str]) -> None:
    """The folders a new timeline keeps its past in: ``timeline/history`` (layout 2) or the archive
    folder (layout 1)."""
    if int(props.get(C.TIMELINE_LAYOUT_VERSION.key, "1")) >= 2:
        storage.mkdirs(f"{META_DIR}/{C.TIMELINE_PATH.default}/{C.TIMELINE_HISTORY_PATH.default}")
    else:
        storage.mkdirs(f"{META_DIR}/{props.get(C.ARCHIVELOG_FOLDER.key, C.ARCHIVELOG_FOLDER.default)}")


# Keys every write persists when it creates a table, from the write options (or their defaults).
_PERSISTED = (C.TABLE_NAME, C.DATABASE_NAME, C.TABLE_TYPE, C.RECORDKEY_FIELDS, C.PARTITION_FIELDS,
              C.PRECOMBINE_FIELD, C.HIVE_STYLE_PARTITIONING, C.URL_ENCODE_PARTITIONING,
              C.DROP_PARTITION_COLUMNS, C.POPULATE_META_FIELDS, C.BASE_FILE_FORMAT, C.TIMELINE_TIMEZONE,
              C.ARCHIVELOG_FOLDER, C.PARTITION_METAFILE_USE_BASE_FORMAT, C.CDC_ENABLED)
# Key generator settings other engines need to rebuild keys: persisted only when the write set them.
_PERSISTED_IF_SET = (C.TIMESTAMP_TYPE, C.TIMESTAMP_INPUT_DATE_FORMAT, C.TIMESTAMP_OUTPUT_DATE_FORMAT,
                     C.TIMESTAMP_TIMEZONE, C.TIMESTAMP_INPUT_TIMEZONE, C.TIMESTAMP_OUTPUT_TIMEZONE,
                     C.TIMESTAMP_SCALAR_UNIT, C.COMPLEX_KEYGEN_ENCODING)
# Keys that define what a record is: a write that disagrees with the table is refused.
_IDENTITY = (C.RECORDKEY_FIELDS, C.PARTITION_FIELDS, C.TABLE_TYPE, C.HIVE_STYLE_PARTITIONING)


class HoodieTable:
    def __init__(self, storage: Storage, props: dict[str, str]):
        self.storage = storage
        self.props = props
        self.config = HoodieConfig(props)

    # --- opening and creating --------------------------------------------------------------------
    @classmethod
    def exists(cls, base_path: str) -> bool:
        return Storage(base_path).exists(PROPERTIES_FILE)

    @classmethod
    def load(cls, base_path: "str | Storage") -> "HoodieTable":
        """The table at ``base_path`` (a URI, or a :class:`Storage` carrying its settings)."""
        storage = base_path if isinstance(base_path, Storage) else Storage(base_path)
        base_path = storage.base_uri
        try:
            props = read_properties_text(storage.read_text(PROPERTIES_FILE))
        except FileNotFoundError:
            raise HoodieTableNotFoundError(
                f"no Hudi table at {base_path}: {PROPERTIES_FILE} is missing. Write to the path "
                "first, or check the base path (it is the folder that holds .hoodie/)") from None
        table = cls(storage, props)
        if table.version not in READ_TABLE_VERSIONS:
            raise HoodieConfigError(
                f"{base_path} has hoodie.table.version={table.version}; this engine reads versions "
                f"{', '.join(map(str, READ_TABLE_VERSIONS))}")
        return table

    @classmethod
    def create(cls, base_path: str, options: HoodieConfig, keygen_class: str,
               create_schema: str) -> "HoodieTable":
        props: dict[str, str] = {}
        for prop in _PERSISTED + tuple(p for p in _PERSISTED_IF_SET if options.contains(p)):
            value = options.get_str(prop)
            if value not in (None, ""):
                props[prop.key] = value
        props[C.TABLE_NAME.key] = options.require(C.TABLE_NAME, "a new table needs a name")
        props[C.RECORDKEY_FIELDS.key] = options.require(
            C.RECORDKEY_FIELDS, "name the field(s) that identify a record, e.g. 'id'")
        if options.get(C.CDC_ENABLED):   # readers must know what the CDC log files hold
            props[C.CDC_LOGGING_MODE.key] = options.get_str(C.CDC_LOGGING_MODE).upper()
        version = options.get(C.WRITE_TABLE_VERSION)
        props.update(timeline_properties(version))
        props[C.KEYGEN_CLASS.key] = keygen_class
        props[C.CREATE_SCHEMA.key] = create_schema
        mode = merge_mode(options)
        custom = custom_merger_name(options)
        if custom is not None and version < 8:
            raise HoodieConfigError(
                f"{C.RECORD_MERGE_MODE.key}=CUSTOM needs table version 8 or 9 (Hudi 1.x's merge modes); "
                f"set {C.WRITE_TABLE_VERSION.key}=9")
        if version < 9:           # Hudi 1.1 says it with the merge mode alone
            given = options.get_str(C.PAYLOAD_CLASS) if options.contains(C.PAYLOAD_CLASS) else None
            props[C.PAYLOAD_CLASS.key] = (partial_payload_class(mode) if partial_update(options) else given
                                          if PAYLOAD_MERGE_MODES.get(given or "") == mode else mode_payload_class(mode))
        elif partial_update(options):   # Hudi 1.1 says it with the partial update mode
            props[C.PARTIAL_UPDATE_MODE.key] = IGNORE_DEFAULTS
        props[C.TABLE_CHECKSUM.key] = table_checksum(props[C.DATABASE_NAME.key], props[C.TABLE_NAME.key])
        if version >= 8:          # Hudi 1.x: the merge mode is the table's
            props.update({C.INITIAL_TABLE_VERSION.key: str(version), **merge_properties(mode, version, custom)})
        props = ordering_key_of_version(props, version)
        if version >= 9:          # Hudi 1.1: the format plugin
            props[C.TABLE_FORMAT.key] = C.TABLE_FORMAT.default
        storage = Storage(base_path)
        make_timeline_folders(storage, props)
        storage.write_text(PROPERTIES_FILE, write_properties_text(props))
        return cls(storage, props)

    def check_write_options(self, options: HoodieConfig) -> None:
        """Refuse a write whose record identity disagrees with the table's."""
        for prop in _IDENTITY:
            if not options.contains(prop):
                continue
            mine, theirs = self.config.get_str(prop) or "", options.get_str(prop) or ""
            if mine.replace(" ", "").lower() != theirs.replace(" ", "").lower():
                raise HoodieConfigError(
                    f"{prop.key}={theirs!r} does not match the table's {mine!r} "
                    f"({self.storage.base_uri}); drop the option or write to a new table")

    # --- identity --------------------------------------------------------------------------------
    @property
    def base_path(self) -> str:
        return self.storage.base_uri

    @property
    def name(self) -> str:
        return self.props[C.TABLE_NAME.key]

    @property
    def version(self) -> int:
        return int(self.props.get(C.TABLE_VERSION.key, "0"))

    @property
    def table_type(self) -> str:
        return self.config.get_str(C.TABLE_TYPE).upper()

    @property
    def layout_version(self) -> int:
        return int(self.props.get(C.TIMELINE_LAYOUT_VERSION.key, "1"))

    @property
    def populate_meta_fields(self) -> bool:
        return self.config.get(C.POPULATE_META_FIELDS)

    # --- timeline and files ----------------------------------------------------------------------
    @cached_property
    def timeline(self) -> Timeline:
        return Timeline.load(self.storage, self.layout_version, self.config.get_str(C.TIMELINE_PATH))

    def reload(self) -> "HoodieTable":
        return HoodieTable(self.storage, self.props)

    def fs_view(self, listing: list[FileInfo] | None = None) -> FileSystemView:
        """The table's files, from ``listing`` when given (the metadata table's files partition:
        ``metadata_table.table_view``), else listed from storage."""
        return FileSystemView(self.storage, self.timeline, listing)

    @cached_property
    def derived(self) -> dict:
        """What other layers compute once per snapshot of this table (the metadata table's file
        listing); gone with the snapshot on ``reload``."""
        return {}
