"""The tests' S3 server (Ceph radosgw, started by the ``s3_server`` fixture) with pyarrow's S3 client:
objects, listings, Parquet files and a refused signature."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyarrow import fs


def test_put_get_list_delete(s3_server, s3_bucket):
    s3 = s3_server.filesystem(allow_delayed_open=True)     # a small file is one PUT, no multipart
    with s3.open_output_stream(f"{s3_bucket}/orders/2024/a.json") as out:
        out.write(b'{"id": 1}')
    with s3.open_output_stream(f"{s3_bucket}/orders/2024/b.json") as out:
        out.write(b'{"id": 2}')
    with s3.open_output_stream(f"{s3_bucket}/customers/c.json") as out:
        out.write(b"{}")

    with s3.open_input_stream(f"{s3_bucket}/orders/2024/a.json") as src:
        assert src.read() == b'{"id": 1}'
    listed = s3.get_file_info(fs.FileSelector(f"{s3_bucket}/orders", recursive=True))
    assert sorted((i.path, i.size) for i in listed if i.type == fs.FileType.File) == [
        (f"{s3_bucket}/orders/2024/a.json", 9), (f"{s3_bucket}/orders/2024/b.json", 9)]

    s3.delete_file(f"{s3_bucket}/orders/2024/a.json")
    assert s3.get_file_info(f"{s3_bucket}/orders/2024/a.json").type == fs.FileType.NotFound
    assert [i.path for i in s3.get_file_info(fs.FileSelector(f"{s3_bucket}/orders", recursive=True))
            if i.type == fs.FileType.File] == [f"{s3_bucket}/orders/2024/b.json"]


def test_multipart_upload(s3_server, s3_bucket):
    """A stream opened the default way starts a multipart upload at once; its parts carry no
    trailing checksum (see CHECKSUM_ENV), which radosgw 16.2 would refuse."""
    data = bytes(range(256)) * 4096 * 12        # 12 MiB: two parts of pyarrow's 10 MiB
    s3 = s3_server.filesystem()
    with s3.open_output_stream(f"{s3_bucket}/big.bin") as out:
        out.write(data)
    with s3.open_input_file(f"{s3_bucket}/big.bin") as src:
        assert src.size() == len(data)
        assert src.read_at(16, len(data) - 16) == data[-16:]
        assert src.read() == data


def test_parquet_round_trip(s3_server, s3_bucket):
    s3 = s3_server.filesystem()
    table = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", "b", None],
                      "amount": pa.array([1.5, 2.5, 3.5])})
    pq.write_table(table, f"{s3_bucket}/t/part-0.parquet", filesystem=s3)

    assert pq.read_table(f"{s3_bucket}/t/part-0.parquet", filesystem=s3).equals(table)
    assert pq.read_table(f"{s3_bucket}/t", filesystem=s3, columns=["id"]).column("id").to_pylist() == [1, 2, 3]
    assert pq.ParquetFile(f"{s3_bucket}/t/part-0.parquet", filesystem=s3).metadata.num_rows == 3


def test_buckets_are_separate(s3_server, s3_bucket):
    other = f"{s3_bucket}-other"
    s3_server.create_bucket(other)
    s3 = s3_server.filesystem(allow_delayed_open=True)
    with s3.open_output_stream(f"{other}/only-here") as out:
        out.write(b"x")
    assert s3.get_file_info(fs.FileSelector(s3_bucket, recursive=True)) == []
    assert [i.path for i in s3.get_file_info(fs.FileSelector(other))] == [f"{other}/only-here"]
    s3_server.filesystem(allow_bucket_deletion=True).delete_dir(other)


def test_wrong_secret_key_is_refused(s3_server, s3_bucket):
    limits = {"request_timeout": 5, "connect_timeout": 2,
              "retry_strategy": fs.AwsStandardS3RetryStrategy(max_attempts=1)}
    wrong = s3_server.filesystem(secret_key="not-" + s3_server.secret_key, **limits)
    with pytest.raises(OSError, match="SIGNATURE_DOES_NOT_MATCH"):
        wrong.get_file_info(fs.FileSelector(s3_bucket))
    with pytest.raises(OSError):
        with wrong.open_output_stream(f"{s3_bucket}/refused") as out:
            out.write(b"x")
    assert s3_server.filesystem(**limits).get_file_info(fs.FileSelector(s3_bucket)) == []


def test_hadoop_options(s3_server):
    assert s3_server.options() == {
        "fs.s3a.endpoint": s3_server.endpoint, "fs.s3a.access.key": s3_server.access_key,
        "fs.s3a.secret.key": s3_server.secret_key, "fs.s3a.path.style.access": "true",
        "fs.s3a.endpoint.region": "us-east-1"}
    assert s3_server.endpoint.startswith("http://127.0.0.1:")
