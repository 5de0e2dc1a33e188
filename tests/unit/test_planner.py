from hudi_engine.write.planner import SizingPolicy, SmallFile, average_record_size, plan_inserts

POLICY = SizingPolicy(max_file_size=1000, small_file_limit=600, record_size_estimate=10,
                      insert_split_size=500000, auto_split=True)


def test_inserts_fill_small_files_first_then_new_groups():
    small = {"p": [SmallFile("big", "p/big", 700, "1"), SmallFile("small", "p/small", 400, "1")]}
    buckets = plan_inserts({"p": 250}, small, 10, POLICY)
    assert [(b.file_id, b.records) for b in buckets][:1] == [("small", 60)]
    assert "big" not in {b.file_id for b in buckets}      # not small: at or above the limit
    assert sum(b.records for b in buckets) == 250
    assert [b.records for b in buckets[1:]] == [100, 90]   # new groups sized max_file_size / record size
    assert buckets[0].lo == 0.0 and buckets[-1].hi == 1.0
    assert all(a.hi == b.lo for a, b in zip(buckets, buckets[1:]))


def test_small_file_handling_off_and_fixed_split():
    policy = SizingPolicy(1000, 0, 10, 30, auto_split=False)
    buckets = plan_inserts({"a": 70, "b": 0}, {"a": [SmallFile("s", "a/s", 1, "1")]}, 10, policy)
    assert [b.records for b in buckets] == [30, 30, 10] and {b.partition for b in buckets} == {"a"}


def test_average_record_size_uses_newest_big_enough_commit():
    assert average_record_size([(100, 10)], POLICY) == 10       # too small a commit: the estimate
    assert average_record_size([(100, 10), (6000, 200)], POLICY) == 30
    assert average_record_size([(7000, 100), (6000, 200)], POLICY) == 70


def test_shuffle_parallelism_is_the_users_or_derived_from_the_input_never_below_the_cores():
    from hudi_engine.write.planner import shuffle_parallelism

    assert shuffle_parallelism(configured=7, input_partitions=300, cores=16) == 7
    assert shuffle_parallelism(configured=0, input_partitions=300, cores=16) == 300
    assert shuffle_parallelism(configured=0, input_partitions=1, cores=16) == 16
    assert shuffle_parallelism(configured=0, input_partitions=0, cores=0) == 1
