import pytest

from hudi_engine.errors import HoodieConfigError
from hudi_jobs.streamer.props import load_properties, parse_assignments, parse_properties


def test_java_properties_syntax():
    text = "\n".join([
        "# a comment",
        "! another comment",
        "",
        "plain=value",
        "colon: value two",
        "spaced   value three",
        "   indented = trimmed  ",
        "sql=SELECT a, \\",
        "    b FROM <SRC>",
        "escaped\\=key=a\\tb\\u00e9\\:c",
        "two.backslashes=ends\\\\",
        "next=is not joined",
        "empty=",
    ])
    assert parse_properties(text) == [
        ("plain", "value"), ("colon", "value two"), ("spaced", "value three"),
        ("indented", "trimmed  "), ("sql", "SELECT a, b FROM <SRC>"),
        ("escaped=key", "a\tb\u00e9:c"), ("two.backslashes", "ends\\"), ("next", "is not joined"),
        ("empty", "")]


def test_comment_marker_inside_a_continued_value_is_data():
    assert parse_properties("k=a\\\n  # not a comment\n") == [("k", "a# not a comment")]


def test_repeated_keys_are_all_kept_in_order():
    assert parse_properties("include=a.properties\nx=1\ninclude=b.properties\n") == [
        ("include", "a.properties"), ("x", "1"), ("include", "b.properties")]


def test_include_chain_relative_to_the_including_file(tmp_path):
    (tmp_path / "conf" / "common").mkdir(parents=True)
    (tmp_path / "conf" / "common" / "base.properties").write_text(
        "hoodie.a=base\nhoodie.b=base\nhoodie.c=base\n")
    (tmp_path / "conf" / "kafka.properties").write_text(
        "include=common/base.properties\nhoodie.b=kafka\nbootstrap.servers=broker:9092\n")
    (tmp_path / "job.properties").write_text(
        "hoodie.c=job-before\ninclude = conf/kafka.properties\nhoodie.a=job\n")
    assert load_properties(str(tmp_path / "job.properties")) == {
        "hoodie.a": "job",              # set after the include: the job wins
        "hoodie.b": "kafka",            # the include's own line beats what it included
        "hoodie.c": "base",             # set before the include: the included file wins
        "bootstrap.servers": "broker:9092"}


def test_include_by_absolute_path(tmp_path):
    (tmp_path / "shared.properties").write_text("x=1\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "job.properties").write_text(f"include={tmp_path / 'shared.properties'}\n")
    assert load_properties(str(tmp_path / "sub" / "job.properties")) == {"x": "1"}


def test_the_same_file_included_twice_without_a_cycle_is_fine(tmp_path):
    (tmp_path / "common.properties").write_text("x=common\n")
    (tmp_path / "a.properties").write_text("include=common.properties\na=1\n")
    (tmp_path / "b.properties").write_text("include=common.properties\nb=1\n")
    (tmp_path / "job.properties").write_text("include=a.properties\nx=job\ninclude=b.properties\n")
    assert load_properties(str(tmp_path / "job.properties")) == {"x": "common", "a": "1", "b": "1"}


def test_include_cycle_is_an_error_naming_the_files(tmp_path):
    (tmp_path / "a.properties").write_text("include=b.properties\n")
    (tmp_path / "b.properties").write_text("x=1\ninclude=./sub/../a.properties\n")
    loop = r"includes itself .*a\.properties -> .*b\.properties -> .*a\.properties"
    with pytest.raises(HoodieConfigError, match=loop):
        load_properties(str(tmp_path / "a.properties"))


def test_self_include_is_an_error(tmp_path):
    (tmp_path / "a.properties").write_text("include=a.properties\n")
    with pytest.raises(HoodieConfigError, match="includes itself"):
        load_properties(str(tmp_path / "a.properties"))


def test_missing_include_names_the_including_file(tmp_path):
    (tmp_path / "job.properties").write_text("include=nope.properties\n")
    with pytest.raises(HoodieConfigError, match=r"nope\.properties does not exist") as err:
        load_properties(str(tmp_path / "job.properties"))
    assert "included from" in str(err.value) and "job.properties" in str(err.value)


def test_missing_props_file():
    with pytest.raises(HoodieConfigError, match="properties file /no/such.properties does not exist"):
        load_properties("/no/such.properties")


def test_hoodie_conf_assignments():
    assert parse_assignments(["a=1", "sql=SELECT * FROM <SRC> WHERE x = 1", "empty="], "--hoodie-conf") == {
        "a": "1", "sql": "SELECT * FROM <SRC> WHERE x = 1", "empty": ""}
    with pytest.raises(HoodieConfigError, match="--hoodie-conf 'novalue' is not key=value"):
        parse_assignments(["novalue"], "--hoodie-conf")
    with pytest.raises(HoodieConfigError, match="--hoodie-conf '=x' is not key=value"):
        parse_assignments(["=x"], "--hoodie-conf")
