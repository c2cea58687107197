"""timeline's interval arithmetic, with values worked out by hand: union merges touching
intervals and drops empty ones, intersect walks both lists one interval at a time, and
overlap asks the caller's class_of about each activity itself (mutmut 3.8.1's survivors of
2026-12-05e: union 4 and 7, intersect 23, 30 and 33, overlap 20)."""

from linkroof.roofline import timeline as T


def test_union_merges_touching_intervals_into_one():
    assert T.union([(0, 10), (10, 20)]) == [(0, 20)]
    assert T.union([(10, 20), (0, 10), (30, 40)]) == [(0, 20), (30, 40)]


def test_union_drops_empty_intervals():
    assert T.union([(5, 5)]) == []
    assert T.union([(0, 3), (7, 7), (9, 12)]) == [(0, 3), (9, 12)]
    assert T.length([(4, 4), (1, 2)]) == 1


def test_intersect_of_intervals_that_only_touch_is_empty():
    assert T.intersect([(0, 10)], [(10, 20)]) == []
    assert T.intersect([(0, 10), (20, 30)], [(10, 20)]) == []


def test_intersect_finds_every_piece_when_one_interval_spans_several():
    # one long interval of b against three of a, and the other way round
    assert T.intersect([(0, 1), (2, 3), (4, 5)], [(0, 10)]) == [(0, 1), (2, 3), (4, 5)]
    assert T.intersect([(0, 10)], [(0, 1), (2, 3), (4, 5)]) == [(0, 1), (2, 3), (4, 5)]
    assert T.intersect([(0, 4), (6, 9)], [(1, 2), (3, 7), (8, 12)]) == [(1, 2), (3, 4), (6, 7), (8, 9)]


def test_overlap_asks_class_of_about_each_activity():
    acts = [T.Activity("kernel", "a_copy", 0, 7, 0, 100, 1), T.Activity("kernel", "b_gemm", 0, 8, 50, 150, 2)]
    seen = []

    def class_of(a):
        seen.append(a.name)
        return "transfer" if a.name.startswith("a_") else "compute"

    o = T.overlap(acts, class_of=class_of)[0]
    assert seen == ["a_copy", "b_gemm"]
    assert o.class_busy == {"transfer": 100, "compute": 100}
    assert o.class_alone == {"transfer": 50, "compute": 50}
    assert o.busy == 150
