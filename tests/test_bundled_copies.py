"""bundled_profile decodes the shipped file once a process and hands out copies: each
call's profile is equal to a fresh decode and shares no object with any other call's,
so a caller that changes its copy changes nobody else's."""

from linkroof.profiler import session
from linkroof.schema import Profile, loads


def test_each_call_is_an_equal_copy_of_its_own():
    first = session.bundled_profile()
    again = session.bundled_profile()
    assert "h200x2" in session._BUNDLED  # decoded once, then copied
    assert again == first and again is not first
    assert again.topologies[0] is not first.topologies[0]
    assert again.measurements and again.measurements[0] is not first.measurements[0]
    assert session.is_reference(again) and again.topology.source.startswith("bundled reference h200x2")


def test_a_copy_changed_changes_no_later_one():
    """The profile is frozen, but a measurement's `reported` is a dict: changed in one copy only."""
    mine = session.bundled_profile()
    with_reported = [i for i, m in enumerate(mine.measurements) if isinstance(m.reported, dict)]
    assert with_reported
    i = with_reported[0]
    before = dict(mine.measurements[i].reported)
    mine.measurements[i].reported["planted"] = 1.0
    later = session.bundled_profile()
    assert "planted" not in later.measurements[i].reported and later.measurements[i].reported == before


def test_the_copy_is_what_the_file_decodes_to():
    from importlib import resources

    text = (resources.files("linkroof") / "data" / "h200x2.profile.json").read_text()
    fresh = session._as_reference(loads(text, Profile), "h200x2")
    session._BUNDLED.pop("h200x2", None)
    assert session.bundled_profile() == fresh and session.bundled_profile() == fresh
