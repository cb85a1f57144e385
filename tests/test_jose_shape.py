"""``kit._jose.is_jwe`` reads a whole string without the ``COMPACT`` pattern; its verdicts are
the pattern's (a full match with five segments), string by string."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from kit._jose import COMPACT, is_jwe

#: base64url's characters, the dot, and a few that are neither (a space, a plus, a non-ASCII
#: letter and digit) so that every branch of the check is reached.
_CHARACTERS = st.sampled_from("eyJAZaz09-_." + " +/=é٣")


#: Dot-led segments (none to six), or any text of those characters.
_TAILS = st.one_of(
    st.lists(st.text(alphabet=_CHARACTERS, max_size=4), max_size=6).map(lambda parts: "." + ".".join(parts)),
    st.text(alphabet=_CHARACTERS, max_size=30),
)


def _by_the_pattern(value: str) -> bool:
    return value.count(".") == 4 and COMPACT.fullmatch(value) is not None


@settings(max_examples=600, deadline=None)
@given(
    head=st.sampled_from(
        ["", "eyJ", "eyJh", "eyJhb", "eyJhbG", "eyJhbGc", "eyJhbGci", "eyjhbGci", "xeyJhbGci"]
    ),
    tail=_TAILS,
)
@example(tail="", head="eyJhbGci.a.b.c.d")
@example(tail=".a.b.c.d", head="eyJhbG")  # a first segment one character short
@example(tail=".a.b.c.d", head="eyJhbGc")  # and one just long enough
@example(tail=".a.b.c.d", head="eyjhbGci")  # a header that is no JSON object's
@example(tail="...", head="eyJhbGci.")  # empty segments
@example(tail=".a.b.c.d", head="eyJhbGcé")  # a letter outside base64url
def test_is_jwe_says_what_the_pattern_says(head: str, tail: str) -> None:
    value = head + tail
    assert is_jwe(value) == _by_the_pattern(value)


def test_the_examples_of_both_verdicts() -> None:
    assert is_jwe("eyJhbGci.a.b.c.d") and is_jwe("eyJhbGci....")
    assert not is_jwe("eyJhbG.a.b.c.d")  # the header segment needs four characters after eyJ
    assert not is_jwe("eyJhbGci.a.b.c")  # a JWS: three segments
    assert not is_jwe("eyJhbGci.a b.c.d.e") and not is_jwe("eyJhbGci.a٣.b.c.d")
