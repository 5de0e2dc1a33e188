import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

from hudi_engine.errors import HoodieConfigError
from hudi_jobs.streamer.cli import build_config, main
from hudi_jobs.streamer.config import MASKED

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "jobs" / "examples" / "orders-json-files.yaml")
REQUIRED = ["--target-base-path", "/lake/t", "--target-table", "t",
            "--hoodie-conf", "hoodie.streamer.source.dfs.root=/landing"]


def test_hudi_streamer_flags():
    cfg = build_config([
        *REQUIRED, "--table-type", "MERGE_ON_READ", "--op", "bulk_insert", "--filter-dupes",
        "--source-class", "org.apache.hudi.utilities.sources.JsonDFSSource", "--source-ordering-field", "seq",
        "--source-limit", "1000", "--transformer-class", "a:SqlQueryBasedTransformer,b:FlatteningTransformer",
        "--transformer-class", "c:org.apache.hudi.utilities.transform.FlatteningTransformer",
        "--hoodie-conf", "hoodie.streamer.transformer.sql.a=SELECT * FROM <SRC> WHERE x = 1",
        "--checkpoint", "10", "--ignore-checkpoint", "2024-01-01", "--enable-hive-sync", "--continuous",
        "--min-sync-interval-seconds", "5", "--retry-on-source-failures", "--retry-interval-seconds", "1",
        "--max-retry-count", "7", "--max-pending-compactions", "2", "--disable-compaction",
        "--post-write-termination-strategy-class", "NoNewDataTerminationStrategy", "--commit-on-errors"])
    assert (cfg.table_type, cfg.operation, cfg.filter_dupes) == ("MERGE_ON_READ", "bulk_insert", True)
    assert (cfg.source_class, cfg.source_ordering_field, cfg.source_ordering_field_given, cfg.source_limit) == (
        "JsonDFSSource", "seq", True, 1000)
    assert cfg.transformer_classes == ("a:SqlQueryBasedTransformer", "b:FlatteningTransformer",
                                       "c:FlatteningTransformer")
    assert cfg.props["hoodie.streamer.transformer.sql.a"] == "SELECT * FROM <SRC> WHERE x = 1"
    assert (cfg.checkpoint, cfg.ignore_checkpoint, cfg.enable_sync, cfg.continuous) == ("10", "2024-01-01", True, True)
    assert (cfg.min_sync_interval_seconds, cfg.retry_on_source_failures, cfg.retry_interval_seconds,
            cfg.max_retry_count, cfg.max_pending_compactions, cfg.disable_compaction) == (5, True, 1, 7, 2, True)
    assert cfg.post_write_termination_strategy_class == "NoNewDataTerminationStrategy" and cfg.commit_on_errors


def test_flags_override_the_job_config_and_hoodie_conf_overrides_everything(tmp_path):
    cfg = build_config(["--job-config", EXAMPLE, "--table-type", "COPY_ON_WRITE", "--op", "INSERT",
                        "--source-ordering-fields", "seq",
                        "--hoodie-conf", "hoodie.datasource.write.recordkey.field=id",          # over the props file
                        "--hoodie-conf", "max.rounds.without.new.data.to.shutdown=9"])        # over hoodieConf
    assert (cfg.table_type, cfg.operation, cfg.source_ordering_field) == ("COPY_ON_WRITE", "insert", "seq")
    assert cfg.target_table == "orders" and cfg.continuous                  # untouched file fields stay
    assert cfg.props["hoodie.datasource.write.recordkey.field"] == "id"
    assert cfg.props["max.rounds.without.new.data.to.shutdown"] == "9"
    assert cfg.props["hoodie.datasource.write.partitionpath.field"] == "order_date"


def test_props_flag_relative_to_the_working_directory(tmp_path, monkeypatch):
    (tmp_path / "my.properties").write_text("hoodie.streamer.source.dfs.root=/from/file\n")
    monkeypatch.chdir(tmp_path)
    cfg = build_config(["--target-base-path", "/lake/t", "--target-table", "t", "--props", "my.properties"])
    assert cfg.props == {"hoodie.streamer.source.dfs.root": "/from/file"}


