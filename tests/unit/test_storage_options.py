"""Hadoop-style object-store settings turned into S3 client arguments (no server needed)."""
import pickle

import pytest

from hudi_engine.errors import HoodieConfigError
from hudi_engine.storage import Storage, storage_settings
from hudi_engine.storage.options import S3Settings, seconds, s3_settings, split_query

NO_ENV: dict[str, str] = {}


@pytest.fixture(autouse=True)
def no_process_defaults(monkeypatch):
    """Earlier tests' Spark sessions leave their storage settings as process defaults."""
    monkeypatch.setattr("hudi_engine.storage.options._defaults", {})


def kwargs(settings: S3Settings) -> dict:
    return dict(settings.kwargs)


def test_spark_conf_keys_lose_their_spark_hadoop_prefix_and_other_keys_are_dropped():
    conf = {"spark.hadoop.fs.s3a.endpoint": "http://rgw:7480", "fs.s3a.access.key": "AK",
            "hoodie.table.name": "t", "spark.executor.memory": "2g", "fs.s3a.session.token": None}
    assert storage_settings(conf) == {"fs.s3a.endpoint": "http://rgw:7480", "fs.s3a.access.key": "AK"}


def test_endpoint_url_gives_host_and_scheme_and_hadoop_defaults_to_virtual_hosting():
    s = s3_settings("b", {"fs.s3a.endpoint": "http://127.0.0.1:7480/"}, {}, NO_ENV)
    assert kwargs(s)["endpoint_override"] == "127.0.0.1:7480"
    assert kwargs(s)["scheme"] == "http"
    assert kwargs(s)["force_virtual_addressing"] is True
    assert s.custom_endpoint


def test_path_style_and_bare_endpoint_follow_ssl_setting():
    s = s3_settings("b", {"fs.s3a.endpoint": "minio:9000", "fs.s3a.path.style.access": "true",
                          "fs.s3a.connection.ssl.enabled": "false"}, {}, NO_ENV)
    assert (kwargs(s)["scheme"], kwargs(s)["force_virtual_addressing"]) == ("http", False)
    assert kwargs(s3_settings("b", {"fs.s3a.endpoint": "minio:9000"}, {}, NO_ENV))["scheme"] == "https"


def test_per_bucket_settings_win_for_their_bucket_only():
    settings = {"fs.s3a.endpoint": "http://a:1", "fs.s3a.bucket.logs.endpoint": "http://b:2",
                "fs.s3a.access.key": "AK", "fs.s3a.secret.key": "SK"}
    assert kwargs(s3_settings("logs", settings, {}, NO_ENV))["endpoint_override"] == "b:2"
    assert kwargs(s3_settings("data", settings, {}, NO_ENV))["endpoint_override"] == "a:1"
    assert kwargs(s3_settings("data", settings, {}, NO_ENV))["access_key"] == "AK"


def test_credentials_region_timeouts_and_attempts():
    s = s3_settings("b", {"fs.s3a.access.key": "AK", "fs.s3a.secret.key": "SK", "fs.s3a.session.token": "T",
                          "fs.s3a.endpoint.region": "eu-west-1", "fs.s3a.connection.establish.timeout": "30s",
                          "fs.s3a.connection.timeout": "200000", "fs.s3a.attempts.maximum": "9"}, {}, NO_ENV)
    expected = {"access_key": "AK", "secret_key": "SK", "session_token": "T", "region": "eu-west-1",
                "connect_timeout": 30.0, "request_timeout": 200.0}
    assert {k: kwargs(s)[k] for k in expected} == expected
    assert s.attempts == 9
    assert "endpoint_override" not in kwargs(s) and not s.custom_endpoint
    assert s3_settings("b", {}, {}, NO_ENV).attempts == 5


def test_no_credentials_leaves_the_aws_chain_and_anonymous_provider_is_honoured():
    assert "access_key" not in kwargs(s3_settings("b", {}, {}, NO_ENV))
    provider = {"fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.AnonymousAWSCredentialsProvider"}
    assert kwargs(s3_settings("b", provider, {}, NO_ENV))["anonymous"] is True


def test_aws_endpoint_url_environment_variable_is_path_style():
    s = s3_settings("b", {}, {}, {"AWS_ENDPOINT_URL": "http://localhost:9000"})
    assert kwargs(s)["endpoint_override"] == "localhost:9000"
    assert kwargs(s)["force_virtual_addressing"] is False


