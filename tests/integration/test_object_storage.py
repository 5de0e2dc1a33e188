"""What is particular to object stores, against the real S3 server: how settings reach the engine,
what a misconfigured store tells the user, and which requests a write costs."""
import pyarrow.fs as pafs
import pytest

from hudi_engine import read, write
from hudi_engine.errors import HoodieStorageError, HoodieTableNotFoundError
from hudi_engine.storage import Storage
from tests.support.data import FRUIT_OPTIONS, FRUIT_SCHEMA
from tests.support.hudi_rs import hudi_rs_read, rows
from tests.support.services import free_port

pytestmark = pytest.mark.spark
ONE_TRY = {"fs.s3a.attempts.maximum": "1"}


def fruit(spark, *people):
    return spark.createDataFrame([(n, f, "eu", ts) for n, f, ts in people], FRUIT_SCHEMA)


def objects(s3_server, bucket):
    return [f.path for f in s3_server.filesystem().get_file_info(pafs.FileSelector(bucket, recursive=True))
            if f.type == pafs.FileType.File]


def test_wrong_credentials_name_the_uri_and_what_to_check_and_write_nothing(spark, s3_session, s3_server):
    path = f"s3a://{s3_session}/fruit"
    with pytest.raises(HoodieStorageError) as err:
        write(fruit(spark, ("jack", "apple", 1)), path, {**FRUIT_OPTIONS, **ONE_TRY, "fs.s3a.secret.key": "wrong"})
    message = str(err.value)
    assert path in message and "fs.s3a.access.key" in message and "credential" in message, message
    assert "wrong" not in message, "the secret key is shown"
    assert objects(s3_server, s3_session) == []


def test_a_missing_bucket_is_named(spark, s3_session):
    path = "s3a://no-such-bucket-here/fruit"
    with pytest.raises(HoodieStorageError, match="s3a://no-such-bucket-here/.*that the bucket exists"):
        write(fruit(spark, ("jack", "apple", 1)), path, {**FRUIT_OPTIONS, **ONE_TRY})
    with pytest.raises(HoodieTableNotFoundError, match="no Hudi table at s3a://no-such-bucket-here/fruit"):
        read(spark, path)


def test_an_endpoint_nothing_answers_on_is_named(spark, s3_session):
    endpoint = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(HoodieStorageError, match=f"fs.s3a.endpoint={endpoint}"):
        write(fruit(spark, ("jack", "apple", 1)), f"s3a://{s3_session}/fruit",
              {**FRUIT_OPTIONS, **ONE_TRY, "fs.s3a.endpoint": endpoint})


def test_a_writes_options_reach_only_that_write(spark, s3_session, s3_server):
    """Settings given as write options apply to that write (and its executors), not to the
    session's later ones; s3:// and s3a:// name the same table."""
    path = f"s3a://{s3_session}/fruit"
    write(fruit(spark, ("jack", "apple", 1)), path, {**FRUIT_OPTIONS, "fs.s3a.attempts.maximum": "7"})
    assert Storage(path).settings.get("fs.s3a.attempts.maximum") != "7"
    write(fruit(spark, ("jack", "banana", 2)), f"s3://{s3_session}/fruit", FRUIT_OPTIONS)
    assert sorted((r["name"], r["fruit"]) for r in read(spark, path).collect()) == [("jack", "banana")]
    assert rows(hudi_rs_read(path), ["name", "fruit"]) == [("jack", "banana")]


def test_small_files_are_one_put_and_no_folder_is_ever_an_object(spark, s3_session, s3_server):
    """Every timeline and marker file is a single PUT (no multipart upload), nothing PUTs an empty
    folder object, and deletes go out in batches."""
    path = f"s3a://{s3_session}/fruit"
    before = len(s3_server.requests())
    write(fruit(spark, ("jack", "apple", 1), ("sarah", "kiwi", 1)), path, FRUIT_OPTIONS)
    write(fruit(spark, ("jack", "banana", 2)), path, FRUIT_OPTIONS)
    made = [r for r in s3_server.requests()[before:] if s3_session in r.path]
    puts = [r for r in made if r.method == "PUT"]
    assert puts and not [r for r in puts if r.path.endswith("/")], "a folder was written as an object"
    small = [r for r in puts if "/.hoodie/" in r.path and not r.path.endswith(".parquet")]
    assert small and not [r for r in small if "partNumber" in r.query or "uploadId" in r.query]
    assert not [r for r in made if r.method == "POST" and "uploads" in r.query and "/.hoodie/" in r.path]
    assert not [r for r in made if r.method == "DELETE"], "deletes go out as batches (POST ?delete)"
    assert s3_server.directory_markers(s3_session) == []
