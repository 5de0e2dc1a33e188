"""The hive-metastore chart's lock manager, for Hudi's HiveMetastoreBasedLockProvider: the rendered
init container that creates the transaction tables, run as it is against a real PostgreSQL (twice:
a restarted pod must not fail), and the metastore's lock settings in its command line."""
from __future__ import annotations

import subprocess

import pytest

from tests.support.helm import CHARTS, refusal, template
from tests.support.postgres import start_postgres

METASTORE = CHARTS / "hive-metastore"
SCHEMA_FILE = METASTORE / "files" / "hive-txn-schema-2.3.0.sql"
BUNDLED = {"global.storage.bucket": "lake"}
EXTERNAL = {**BUNDLED, "database.mode": "external", "database.external.host": "pg.db",
            "database.external.name": "hms", "database.passwordSecret": "pg-auth"}
# What Hive 2.3's TxnHandler needs for lock, check_lock, heartbeat, unlock and show_locks, and what
# its timeout housekeeping touches (hive-txn-schema-2.3.0.postgres.sql's tables).
LOCK_TABLES = {"hive_locks", "next_lock_id", "txns", "txn_components", "completed_txn_components", "next_txn_id",
               "compaction_queue", "next_compaction_queue_id", "completed_compactions", "aux_table", "write_set",
               "txn_map"}


def rendered(values: dict[str, str]) -> tuple[dict, dict]:
    objects = template(METASTORE, values)
    [deployment] = [o for o in objects if o["kind"] == "Deployment"]
    [config_map] = [o for o in objects if o["kind"] == "ConfigMap"
                    and o["metadata"]["name"].endswith("-transaction-schema")]
    return deployment, config_map


def init_container(deployment: dict) -> dict:
    [container] = [c for c in deployment["spec"]["template"]["spec"]["initContainers"]
                   if c["name"] == "transaction-tables"]
    return container


def metastore_command(deployment: dict) -> str:
    [container] = [c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == "metastore"]
    return " ".join(container["args"])


@pytest.mark.parametrize("values, host, database, secret", [
    (BUNDLED, "release-hive-metastore-postgresql", "metastore", "release-hive-metastore-db"),
    (EXTERNAL, "pg.db", "hms", "pg-auth")], ids=["bundled", "external"])
def test_the_init_container_reaches_the_metastores_database_with_the_chart_ddl(values, host, database, secret):
    deployment, config_map = rendered(values)
    container = init_container(deployment)
    env = {e["name"]: e.get("value") or e["valueFrom"]["secretKeyRef"]["name"] for e in container["env"]}
    assert env == {"PGHOST": host, "PGPORT": "5432", "PGDATABASE": database, "PGUSER": "metastore",
                   "PGPASSWORD": secret}
    assert config_map["data"] == {"hive-txn-schema-2.3.0.sql": SCHEMA_FILE.read_text().rstrip("\n")}
    [mount] = container["volumeMounts"]
    [volume] = [v for v in deployment["spec"]["template"]["spec"]["volumes"] if v["name"] == mount["name"]]
    assert volume["configMap"]["name"] == config_map["metadata"]["name"] and mount["readOnly"]
    assert f"{mount['mountPath']}/hive-txn-schema-2.3.0.sql" in container["args"][0]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True


def test_the_metastore_runs_its_lock_manager_with_the_configured_timeout():
    default = metastore_command(rendered(BUNDLED)[0])
    for option in ("-Dhive.txn.manager=org.apache.hadoop.hive.ql.lockmgr.DbTxnManager",
                   "-Dhive.support.concurrency=true", "-Dhive.compactor.initiator.on=true",
                   "-Ddatanucleus.connectionPoolingType=HikariCP", "-Dhive.txn.timeout=300s"):
        assert option in default.split(), option
    shorter = metastore_command(rendered({**BUNDLED, "lockManager.txnTimeout": "120s"})[0])
    assert "-Dhive.txn.timeout=120s" in shorter.split() and "-Dhive.txn.timeout=300s" not in shorter.split()
    assert "lockManager/txnTimeout" in refusal(METASTORE, {**BUNDLED, "lockManager.txnTimeout": "5 minutes"})


def test_the_init_container_creates_the_transaction_tables_on_postgresql_once(tmp_path):
    """Its script as rendered, against a real PostgreSQL 15, run twice: once creating the tables,
    then (a restarted pod) finding them and changing nothing."""
    container = init_container(rendered(BUNDLED)[0])
    [mount] = container["volumeMounts"]
    (tmp_path / "schema").mkdir()
    (tmp_path / "schema" / "hive-txn-schema-2.3.0.sql").write_text(SCHEMA_FILE.read_text())
    script = container["args"][0].replace(mount["mountPath"], str(tmp_path / "schema"))
    server = start_postgres()
    try:
        server.psql("postgres", "CREATE DATABASE metastore")
        env = server.env("metastore")
        first = subprocess.run([*container["command"], script], env=env, capture_output=True, text=True)
        assert first.returncode == 0, first.stderr
        tables = server.psql("metastore", "SELECT string_agg(tablename, ',') FROM pg_tables WHERE schemaname='public'")
        assert set(tables.split(",")) == LOCK_TABLES
        assert server.psql("metastore", "SELECT nl_next FROM next_lock_id") == "1"
        server.psql("metastore", "UPDATE next_lock_id SET nl_next = 42")       # the metastore has handed out locks
        again = subprocess.run([*container["command"], script], env=env, capture_output=True, text=True)
        assert again.returncode == 0, again.stderr
        assert "the transaction tables exist" in again.stdout
        assert server.psql("metastore", "SELECT nl_next FROM next_lock_id") == "42"
        # The lock manager's columns as TxnHandler writes them (a lock row as Hive 2.3 inserts it).
        server.psql("metastore", "INSERT INTO hive_locks (hl_lock_ext_id, hl_lock_int_id, hl_txnid, hl_db, hl_table, "
                    "hl_partition, hl_lock_state, hl_lock_type, hl_last_heartbeat, hl_user, hl_host, hl_agent_info) "
                    "VALUES (42, 1, 0, 'default', 'orders', NULL, 'w', 'e', 0, 'spark', 'pod', 'hudi')")
        assert server.psql("metastore", "SELECT count(*) FROM hive_locks WHERE hl_db = 'default'") == "1"
    finally:
        server.stop()