def test_uri_query_takes_pyarrow_names_and_is_kept_off_the_path():
    bare, query = split_query("s3://b/t?endpoint_override=h:1&scheme=http")
    assert bare == "s3://b/t"
    s = s3_settings("b", {}, query, NO_ENV)
    assert (kwargs(s)["endpoint_override"], kwargs(s)["scheme"], kwargs(s)["force_virtual_addressing"]) == \
        ("h:1", "http", False)
    storage = Storage("s3a://b/t?endpoint_override=h:1&scheme=http")
    assert storage.uri(".hoodie/hoodie.properties") == "s3a://b/t/.hoodie/hoodie.properties"


@pytest.mark.parametrize("settings, named", [
    ({"fs.s3a.access.key": "AK"}, "fs.s3a.secret.key"),
    ({"fs.s3a.path.style.access": "yes", "fs.s3a.endpoint": "h:1"}, "fs.s3a.path.style.access"),
    ({"fs.s3a.attempts.maximum": "many"}, "fs.s3a.attempts.maximum"),
    ({"fs.s3a.connection.timeout": "soon"}, "fs.s3a.connection.timeout"),
    ({"fs.s3a.endpoint": "ftp://h:1"}, "fs.s3a.endpoint"),
])
def test_bad_settings_name_the_key(settings, named):
    with pytest.raises(HoodieConfigError, match=named.replace(".", r"\.")):
        s3_settings("b", settings, {}, NO_ENV)


def test_unknown_uri_parameter_is_refused():
    with pytest.raises(HoodieConfigError, match="endpoint_override"):
        s3_settings("b", {}, {"endpoint": "h:1"}, NO_ENV)


def test_hadoop_durations():
    assert seconds("k", "1500") == 1.5
    assert seconds("k", "2m") == 120


def test_storage_spellings_share_bucket_and_key_and_keep_their_own_uri():
    for scheme in ("s3", "s3a", "s3n"):
        storage = Storage(f"{scheme}://bucket/tables/t", {"fs.s3a.endpoint": "http://127.0.0.1:1"})
        assert storage.root == "bucket/tables/t"
        assert storage.is_object_store and not storage.is_local
        assert storage.uri("p/f.parquet") == f"{scheme}://bucket/tables/t/p/f.parquet"


def test_storage_pickles_with_its_settings_for_executors():
    storage = Storage("s3a://bucket/t", {"fs.s3a.endpoint": "http://127.0.0.1:1", "hoodie.table.name": "x"})
    copy = pickle.loads(pickle.dumps(storage))
    assert copy.settings == {"fs.s3a.endpoint": "http://127.0.0.1:1"}
    assert copy.child(".hoodie/metadata").uri("") == "s3a://bucket/t/.hoodie/metadata"
    assert copy.child(".hoodie/metadata").settings == copy.settings


def test_local_paths_and_file_uris_are_one_table():
    assert Storage("file:///tmp/x/t").root == Storage("/tmp/x/t").root == "/tmp/x/t"
    assert Storage("/tmp/x/t").uri("a") == "file:///tmp/x/t/a"


def test_unknown_scheme_is_refused_with_the_supported_ones():
    with pytest.raises(HoodieConfigError, match="s3a://"):
        Storage("mock://bucket/t").fs


def test_an_aws_bucket_without_a_region_gets_its_own_once(monkeypatch):
    from hudi_engine.storage import filesystems

    asked = []
    monkeypatch.setattr(filesystems.pafs, "resolve_s3_region", lambda b: asked.append(b) or "eu-central-1")
    monkeypatch.setattr(filesystems, "_regions", {})
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    assert filesystems.bucket_settings("lake", {}, {}).get("region") == "eu-central-1"
    assert filesystems.bucket_settings("lake", {}, {}).get("region") == "eu-central-1"
    assert asked == ["lake"]
    assert filesystems.bucket_settings("lake", {"fs.s3a.endpoint.region": "us-west-2"}, {}).get("region") == "us-west-2"
    assert filesystems.bucket_settings("lake", {"fs.s3a.endpoint": "http://minio:9000"}, {}).get("region") is None
    assert asked == ["lake"]