@pytest.mark.parametrize("argv, message", [
    (["--target-table", "t"], "--target-base-path (targetBasePath) is required"),
    ([*REQUIRED, "--source-limit", "ten"], "--source-limit (sourceLimit) must be a whole number, got 'ten'"),
    ([*REQUIRED, "--hoodie-conf", "no-equals"], "--hoodie-conf 'no-equals' is not key=value"),
    ([*REQUIRED, "--target-basepath", "/x"], "unrecognized arguments: --target-basepath /x"),
    ([*REQUIRED, "--continuous", "--job-config", "/no/such.yaml"], "job config /no/such.yaml does not exist"),
])
def test_bad_command_lines(argv, message):
    with pytest.raises(HoodieConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build_config(argv)


def test_main_reports_errors_with_exit_code_2_before_running(capsys, monkeypatch):
    ran = _runner_stand_in(monkeypatch)
    assert main([*REQUIRED, "--op", "UPSERT", "--filter-dupes"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hudi-streamer: error: '--filter-dupes' (filterDupes) needs to be disabled")
    assert ran == []


def test_main_hands_the_validated_config_to_the_runner_stand_in(monkeypatch):
    """run.py is the lead's; a stand-in module records what main passes and returns its code."""
    ran = _runner_stand_in(monkeypatch, exit_code=3)
    assert main([*REQUIRED, "--op", "INSERT"]) == 3
    assert [(cfg.target_base_path, cfg.operation) for cfg in ran] == [("/lake/t", "insert")]


def test_print_config_masks_secrets_and_does_not_run(capsys, monkeypatch):
    ran = _runner_stand_in(monkeypatch)
    assert main(["--job-config", EXAMPLE, "--print-config",
                 "--hoodie-conf", "sasl.jaas.config=PlainLoginModule required password='hunter2';",
                 "--hoodie-conf", "hoodie.streamer.schemaprovider.registry.basic.auth=user:pw"]) == 0
    out = capsys.readouterr().out
    document = json.loads(out)
    assert document["targetTable"] == "orders" and document["tableType"] == "MERGE_ON_READ"
    assert document["hoodieConf"]["sasl.jaas.config"] == MASKED
    assert document["hoodieConf"]["hoodie.streamer.schemaprovider.registry.basic.auth"] == MASKED
    assert "hunter2" not in out and "user:pw" not in out
    assert document["hoodieConf"]["hoodie.datasource.write.recordkey.field"] == "order_id"
    assert ran == []


def test_help_exits_0_and_shows_the_examples(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "--target-base-path" in out and "--enable-hive-sync" in out
    assert "--transformer-class SqlQueryBasedTransformer" in out and "--table-type MERGE_ON_READ" in out
    assert "hudi-streamer --job-config orders.yaml" in out


def test_module_entry_point_runs_without_pyspark():
    """``python -m hudi_jobs.streamer`` validates and prints a config with no PySpark imported."""
    code = ("import sys, runpy\n"
            "import hudi_jobs.streamer.config, hudi_jobs.streamer.cli\n"
            "assert 'pyspark' not in sys.modules, 'imported pyspark'\n"
            f"sys.argv = ['hudi-streamer', '--job-config', {EXAMPLE!r}, '--print-config']\n"
            "try:\n"
            "    runpy.run_module('hudi_jobs.streamer', run_name='__main__')\n"
            "except SystemExit as exc:\n"
            "    assert exc.code == 0, exc.code\n"
            "assert 'pyspark' not in sys.modules, 'validation imported pyspark'\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["targetBasePath"] == "/data/lake/orders"


def _runner_stand_in(monkeypatch, exit_code: int = 0) -> list:
    ran = []
    module = types.ModuleType("hudi_jobs.streamer.run")
    module.run_streamer = lambda cfg: ran.append(cfg) or exit_code
    monkeypatch.setitem(sys.modules, "hudi_jobs.streamer.run", module)
    return ran
