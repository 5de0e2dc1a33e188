"""Unknown ``hoodie.*`` options are reported, not silently dropped: a typo or a Hudi option this
engine does not act on draws one warning per process that names the key and the nearest known one."""
import logging

import pyarrow as pa

from hudi_engine import config as C
from hudi_engine.api import write
from hudi_jobs.keys import streamer as SK


def test_a_typo_names_the_key_it_was_meant_to_be():
    found = C.unknown_keys({"hoodie.datasource.write.recordkey.feild": "id", "hoodie.table.name": "t"})
    assert found == {"hoodie.datasource.write.recordkey.feild": "hoodie.datasource.write.recordkey.field"}


def test_known_keys_any_case_families_and_other_keys_are_not_reported():
    assert C.unknown_keys({
        "hoodie.datasource.write.RecordKey.Field": "id",          # Spark lower-cases a data source's keys
        "hoodie.datasource.write.precombine.field": "ts",          # an alternative spelling
        f"{SK.SQL_VIEW_PREFIX}orders": "/lake/orders",            # a family: the name is the user's
        f"{SK.QUALITY_RULE_PREFIX}positive": "amount > 0",
        "hoodie.streamer.transformer.sql.step1": "SELECT * FROM <SRC>",
        "path": "/lake/t", "as.of.instant": "20240101000000000", "spark.sql.shuffle.partitions": "4"}) == {}


def test_an_option_with_nothing_near_is_reported_without_a_guess():
    assert C.unknown_keys({"hoodie.zzz.qqq": "1"}) == {"hoodie.zzz.qqq": None}


def test_a_write_warns_once_per_key_and_still_writes(tmp_path, caplog):
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.operation": "upsert",
               "hoodie.unknown.typo.for.test": "x"}
    with caplog.at_level(logging.WARNING, logger="hudi_engine.config"):
        write(pa.table({"id": [1], "ts": [1]}), str(tmp_path / "t"), options)
        write(pa.table({"id": [2], "ts": [1]}), str(tmp_path / "t"), options)
    warned = [r.getMessage() for r in caplog.records if "hoodie.unknown.typo.for.test" in r.getMessage()]
    assert warned == ["hoodie.unknown.typo.for.test is not an option this engine knows, so it has no effect"]
    from hudi_engine.api import read_arrow
    assert sorted(read_arrow(str(tmp_path / "t")).column("id").to_pylist()) == [1, 2]
