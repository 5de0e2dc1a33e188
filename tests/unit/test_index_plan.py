"""The asynchronous indexer's plan and commit metadata: the schemas are Hudi's (HoodieIndexPlan,
HoodieIndexPartitionInfo, HoodieIndexCommitMetadata as hudi-common's .avsc files define them), the
files round-trip, a plan without what writers need is refused, and the pure choice of partitions: to
build (index types, defined indexes, what each needs first) and to drop."""
import io

import fastavro
import pytest
from fastavro.schema import to_parsing_canonical_form

from hudi_engine.errors import HoodieConfigError, HoodieTimelineError
from hudi_engine.services.indexer import check_prerequisites, index_partitions
from hudi_engine.transaction.metadata.index_ddl import drop_plan
from hudi_engine.transaction.metadata.writer import since_base
from hudi_engine.timeline import avro_models as am
from hudi_engine.storage import Storage
from hudi_engine.timeline.index_plan import (IndexPartition, commit_record, decode_partitions, encode_plan,
                                             partitions_to_index, planned_paths)
from hudi_engine.timeline.timeline import Timeline
from hudi_engine.timeline.instant import INDEXING, Instant, State

NS = "org.apache.hudi.avro.model"
# hudi-common/src/main/avro/HoodieIndexPartitionInfo.avsc, with the generated classes' inlining.
PARTITION_INFO = {"type": "record", "name": "HoodieIndexPartitionInfo", "fields": [
    {"name": "version", "type": ["int", "null"], "default": 1},
    {"name": "metadataPartitionPath", "type": ["null", "string"], "default": None},
    {"name": "indexUptoInstant", "type": ["null", "string"], "default": None},
    {"name": "extraMetadata", "type": ["null", {"type": "map", "values": "string"}], "default": None}]}
HUDI_PLAN = {"namespace": NS, "type": "record", "name": "HoodieIndexPlan", "fields": [
    {"name": "version", "type": ["int", "null"], "default": 1},
    {"name": "indexPartitionInfos", "type": ["null", {"type": "array", "items": PARTITION_INFO}], "default": None}]}
HUDI_COMMIT = {"namespace": NS, "type": "record", "name": "HoodieIndexCommitMetadata", "fields": [
    {"name": "version", "type": ["int", "null"], "default": 1},
    {"name": "operationType", "type": ["null", "string"], "default": None},
    {"name": "indexPartitionInfos", "type": ["null", {"type": "array", "items": PARTITION_INFO}], "default": None}]}

PLAN = [IndexPartition("column_stats", "20250101000000000", 2, "00000000000000001"),
        IndexPartition("record_index", "20250101000000000", 5, "00000000000000002")]


def canonical(schema):
    return to_parsing_canonical_form(fastavro.parse_schema(schema))


@pytest.mark.parametrize("kind,theirs", [(am.INDEX_PLAN, HUDI_PLAN), (am.INDEX_COMMIT_METADATA, HUDI_COMMIT)])
def test_schemas_are_hudis(kind, theirs):
    assert canonical(am.schema_for(kind)) == canonical(theirs)
    assert am.full_names(am.schema_for(kind)) == [f"{NS}.{theirs['name']}", f"{NS}.HoodieIndexPartitionInfo"]


def test_plan_file_reads_with_hudis_schema_and_round_trips():
    data = encode_plan(PLAN)
    assert data.startswith(am.AVRO_MAGIC)
    [record] = list(fastavro.reader(io.BytesIO(data), reader_schema=fastavro.parse_schema(HUDI_PLAN)))
    assert record["version"] == 1
    assert record["indexPartitionInfos"][1] == {
        "version": 1, "metadataPartitionPath": "record_index", "indexUptoInstant": "20250101000000000",
        "extraMetadata": {"fileGroupCount": "5", "initInstant": "00000000000000002"}}
    assert decode_partitions(data) == PLAN


def test_commit_metadata_names_the_instant_each_partition_is_indexed_up_to():
    data = am.encode_instant_avro(am.INDEX_COMMIT_METADATA, commit_record(PLAN, "20250102000000000"))
    [record] = list(fastavro.reader(io.BytesIO(data), reader_schema=fastavro.parse_schema(HUDI_COMMIT)))
    assert record["operationType"] == "INDEX"
    assert [(i["metadataPartitionPath"], i["indexUptoInstant"]) for i in record["indexPartitionInfos"]] == [
        ("column_stats", "20250102000000000"), ("record_index", "20250102000000000")]


def test_a_plan_without_file_groups_is_refused_but_its_partitions_are_known(tmp_path):
    """Another indexer's plan (Hudi's own carries no file-group layout): writers cannot follow it."""
    data = am.encode_instant_avro(am.INDEX_PLAN, {"indexPartitionInfos": [
        {"metadataPartitionPath": "record_index", "indexUptoInstant": "20250101000000000"}]})
    with pytest.raises(HoodieTimelineError, match="fileGroupCount.*roll it back"):
        decode_partitions(data)
    timeline = Timeline.load(Storage(str(tmp_path)), layout_version=2)
    requested = timeline.create_requested(Instant("20250101000001000", INDEXING, State.REQUESTED), data)
    assert planned_paths(Timeline.load(Storage(str(tmp_path)), layout_version=2), requested) == ["record_index"]


