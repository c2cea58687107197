"""short_name's rules, each stated on a name of its own (issue 44: mutmut could not run
timeline's short_name mutants; tests/tools/mutants.py ran them against test_ncu.py alone and
15 survived, benchmarks/data/2026-12-04d-mutation/timeline-short-name-*)."""

import pytest

from linkroof.roofline.timeline import short_name


def test_a_plain_name_is_cut_at_80_characters():
    name = "nvjet_" + "x" * 100
    assert short_name(name) == name[:80]
    assert len(short_name(name)) == 80


def test_a_mangled_name_without_an_identifier_is_cut_at_80_characters():
    # "_Z" then no length-prefixed identifier at all: the name itself, cut
    name = "_Z" + "q" * 120
    assert short_name(name) == name[:80]


@pytest.mark.parametrize("name, ident", [
    ("_ZL5scalePf", "scale"),              # L: internal linkage (a static function)
    ("_ZNK3Foo3barEv", "bar"),              # K: a const member function
    ("_ZNSt6vector9push_backERKi", "push_back"),  # St: a name in ::std
    ("_ZNSt3foo3barEv", "bar"),
])
def test_linkage_const_and_std_prefixes_are_skipped(name, ident):
    assert short_name(name) == ident


def test_a_prefix_with_nothing_after_it_is_left_alone():
    # "_ZL": nothing after the L; the name comes back whole, and nothing is read past its end
    assert short_name("_ZL") == "_ZL"
    assert short_name("_ZNK") == "_ZNK"


def test_a_free_function_ends_at_its_first_identifier():
    # scale(Foo): the parameter's class name "3Foo" follows, and is not the function's name
    assert short_name("_Z5scale3Foo") == "scale"


def test_a_nested_name_ends_at_its_last_identifier():
    assert short_name("_ZN3foo3barEv") == "bar"


def test_an_identifier_shorter_than_its_length_gives_the_name():
    # a length of 10 with only 3 characters after it: not a mangled identifier
    assert short_name("_Z10abc") == "_Z10abc"
    # in a nested name, the last whole identifier before the cut one
    assert short_name("_ZN3foo10ab") == "foo"
