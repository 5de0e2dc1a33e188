from hudi_engine.timeline.instant import (COMMIT, REPLACE_COMMIT, ROLLBACK, Instant, State,
                                          new_instant_time, normalize_instant, parse_instant_file_name)
import pytest
from hudi_engine.errors import HoodieConfigError


@pytest.mark.parametrize("name,expected", [
    ("20240418172804498.commit", Instant("20240418172804498", COMMIT, State.COMPLETED)),
    ("20240418172804498.inflight", Instant("20240418172804498", COMMIT, State.INFLIGHT)),
    ("20240418172804498.commit.requested", Instant("20240418172804498", COMMIT, State.REQUESTED)),
    ("20240707001303088.replacecommit.inflight", Instant("20240707001303088", REPLACE_COMMIT, State.INFLIGHT)),
    ("20250713011315930_20250713011316231.commit",
     Instant("20250713011315930", COMMIT, State.COMPLETED, "20250713011316231")),
    ("hoodie.properties", None), (".aux", None), ("20240418172804498.unknown", None),
])
def test_parse_instant_file_names_of_both_layouts(name, expected):
    assert parse_instant_file_name(name) == expected


def test_file_names_round_trip_in_layout_1():
    for instant in (Instant("1", COMMIT, State.REQUESTED), Instant("1", COMMIT, State.INFLIGHT),
                    Instant("1", COMMIT, State.COMPLETED), Instant("2", ROLLBACK, State.INFLIGHT)):
        assert parse_instant_file_name(instant.file_name()) == instant
    assert Instant("1", COMMIT, State.INFLIGHT).file_name() == "1.inflight"
    assert Instant("1", REPLACE_COMMIT, State.INFLIGHT).file_name() == "1.replacecommit.inflight"


def test_new_instant_times_are_unique_and_increasing():
    last = None
    for _ in range(50):
        ts = new_instant_time(last)
        assert len(ts) == 17 and (last is None or ts > last)
        last = ts


def test_normalize_instant_accepts_hudi_forms():
    assert normalize_instant("20240418172804498", "x") == "20240418172804498"
    assert normalize_instant("20240418172804", "x") == "20240418172804000"
    assert normalize_instant("2024-04-18 17:28:04", "x") == "20240418172804000"
    assert normalize_instant("2024-04-18 17:28:04.498", "x") == "20240418172804498"
    assert normalize_instant("0", "x") == "0"
    with pytest.raises(HoodieConfigError, match="as.of.instant='yesterday' is not an instant"):
        normalize_instant("yesterday", "as.of.instant")
