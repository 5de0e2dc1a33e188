"""The settings that load Hudi's Spark SQL extension, and where its jar is kept (the build itself
runs in every Spark test: local_spark() loads the extension)."""
from hudi_engine import local_jvm
from hudi_engine.sql import jvm_extension


def test_session_conf_adds_the_extension_once_beside_the_users_own(monkeypatch, tmp_path):
    monkeypatch.setattr(jvm_extension, "ensure_built", lambda: tmp_path / "ext.jar")
    mine = {"spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
            "spark.driver.extraClassPath": "/opt/jars/a.jar", "spark.sql.shuffle.partitions": "8"}
    conf = jvm_extension.session_conf(mine)
    assert conf["spark.sql.extensions"] == f"io.delta.sql.DeltaSparkSessionExtension,{jvm_extension.EXTENSION_CLASS}"
    assert conf["spark.driver.extraClassPath"] == f"/opt/jars/a.jar:{tmp_path / 'ext.jar'}"
    assert conf["spark.sql.shuffle.partitions"] == "8" and mine["spark.sql.extensions"].count(",") == 0
    assert jvm_extension.session_conf(conf) == conf, "applying it twice changes nothing"


def test_the_jar_is_named_by_its_sources_and_pyspark_and_kept_in_the_cache(monkeypatch, tmp_path):
    monkeypatch.setenv(local_jvm.CACHE_ENV, str(tmp_path))
    jar = jvm_extension.jar_path()
    assert jar.parent == tmp_path / "jars" and jar.name.startswith("hudi-sql-extension-")
    monkeypatch.setattr(jvm_extension.pyspark, "__version__", "0.0.0")
    assert jvm_extension.jar_path() != jar, "another pyspark needs its own build"