def test_instant_file_names_in_both_layouts():
    t = "20250101000000000"
    assert Instant(t, INDEXING, State.REQUESTED).file_name(1) == f"{t}.indexing.requested"
    assert Instant(t, INDEXING, State.INFLIGHT).file_name(2) == f"{t}.indexing.inflight"
    assert Instant(t, INDEXING, State.COMPLETED).file_name(1) == f"{t}.indexing"
    assert Instant(t, INDEXING, State.COMPLETED, "20250101000001000").file_name(2) == f"{t}_20250101000001000.indexing"


def test_partitions_to_index_skip_built_and_building_ones():
    assert partitions_to_index(["record_index", "column_stats", "record_index", "bloom_filters"],
                               completed=["files", "column_stats"], building=["bloom_filters"]) == ["record_index"]
    assert partitions_to_index(["column_stats"], completed=["files"], building=[]) == ["column_stats"]


def test_index_types_are_hudis_names_or_defined_partitions():
    defined = ["secondary_index_idx_fare", "expr_index_idx_len", "secondary_index_idx_ts"]
    assert index_partitions(["RECORD_INDEX", "column_stats", " BLOOM_FILTERS", "partition_stats"]) == [
        "record_index", "column_stats", "bloom_filters", "partition_stats"]
    assert index_partitions(["SECONDARY_INDEX"], defined) == ["secondary_index_idx_fare", "secondary_index_idx_ts"]
    assert index_partitions(["expression_index", "secondary_index_idx_ts", "SECONDARY_INDEX"], defined) == [
        "expr_index_idx_len", "secondary_index_idx_ts", "secondary_index_idx_fare"]
    with pytest.raises(HoodieConfigError, match="defines none: create one first"):
        index_partitions(["SECONDARY_INDEX"])
    with pytest.raises(HoodieConfigError, match="secondary_index_idx_city is not defined.*CREATE INDEX"):
        index_partitions(["secondary_index_idx_city"], defined)
    with pytest.raises(HoodieConfigError, match="'FILES' cannot be built"):
        index_partitions(["FILES"], defined)


def test_prerequisites_of_partition_stats_and_secondary_indexes():
    check_prerequisites(["partition_stats"], completed=["files", "column_stats"], building=[])
    with pytest.raises(HoodieConfigError, match="index COLUMN_STATS first"):
        check_prerequisites(["column_stats", "partition_stats"], completed=["files"], building=[])
    with pytest.raises(HoodieConfigError, match="index COLUMN_STATS first"):      # being built is not enough
        check_prerequisites(["partition_stats"], completed=["files"], building=["column_stats"])
    for where in ({"completed": ["files", "record_index"], "building": []},
                  {"completed": ["files"], "building": ["record_index"]}):
        check_prerequisites(["secondary_index_a"], **where)
    check_prerequisites(["record_index", "secondary_index_a"], completed=["files"], building=[])
    with pytest.raises(HoodieConfigError, match="secondary_index_a find rows through the record_index"):
        check_prerequisites(["secondary_index_a", "expr_index_b"], completed=["files"], building=[])


def test_drop_plan_rolls_back_whole_pending_instants_and_keeps_what_others_need():
    built = ["files", "column_stats", "partition_stats", "record_index", "secondary_index_a"]
    pending = {"20250101000000001": ["bloom_filters", "expr_index_e"]}
    assert drop_plan(["partition_stats", "secondary_index_a"], built, pending, ["secondary_index_a"]) == (
        [], ["partition_stats", "secondary_index_a"])
    assert drop_plan(["expr_index_e", "bloom_filters"], built, pending, ["expr_index_e"]) == (
        ["20250101000000001"], [])
    assert drop_plan(["secondary_index_b"], built, {}, ["secondary_index_b"]) == ([], [])   # defined, never built
    with pytest.raises(HoodieConfigError, match="builds bloom_filters, expr_index_e: drop them all together"):
        drop_plan(["expr_index_e"], built, pending, ["expr_index_e"])
    with pytest.raises(HoodieConfigError, match="secondary_index_a needs record_index"):
        drop_plan(["record_index"], built, {}, [])
    assert drop_plan(["record_index", "secondary_index_a"], built, {}, [])[1] == ["record_index", "secondary_index_a"]
    with pytest.raises(HoodieConfigError, match="partition_stats needs column_stats"):
        drop_plan(["column_stats"], built, {}, [])
    with pytest.raises(HoodieConfigError, match="metadata table itself"):
        drop_plan(["files"], built, {}, [])
    with pytest.raises(HoodieConfigError, match="secondary_index_z is not built, being built or defined"):
        drop_plan(["secondary_index_z"], built, {}, [])


def test_writes_the_indexing_must_have_seen_logged_include_one_begun_before_the_base():
    upto, scheduled = "20250101000000100", "20250101000000300"
    def done(requested, completed):
        return Instant(requested, "commit", State.COMPLETED, completed)
    assert not since_base(done("20250101000000050", "20250101000000090"), upto, scheduled)   # in the base
    assert since_base(done("20250101000000200", "20250101000000400"), upto, scheduled)       # after it
    assert since_base(done("20250101000000050", "20250101000000400"), upto, scheduled)       # began before the base
