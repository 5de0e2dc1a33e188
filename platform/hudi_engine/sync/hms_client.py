"""The Hive Metastore over thrift (Hive 2.x/3.x API, as HMSDDLExecutor uses it): every call
retried with exponential backoff on transport failures and transient backend errors, the next URI
tried when one is down, and answers converted to and from the planner's :class:`HiveTable`."""
from __future__ import annotations

import getpass
import logging
import re
import time
from typing import Callable, Sequence, TypeVar
from urllib.parse import urlparse

from pymetastore.hive_metastore import ThriftHiveMetastore
from pymetastore.hive_metastore.ttypes import (AddPartitionsRequest, AlreadyExistsException, Database,
                                               EnvironmentContext, FieldSchema, MetaException,
                                               NoSuchObjectException, Partition, SerDeInfo,
                                               StorageDescriptor, Table)
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.Thrift import TApplicationException, TException
from thrift.transport.TSocket import TSocket
from thrift.transport.TTransport import TBufferedTransport, TTransportException

from .. import config as C
from .errors import HiveSyncError, MetastoreUnavailableError
from .hive_schema import Column
from .plan import HivePartition, HiveTable, TableUpdate

log = logging.getLogger(__name__)
T = TypeVar("T")
# Backend hiccups worth another try, as Hive's RetryingMetaStoreClient decides.
_TRANSIENT_META_ERROR = re.compile(r"(JDO[a-zA-Z]*|TProtocol|TTransport)Exception")


