"""`Heard.near`: a number or code one edit from a value (a character changed, dropped or added, two
neighbours swapped) was heard, where the value itself was not: the verifier's line between a misheard
retry and a changed value (scoring/heard.py). Checked against the definition, on every window of
random streams."""

from __future__ import annotations

import random

import pytest

from pytest_callm.scoring.heard import Heard


def one_edit_apart(a: str, b: str) -> bool:
    """The definition, written as plainly as it reads."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long_ = sorted((a, b), key=len)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


def near_by_definition(streams: tuple[str, ...], wanted: str) -> bool:
    n = len(wanted)
    return any(one_edit_apart(stream[i:i + size], wanted) for stream in streams
               for size in (n - 1, n, n + 1) for i in range(len(stream) - size + 1))


def heard_streams(*streams: str) -> Heard:
    heard = Heard([])
    heard.streams = streams
    return heard


@pytest.mark.parametrize("letters", ["01", "012", "0123456789", "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"])
def test_near_is_the_definition_on_every_window_of_random_streams(letters):
    rng = random.Random(len(letters))
    agree = 0
    for _ in range(1500):
        wanted = "".join(rng.choice(letters) for _ in range(rng.randint(4, 10)))
        stream = "".join(rng.choice(letters) for _ in range(rng.randint(0, 40)))
        if rng.random() < 0.5:  # one edit of the value planted somewhere in the stream
            i, k = rng.randrange(len(wanted)), rng.randrange(4)
            edited = [wanted[:i] + rng.choice(letters) + wanted[i + 1:], wanted[:i] + wanted[i + 1:],
                      wanted[:i] + rng.choice(letters) + wanted[i:], wanted[:i] + wanted[i + 1:i + 2] + wanted[i] + wanted[i + 2:]][k]
            at = rng.randint(0, len(stream))
            stream = stream[:at] + edited + stream[at:]
        heard = heard_streams(stream, stream[::-1])
        if heard.has("identifier", wanted):
            continue  # heard as it is: `near` says no before it looks
        expected = near_by_definition(heard.streams, wanted)
        assert heard.near("identifier", wanted) == expected, (wanted, stream)
        agree += expected
    assert agree > 300  # the planted edits were found, not only the absences


def test_each_kind_of_edit_is_near_and_two_edits_or_the_value_itself_are_not():
    heard = Heard(["my member number is H R two four zero one one seven"])  # HR240117
    for tried in ["HR240118", "HR24017", "HR2401177", "HR204117"]:  # changed, dropped, added, swapped
        assert heard.near("identifier", tried), tried
    assert not heard.near("identifier", "HR240117")  # heard as it is
    assert not heard.near("identifier", "HR249918")  # three digits changed
    assert not heard.near("identifier", "HR1")  # too short to say
    assert not heard.near("person", "HR240118")  # names are not near: another kind of value
