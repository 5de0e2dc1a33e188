"""Hudi's JDBC source (``JdbcSource``, Hudi's JdbcSourceConfig), so a Hudi user's
``hoodie.streamer.jdbc.*`` options work unchanged. PostgreSQL URLs are read with psycopg (no
driver JAR); any other database through Spark's JDBC reader and the driver class given here."""
from hudi_engine.config import define, define_family

# Spark storage level names; the *_SER ones are what Hudi's default spells (PySpark's levels are
# serialized already).
STORAGE_LEVELS = ("MEMORY_AND_DISK_SER", "MEMORY_AND_DISK", "MEMORY_AND_DISK_2", "MEMORY_AND_DISK_SER_2",
                  "MEMORY_ONLY", "MEMORY_ONLY_2", "MEMORY_ONLY_SER", "MEMORY_ONLY_SER_2", "DISK_ONLY",
                  "DISK_ONLY_2", "DISK_ONLY_3", "OFF_HEAP")

URL = define(
    "hoodie.streamer.jdbc.url", None,
    "The database: jdbc:postgresql://host:5432/db (or postgresql://...; read without a driver JAR), "
    "or any other JDBC URL, read by Spark with driver.class.",
    alternatives=("hoodie.deltastreamer.jdbc.url",))
USER = define(
    "hoodie.streamer.jdbc.user", None,
    "User to connect as (for PostgreSQL it may also be in the URL).",
    alternatives=("hoodie.deltastreamer.jdbc.user",))
PASSWORD = define(
    "hoodie.streamer.jdbc.password", None,
    "Password of the user; better a ${secret:<secret>/<key>} placeholder or password.file.",
    alternatives=("hoodie.deltastreamer.jdbc.password",))
PASSWORD_FILE = define(
    "hoodie.streamer.jdbc.password.file", None,
    "File whose first line is the password (e.g. a mounted Secret); used when password is not set.",
    alternatives=("hoodie.deltastreamer.jdbc.password.file",))
DRIVER_CLASS = define(
    "hoodie.streamer.jdbc.driver.class", None,
    "JDBC driver class for a non-PostgreSQL URL (e.g. com.mysql.cj.jdbc.Driver); its JAR must be "
    "on Spark's classpath (spark.jars). Not needed for PostgreSQL.",
    alternatives=("hoodie.deltastreamer.jdbc.driver.class",))
TABLE_NAME = define(
    "hoodie.streamer.jdbc.table.name", None,
    "Table (or view) to pull: table or schema.table.",
    alternatives=("hoodie.deltastreamer.jdbc.table.name",))
INCREMENTAL_COLUMN = define(
    "hoodie.streamer.jdbc.table.incr.column.name", None,
    "Column whose growing values (an id, an updated-at timestamp) mark new rows; the checkpoint "
    "is its largest value read. Required when incr.pull is true.",
    alternatives=("hoodie.deltastreamer.jdbc.table.incr.column.name",))
IS_INCREMENTAL = define(
    "hoodie.streamer.jdbc.incr.pull", None,
    "Required, as in Hudi: true pulls only rows whose incremental column is above the checkpoint "
    "(the whole table on the first run); false reads the whole table every run.",
    alternatives=("hoodie.deltastreamer.jdbc.incr.pull",), choices=("true", "false"))
FALLBACK_TO_FULL_FETCH = define(
    "hoodie.streamer.jdbc.incr.fallback.to.full.fetch", False,
    "When the incremental query fails (e.g. the checkpoint is not a value of the column's type), "
    "read the whole table instead of failing.",
    alternatives=("hoodie.deltastreamer.jdbc.incr.fallback.to.full.fetch",))
STORAGE_LEVEL = define(
    "hoodie.streamer.jdbc.storage.level", "MEMORY_AND_DISK_SER",
    "Spark storage level of the batch, which is read from the database once and kept until "
    "written.",
    alternatives=("hoodie.deltastreamer.jdbc.storage.level",), choices=STORAGE_LEVELS)

_EXTRA_DOC = ("Options under this prefix go to the JDBC reader without it (e.g. ...extra.options.fetchsize); "
              "reading PostgreSQL, only fetchsize (rows per Arrow batch) applies.")
EXTRA_OPTIONS_PREFIX = define_family("hoodie.streamer.jdbc.extra.options.", _EXTRA_DOC)
EXTRA_OPTIONS_PREFIXES = (EXTRA_OPTIONS_PREFIX, define_family("hoodie.deltastreamer.jdbc.extra.options.", _EXTRA_DOC))
