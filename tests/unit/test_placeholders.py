"""Credentials as placeholders, resolved only when the job runs."""
import pytest

from hudi_engine.errors import HoodieConfigError
from hudi_jobs.placeholders import resolve_placeholders


def test_secret_files_and_environment_variables_fill_in(tmp_path):
    (tmp_path / "kafka-creds").mkdir()
    (tmp_path / "kafka-creds" / "password").write_text("s3cr3t\n")
    props = {"sasl.password": "${secret:kafka-creds/password}", "sasl.username": "${env:KAFKA_USER}",
             "jaas": "user=${env:KAFKA_USER} pass=${secret:kafka-creds/password}", "plain": "x"}
    got = resolve_placeholders(props, {"HUDI_SECRETS_DIR": str(tmp_path), "KAFKA_USER": "ingest"})
    assert got == {"sasl.password": "s3cr3t", "sasl.username": "ingest", "jaas": "user=ingest pass=s3cr3t",
                   "plain": "x"}


@pytest.mark.parametrize("value, complaint", [
    ("${secret:kafka-creds/missing}", "key 'missing' of Secret 'kafka-creds'"),
    ("${secret:nokey}", "must name a Secret and a key"),
    ("${env:NOT_SET}", "NOT_SET is not set"),
])
def test_a_missing_value_names_the_option_and_where_it_was_looked_for(tmp_path, value, complaint):
    with pytest.raises(HoodieConfigError, match="sasl.password") as err:
        resolve_placeholders({"sasl.password": value}, {"HUDI_SECRETS_DIR": str(tmp_path)})
    assert complaint in str(err.value)