class HmsClient:
    """One session with the first metastore URI that answers."""

    def __init__(self, uris: str, retries: int = 3, backoff_seconds: float = 1.0,
                 timeout_seconds: float = 60.0):
        self.uris = [u.strip() for u in uris.split(",") if u.strip()]
        if not self.uris:
            raise HiveSyncError(f"no metastore URI given; set {C.HIVE_SYNC_METASTORE_URIS.key}")
        self.retries, self.backoff, self.timeout = retries, backoff_seconds, timeout_seconds
        self._transport: TBufferedTransport | None = None
        self._client: ThriftHiveMetastore.Client | None = None

    def __enter__(self) -> "HmsClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
        self._transport = self._client = None

    # --- databases and tables ----------------------------------------------------------------
    def database_exists(self, name: str) -> bool:
        found = self._call(f"get_database({name})", lambda c: c.get_database(name), NoSuchObjectException)
        return found is not None

    def create_database(self, name: str) -> None:
        db = Database(name=name, description="automatically created by hoodie", parameters={})
        self._call(f"create_database({name})", lambda c: c.create_database(db), AlreadyExistsException)

    def get_table(self, database: str, name: str) -> HiveTable | None:
        raw = self._raw_table(database, name)
        return None if raw is None else _from_thrift(raw)

    def create_table(self, table: HiveTable) -> bool:
        """False when the table appeared meanwhile (a concurrent sync created it)."""
        raw = Table(tableName=table.name, dbName=table.database, owner=getpass.getuser(),
                    createTime=int(time.time()), lastAccessTime=0, retention=0,
                    sd=_storage(table, table.location), parameters=dict(table.params), tableType=table.table_type,
                    partitionKeys=[FieldSchema(k.name, k.type, k.comment) for k in table.partition_keys])
        created = self._call(f"create_table({table.qualified_name})", lambda c: c.create_table(raw) or True,
                             AlreadyExistsException)
        return bool(created)

    def alter_table(self, update: TableUpdate) -> None:
        """Write the planned definition onto the metastore's current table object, keeping every
        field the plan does not model (owner, create time, bucketing, statistics, ...)."""
        t = update.table
        raw = self._raw_table(t.database, t.name, required=True)
        raw.sd.cols = [FieldSchema(c.name, c.type, c.comment) for c in t.columns]
        raw.sd.location, raw.sd.inputFormat, raw.sd.outputFormat = t.location, t.input_format, t.output_format
        serde_name = raw.sd.serdeInfo.name if raw.sd.serdeInfo else None
        raw.sd.serdeInfo = SerDeInfo(serde_name, t.serde, dict(t.serde_params))
        raw.parameters, raw.tableType = dict(t.params), t.table_type
        context = EnvironmentContext({"CASCADE": "true"}) if update.cascade else None
        self._call(f"alter_table({t.qualified_name})",
                   lambda c: c.alter_table_with_environment_context(t.database, t.name, raw, context))

    def set_table_params(self, database: str, name: str, params: dict[str, str]) -> None:
        raw = self._raw_table(database, name, required=True)
        raw.parameters = {**(raw.parameters or {}), **params}
        self._call(f"alter_table({database}.{name})", lambda c: c.alter_table(database, name, raw))

    # --- partitions --------------------------------------------------------------------------
    def get_partitions(self, database: str, name: str) -> list[HivePartition]:
        parts = self._call(f"get_partitions({database}.{name})", lambda c: c.get_partitions(database, name, -1))
        return [HivePartition(tuple(p.values), p.sd.location) for p in parts]

    def add_partitions(self, table: HiveTable, parts: Sequence[HivePartition], batch: int) -> None:
        """Added if not there yet, so a retried or concurrent call is harmless."""
        for start in range(0, len(parts), batch):
            chunk = [self._partition(table, p) for p in parts[start:start + batch]]
            request = AddPartitionsRequest(table.database, table.name, chunk, ifNotExists=True, needResult=False)
            self._call(f"add_partitions({table.qualified_name}, {len(chunk)})",
                       lambda c: c.add_partitions_req(request))

    def alter_partitions(self, table: HiveTable, parts: Sequence[HivePartition]) -> None:
        if parts:
            new = [self._partition(table, p) for p in parts]
            self._call(f"alter_partitions({table.qualified_name}, {len(new)})",
                       lambda c: c.alter_partitions(table.database, table.name, new))

    def drop_partitions(self, database: str, name: str, values: Sequence[tuple[str, ...]]) -> None:
        """Metadata only (deleteData=false): the files belong to the Hudi table."""
        for v in values:
            self._call(f"drop_partition({database}.{name}, {list(v)})",
                       lambda c: c.drop_partition(database, name, list(v), False), NoSuchObjectException)

    # --- plumbing ----------------------------------------------------------------------------
    @staticmethod
    def _partition(table: HiveTable, part: HivePartition) -> Partition:
        now = int(time.time())
        return Partition(values=list(part.values), dbName=table.database, tableName=table.name,
                         createTime=now, lastAccessTime=0, sd=_storage(table, part.location), parameters={})

    def _raw_table(self, database: str, name: str, required: bool = False) -> Table | None:
        raw = self._call(f"get_table({database}.{name})", lambda c: c.get_table(database, name),
                         NoSuchObjectException)
        if raw is None and required:
            raise HiveSyncError(f"{database}.{name} disappeared from the metastore during the sync; run it again")
        return raw

    def _call(self, what: str, fn: Callable[[ThriftHiveMetastore.Client], T],
              tolerated: type[Exception] | tuple = ()) -> T | None:
        """``fn``'s answer; None when it raised ``tolerated`` (already there, or already gone)."""
        delay, started, attempts = self.backoff, time.monotonic(), self.retries + 1
        for attempt in range(1, attempts + 1):
            try:
                return fn(self._connected())
            except tolerated:
                return None
            except TApplicationException as exc:
                raise HiveSyncError(
                    f"the metastore at {self._uri_text()} rejected {what}: {exc}. It may speak another "
                    "thrift API version than Hive 2.x/3.x (Hive 4 renamed calls); check its version") from exc
            except (TTransportException, OSError, EOFError, MetaException) as exc:
                if isinstance(exc, MetaException) and not _TRANSIENT_META_ERROR.search(exc.message or ""):
                    raise HiveSyncError(f"the metastore refused {what}: {exc.message}") from exc
                self.close()
                self.uris = self.uris[1:] + self.uris[:1]     # the next attempt starts at another URI
                if attempt == attempts:
                    raise self._unavailable(what, exc, attempts, time.monotonic() - started) from exc
                log.warning("metastore call %s failed (%s); retry %d/%d in %.1fs",
                            what, exc, attempt, self.retries, delay)
                time.sleep(delay)
                delay *= 2
            except TException as exc:
                raise HiveSyncError(f"the metastore refused {what}: {exc}") from exc
        raise AssertionError("unreachable")

    def _connected(self) -> ThriftHiveMetastore.Client:
        if self._client is not None:
            return self._client
        error: Exception | None = None
        for uri in self.uris:
            parsed = urlparse(uri if "://" in uri else f"thrift://{uri}")
            if parsed.scheme != "thrift" or not parsed.hostname:
                raise HiveSyncError(f"metastore URI {uri!r} is not thrift://host:port "
                                    f"({C.HIVE_SYNC_METASTORE_URIS.key})")
            socket = TSocket(parsed.hostname, parsed.port or 9083)
            socket.setTimeout(self.timeout * 1000)
            transport = TBufferedTransport(socket)
            try:
                transport.open()
            except TTransportException as exc:
                error = exc
                continue
            self._transport = transport
            self._client = ThriftHiveMetastore.Client(TBinaryProtocol(transport))
            return self._client
        raise error

    def _unavailable(self, what: str, exc: Exception, attempts: int,
                     seconds: float) -> MetastoreUnavailableError:
        return MetastoreUnavailableError(
            f"cannot reach the Hive Metastore at {self._uri_text()} ({what} failed {attempts} times over "
            f"{seconds:.0f}s; last error: {exc}). Check that the metastore is running and listening on that "
            f"host and port, that {C.HIVE_SYNC_METASTORE_URIS.key} (hudictl --metastore-uris) names it as "
            "thrift://host:port, and that no firewall or network policy blocks the port")

    def _uri_text(self) -> str:
        return ", ".join(self.uris)


def _storage(table: HiveTable, location: str) -> StorageDescriptor:
    return StorageDescriptor(
        cols=[FieldSchema(c.name, c.type, c.comment) for c in table.columns], location=location,
        inputFormat=table.input_format, outputFormat=table.output_format, compressed=False, numBuckets=-1,
        serdeInfo=SerDeInfo(None, table.serde, dict(table.serde_params)), bucketCols=[], sortCols=[],
        parameters={}, storedAsSubDirectories=False)


def _from_thrift(raw: Table) -> HiveTable:
    sd = raw.sd or StorageDescriptor()
    serde = sd.serdeInfo or SerDeInfo()
    return HiveTable(
        database=raw.dbName, name=raw.tableName, location=sd.location or "",
        columns=tuple(Column(c.name, c.type, c.comment) for c in sd.cols or ()),
        partition_keys=tuple(Column(k.name, k.type, k.comment) for k in raw.partitionKeys or ()),
        input_format=sd.inputFormat or "", output_format=sd.outputFormat or "",
        serde=serde.serializationLib or "", serde_params=dict(serde.parameters or {}),
        params=dict(raw.parameters or {}), table_type=raw.tableType or "")
