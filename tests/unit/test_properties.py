from hudi_engine.table.properties import read_properties_text, table_checksum, write_properties_text
from tests.conftest import unzip_fixture


def test_checksum_matches_real_hudi_tables(tmp_path):
    for name in ("v6_simplekeygen_nonhivestyle", "v6_complexkeygen_hivestyle", "v8_nonpartitioned"):
        base = unzip_fixture(f"sample_table/cow/{name}.zip", tmp_path)
        props = read_properties_text((base / ".hoodie" / "hoodie.properties").read_text())
        assert table_checksum(props["hoodie.database.name"], props["hoodie.table.name"]) == \
            props["hoodie.table.checksum"]


def test_round_trip_with_java_escapes(tmp_path):
    base = unzip_fixture("sample_table/cow/v6_timebasedkeygen_nonhivestyle.zip", tmp_path)
    text = (base / ".hoodie" / "hoodie.properties").read_text()
    props = read_properties_text(text)
    assert props["hoodie.keygen.timebased.input.dateformat"] == "yyyy-MM-dd'T'HH:mm:ss.SSSZ"
    assert props["hoodie.table.create.schema"].startswith('{"type":"record"')
    written = write_properties_text(props)
    assert "yyyy-MM-dd'T'HH\\:mm\\:ss.SSSZ" in written
    assert read_properties_text(written) == props
    odd = {"k y": "a=b:c#d!e\\f", "uni": "caf\u00e9 \u20ac", "lead": " space"}
    assert read_properties_text(write_properties_text(odd)) == odd
