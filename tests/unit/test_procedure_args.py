"""Binding a CALL's arguments to a procedure's parameters (no Spark): positional in parameter
order, named by name, defaults, and errors that name the wrong argument and list the right ones."""
import pytest

from hudi_engine.errors import HoodieConfigError, HoodieTimelineError
from hudi_engine.sql.procedure_args import bind, columns
from hudi_engine.sql.procedure_context import Invocation, parse_options
from hudi_engine.sql.procedure_services import instants_and_op
from hudi_engine.sql.procedures import PROCEDURES, procedure
from hudi_engine.sql.statements import parse


def bound(text):
    call = parse(text)
    return bind(procedure(call.procedure), call.args, call.positional)


def test_positional_arguments_bind_in_parameter_order():
    args = bound("CALL show_commit_files('db.t', 5, '20240101120000000')")
    assert dict(args.values) == {"table": "db.t", "limit": 5, "instant_time": "20240101120000000"}
    assert args.given == {"table", "limit", "instant_time"}


def test_positional_then_named_arguments():
    args = bound("CALL show_commit_files('t', instant_time => '20240101120000000')")
    assert dict(args.values) == {"table": "t", "limit": 10, "instant_time": "20240101120000000"}


def test_defaults_fill_what_is_not_given_and_null_counts_as_not_given():
    args = bound("CALL show_fsview_latest(table => 't', limit => NULL)")
    assert args["limit"] == 10 and args["max_instant"] == "" and args["merge"] is True
    assert args["path_regex"] == args["partition_path"] == "ALL_PARTITIONS"
    assert args.given == {"table"}
    assert bound("CALL run_compaction(op => 'run', table => 't')")["limit"] is None


def test_values_are_cast_as_spark_casts_literals():
    args = bound("CALL rollback_to_instant(table => 't', instant_time => 20240101120000000)")
    assert args["instant_time"] == "20240101120000000"
    args = bound("CALL show_clustering(path => '/p', limit => '3', show_involved_partition => 'TRUE')")
    assert args["limit"] == 3 and args["show_involved_partition"] is True
    assert bound("CALL run_compaction(op => 'run', path => '/p', timestamp => 20240101120000000)")["timestamp"] \
        == 20240101120000000


def test_unknown_procedure_lists_the_procedures():
    with pytest.raises(HoodieConfigError, match="no procedure 'show_commitz'") as e:
        procedure("show_commitz")
    assert "show_commits, show_commits_metadata" in str(e.value)
    assert all(name in str(e.value) for name in PROCEDURES)


def test_unknown_argument_is_named_with_the_valid_ones():
    with pytest.raises(HoodieConfigError, match="unknown argument 'limt'") as e:
        bound("CALL show_commits(table => 't', limt => 5)")
    assert "its arguments are: table (string, required), limit (integer, default 10)" in str(e.value)


def test_missing_required_argument_is_named():
    with pytest.raises(HoodieConfigError, match="missing required argument 'instant_time'") as e:
        bound("CALL show_commit_files(table => 't')")
    assert "instant_time (string, required)" in str(e.value)
    with pytest.raises(HoodieConfigError, match="missing required argument 'op'"):
        bound("CALL run_compaction(table => 't')")


@pytest.mark.parametrize("text, name, kind", [
    ("CALL show_commits(table => 't', limit => 'ten')", "limit", "integer"),
    ("CALL show_commits(table => 't', limit => 1.5)", "limit", "integer"),
    ("CALL show_commits(table => 't', limit => true)", "limit", "integer"),
    ("CALL show_commits(table => 't', limit => 3000000000)", "limit", "integer"),
    ("CALL show_clustering(table => 't', show_involved_partition => 1)", "show_involved_partition", "boolean"),
    ("CALL show_commits(table => true)", "table", "string"),
])
def test_a_wrong_type_is_named(text, name, kind):
    with pytest.raises(HoodieConfigError, match=f"argument '{name}' must be {kind}"):
        bound(text)


def test_too_many_positional_arguments_and_an_argument_given_twice():
    with pytest.raises(HoodieConfigError, match="show_commits takes at most 2 arguments, got 3"):
        bound("CALL show_commits('t', 1, 2)")
    with pytest.raises(HoodieConfigError, match="argument 'table' is given twice"):
        bound("CALL show_commits('t', table => 'u')")


def test_every_procedure_is_defined_once_with_hudi_shaped_parameters():
    for name, proc in PROCEDURES.items():
        assert proc.name == name and proc.doc and proc.output.fields
        params = [p.name for p in proc.params]
        assert len(params) == len(set(params)), name
        assert not any(p.required and p.default is not None for p in proc.params), name
    assert [p.name for p in procedure("run_compaction").params] == \
        ["op", "table", "path", "timestamp", "options", "instants", "limit"]
    assert procedure("show_commits").output.fieldNames()[:3] == ["commit_time", "state_transition_time", "action"]


def test_help_is_read_from_the_registry():
    proc = procedure("help")
    listing = proc.run(Invocation(None, proc, bind(proc, {}), lambda name: name))[0][0]
    assert all(f"\t{name}\t" in listing for name in PROCEDURES)
    detail = proc.run(Invocation(None, proc, bind(proc, {"cmd": "SHOW_COMMITS"}), lambda name: name))[0][0]
    assert "\tlimit\tinteger\t10\tfalse" in detail and "\ttotal_records_written\tlong\ttrue" in detail
    fsview = proc.run(Invocation(None, proc, bind(proc, {"cmd": "show_fsview_all"}), lambda name: name))[0][0]
    assert "\tinclude_max\tboolean\tfalse\tfalse" in fsview and "\tpath_regex\tstring\t'ALL_PARTITIONS'\tfalse" in fsview
    with pytest.raises(HoodieConfigError, match="no procedure 'nope'"):
        proc.run(Invocation(None, proc, bind(proc, {"cmd": "nope"}), lambda name: name))


def test_output_columns_and_options():
    schema = columns("a string, b long, c boolean")
    assert [(f.name, f.dataType.typeName(), f.nullable) for f in schema.fields] == \
        [("a", "string", True), ("b", "long", True), ("c", "boolean", True)]
    assert parse_options("run_clean", " a.b=1 , c=x=y,") == {"a.b": "1", "c": "x=y"}
    with pytest.raises(HoodieConfigError, match="expects 'key=value,key2=value2', got 'oops'"):
        parse_options("run_clean", "a=1,oops")


def test_instants_and_op_follow_hudis_rules():
    pending = ["001", "002", "003"]
    assert instants_and_op("run_compaction", pending, None, None) == (pending, "scheduleandexecute")
    assert instants_and_op("run_compaction", pending, None, "Execute", 2) == (["001", "002"], "execute")
    assert instants_and_op("run_compaction", pending, "003, 001", None) == (["001", "003"], "execute")
    with pytest.raises(HoodieConfigError, match="instants => can only be given with op => 'execute'"):
        instants_and_op("run_compaction", pending, "001", "schedule")
    with pytest.raises(HoodieTimelineError, match=r"\['009'\] are not pending"):
        instants_and_op("run_compaction", pending, "001,009", "execute")
    with pytest.raises(HoodieConfigError, match="op => 'later' is not one of"):
        instants_and_op("run_clustering", pending, None, "later")
