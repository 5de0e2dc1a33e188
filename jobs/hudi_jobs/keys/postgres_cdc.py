"""The PostgreSQL change-capture source (``PostgresCdcSource``), this platform's own: it reads a
table's changes by logical decoding (a replication slot and a publication, with the server's
built-in ``pgoutput`` plugin) and turns them into Debezium-shaped rows, so no Kafka or Kafka
Connect is needed. Its keys follow Hudi's JDBC source's spelling."""
from hudi_engine.config import define

SNAPSHOT_INITIAL, SNAPSHOT_NEVER = "initial", "never"

URL = define(
    "hoodie.streamer.source.postgres.url", None,
    "The database: postgresql://host:5432/database or jdbc:postgresql://host:5432/database "
    "(libpq connection parameters such as sslmode may follow as ?name=value).")
USER = define(
    "hoodie.streamer.source.postgres.user", None,
    "User to connect as. It needs the REPLICATION attribute (or superuser), and to own the table "
    "when the publication is to be created.")
PASSWORD = define(
    "hoodie.streamer.source.postgres.password", None,
    "Password of the user; better a ${secret:<secret>/<key>} placeholder or the password file.")
PASSWORD_FILE = define(
    "hoodie.streamer.source.postgres.password.file", None,
    "File whose first line is the password (e.g. a mounted Secret).")
TABLE = define(
    "hoodie.streamer.source.postgres.table", None,
    "The table whose changes are captured: schema.table, or table for schema public.")
SLOT = define(
    "hoodie.streamer.source.postgres.slot.name", None,
    "Replication slot that keeps the table's changes until they are committed to the Hudi table "
    "(created when missing; default hudi_<database>_<schema>_<table>, as slots are per server). "
    "One slot per pipeline: two pipelines on one slot would take each other's changes.")
PUBLICATION = define(
    "hoodie.streamer.source.postgres.publication.name", None,
    "Publication naming the table for pgoutput (created when missing, default "
    "hudi_<database>_<schema>_<table>; an existing one must include the table).")
SNAPSHOT_MODE = define(
    "hoodie.streamer.source.postgres.snapshot.mode", SNAPSHOT_INITIAL,
    "On the first run: initial reads the table's current rows first (Debezium's op r), then "
    "its changes; never captures only the changes made after the slot was created.",
    choices=(SNAPSHOT_INITIAL, SNAPSHOT_NEVER))
MAX_CHANGES = define(
    "hoodie.streamer.source.postgres.max.changes", 100000,
    "Most change messages one batch reads when --source-limit is not given; whole transactions "
    "only, so a batch may hold a few more.")
IDLE_ADVANCE_BYTES = define(
    "hoodie.streamer.source.postgres.idle.advance.bytes", 64 * 1024 * 1024,
    "When the table has had no changes while the database wrote this much WAL, an empty commit "
    "moves the checkpoint, so the slot stops holding WAL on the server.")
