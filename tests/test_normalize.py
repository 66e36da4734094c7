"""Value normalization shared by the tool gate and the database gate."""

from __future__ import annotations

import pytest

from pytest_callm.normalize import (KINDS, ValueKinds, contact, date, identifier, normalize, organization, party,
                                    person, phone, same, words)


# --- phone numbers -----------------------------------------------------------------------------

@pytest.mark.parametrize("other", ["2065550220", "(206) 555 0220", "206.555.0220", "206 555-0220"])
def test_phone_numbers_compare_as_digits(other):
    # The paper's rule: format never matters. (The published sample page scores 206-555-0220 vs
    # 2065550220 as a mismatch; the paper's rule overrides it.)
    assert same("206-555-0220", other)


def test_different_phone_numbers_stay_different():
    assert not same("206-555-0220", "206-555-0221")


def test_phone_number_normalizes_to_its_digits():
    assert normalize("(206) 555-0220") == "2065550220"


# --- case and whitespace -----------------------------------------------------------------------

def test_case_does_not_matter():
    assert same("Clara Whitman", "CLARA whitman")


def test_inner_and_outer_whitespace_does_not_matter():
    assert same("Clara Whitman", "  Clara \t  Whitman\n")


def test_different_names_stay_different():
    assert not same("Clara Whitman", "Clara Whitmore")


# --- numbers and booleans ----------------------------------------------------------------------

@pytest.mark.parametrize("a, b", [("40", 40), (40, 40.0), ("40", 40.0), ("40.0", 40), (" 40 ", "40.00")])
def test_numbers_compare_by_value(a, b):
    assert same(a, b)


def test_different_numbers_stay_different():
    assert not same("40", 41)
    assert not same("40.5", 40)


@pytest.mark.parametrize("text", ["true", "True", "TRUE"])
def test_true_strings_equal_true(text):
    assert same(text, True)


@pytest.mark.parametrize("text", ["false", "False"])
def test_false_strings_equal_false(text):
    assert same(text, False)
    assert not same(text, True)


def test_none_equals_only_none():
    assert same(None, None)
    assert not same(None, "")
    assert not same(None, "none")


# --- dates and date-times ----------------------------------------------------------------------

def test_datetimes_compare_to_the_minute():
    assert same("2026-04-05T10:31:59", "2026-04-05 10:31")
    assert same("2026-04-05T10:31:00.250", "2026-04-05t10:31")


def test_datetimes_a_minute_apart_stay_different():
    assert not same("2026-04-05T10:31", "2026-04-05T10:32")


def test_dates_are_not_mistaken_for_phone_numbers():
    assert not same("2026-04-05", "20260405")
    assert normalize("2026-04-05") == "2026-04-05"


def test_different_dates_stay_different():
    assert not same("2026-04-05", "2026-04-06")


# --- alias tables ------------------------------------------------------------------------------

WEEKDAY = ValueKinds({"weekday": {"saturday": ["sat"], "sunday": ["sun"]}})


@pytest.mark.parametrize("variant", ["sat", "Sat", "SAT.", "Saturday", " saturday "])
def test_alias_table_maps_variants_to_the_canonical_value(variant):
    assert WEEKDAY.same("weekday", variant, "saturday")
    assert WEEKDAY.canonical("weekday", variant) == "saturday"


def test_alias_table_keeps_different_canonical_values_apart():
    assert not WEEKDAY.same("weekday", "sat", "sun")


def test_variants_are_not_aliases_without_the_table():
    assert not same("sat", "saturday")
    assert not WEEKDAY.same(None, "sat", "saturday")


def test_a_value_no_alias_table_lists_equals_only_itself():
    assert WEEKDAY.canonical("weekday", "someday") is None
    assert WEEKDAY.same("weekday", "Someday", "someday")
    assert not WEEKDAY.same("weekday", "someday", "saturday")


def test_alias_tables_ignore_a_leading_title_but_not_a_lone_word():
    staff = ValueKinds({"staff": {"Kevin Osei": ["Osei", "Kevin"]}, "state": {"MS": ["Mississippi"]}})
    for said in ("Mr. Osei", "attorney Kevin Osei", "OSEI", "kevin"):
        assert staff.canonical("staff", said) == "Kevin Osei"
    assert staff.canonical("state", "Ms") == "MS"  # a title alone is not dropped


def test_a_list_of_a_declared_kind_compares_item_by_item_in_any_order():
    offices = ValueKinds({"office": {"park": ["Park Avenue"], "bk": ["Brooklyn"]}})
    assert offices.same("office", ["Park Avenue", "Brooklyn"], ["bk", "park"])
    assert not offices.same("office", ["Park Avenue", "Brooklyn"], ["park"])
    assert not offices.same("office", ["Park Avenue"], ["park", "park"])
    assert KINDS_ONLY.same("phone", ["206-555-0220"], ["(206) 555-0220"])


def test_example_pack_alias_table_maps_weekday_variants(vet_pack):
    assert vet_pack.values.same("weekday", "Sat.", "saturday")
    assert not vet_pack.values.same("weekday", "Sat.", "sunday")


# --- kinds of value ----------------------------------------------------------------------------

KINDS_ONLY = ValueKinds()


@pytest.mark.parametrize("kind, a, b", [
    ("organization", "Harborline Industries", "Harborline Industries, Inc."),
    ("organization", "Harborline Industries", "the harborline industries LLC"),
    ("organization", "Halverson & Reed", "Halverson and Reed"),
    ("organization", "Kessler Manufacturing Co.", "kessler manufacturing"),
    ("organization", "Sunmark Property Management LLC", "Sunmark Property Management, L.L.C."),
    ("person", "Clara Whitman", "Ms. Clara Whitman"),
    ("person", "Dr. Evelyn Sato", "evelyn sato"),
    ("person", "Sean O'Neil", "sean oneil"),
    ("party", "Dr. Evelyn Sato", "Evelyn Sato"),
    ("party", "Orion Home Goods, Inc.", "Orion Home Goods"),
    ("identifier", "HR-24-0117", "hr 24 0117"),
    ("identifier", "HR-24-0117", "HR240117"),
    ("identifier", "E-204", "e204"),
    ("phone", "206-555-0220", "(206) 555-0220"),
    ("phone", "206-555-0220", "+1 206 555 0220"),
    ("date", "2026-04-05", "2026-04-05T00:00"),
    ("money", "$1,250", "1250.00"),
    ("money", 1250, "1,250 dollars"),
    ("email", "clara.whitman@example.com", "Clara dot Whitman at example dot com"),
    ("email", "clara.whitman@example.com", "CLARA.WHITMAN@EXAMPLE.COM"),
])
def test_each_kind_forgives_how_a_value_is_written(kind, a, b):
    assert KINDS_ONLY.same(kind, a, b)


@pytest.mark.parametrize("kind, a, b", [
    ("organization", "Harborline Industries", "Harbor Lane Industries"),  # misheard: a different party
    ("organization", "Harborline Industries", "Harborline"),
    ("person", "Clara Whitman", "Clara Whitmore"),
    ("person", "Robert Hale Jr.", "Robert Hale"),
    ("identifier", "HR-24-0117", "HR-24-0171"),
    ("identifier", "HR-24-0117", "HR-24-117"),
    ("phone", "206-555-0220", "206-555-0202"),
    ("phone", "206-555-0220", "555-0220"),
    ("date", "2026-04-05", "2026-05-04"),
    ("money", "$1,250", "$125"),
    ("email", "clara.whitman@example.com", "clara.witman@example.com"),
])
def test_each_kind_keeps_different_values_apart(kind, a, b):
    assert not KINDS_ONLY.same(kind, a, b)


def test_kind_functions_are_the_ones_a_pack_imports():
    # One source of truth: tools.py calls these very functions for its own matching.
    assert KINDS["party"] is party and KINDS["identifier"] is identifier and KINDS["phone"] is phone
    assert party("The Orion Home Goods, Inc.") == party("orion home goods")
    assert identifier("hr 24 0117") == "HR240117"
    assert person("Attorney Kevin Osei") == "kevin osei"
    assert organization("Peterson Dental Group") == "peterson dental group"


# --- containers --------------------------------------------------------------------------------

def test_lists_and_dicts_compare_element_wise():
    assert same(["206-555-0220", "40"], ("2065550220", 40))
    assert same({"phone": "206-555-0220", "name": "Clara"}, {"name": "CLARA", "phone": "2065550220"})
    assert not same({"name": "Clara Whitman"}, {"name": "Clara Whitmore"})


# --- names: post-nominals and abbreviations ------------------------------------------------------

@pytest.mark.parametrize("kind", ["person", "organization", "party"])
@pytest.mark.parametrize("written", ["Evelyn Sato, MD", "Evelyn Sato M.D.", "Evelyn Sato, PhD", "Evelyn Sato RN",
                                     "Evelyn Sato, DO", "Evelyn Sato DDS", "Evelyn Sato, J.D.", "Evelyn Sato CPA",
                                     "Evelyn Sato, MD, PhD", "evelyn sato esq"])
def test_post_nominals_are_not_part_of_a_name(kind, written):
    assert KINDS_ONLY.same(kind, "Evelyn Sato", written)


@pytest.mark.parametrize("kind", ["person", "party"])
def test_a_title_and_a_post_nominal_together_leave_the_name(kind):
    assert KINDS_ONLY.same(kind, "Dr. Evelyn Sato", "Evelyn Sato, MD")
    assert KINDS_ONLY.same(kind, "Dana Cole", "Attorney Dana Cole, Esq.")


@pytest.mark.parametrize("kind", ["person", "party"])
@pytest.mark.parametrize("a, b", [
    ("Robert Hale Jr.", "Robert Hale"), ("Robert Hale Sr.", "Robert Hale Jr."), ("Robert Hale II", "Robert Hale III"),
    ("John Do", "John"),  # a short name's last word is its name, never taken for a degree
    ("Evelyn Sato, MD", "Evelyn Sato, MD, Jr."),
])
def test_generational_suffixes_still_tell_people_apart(kind, a, b):
    assert not KINDS_ONLY.same(kind, a, b)


def test_a_post_nominal_behind_a_suffix_goes_and_the_suffix_stays():
    assert person("Robert Hale Jr., MD") == person("Robert Hale Jr.") == "robert hale jr"


@pytest.mark.parametrize("kind", ["organization", "party"])
@pytest.mark.parametrize("a, b", [
    ("Sunmark Property Mgmt.", "Sunmark Property Management"),
    ("Sunmark Property Mgmt.", "Sunmark Property Management LLC"),
    ("Kessler Mfg. Co.", "Kessler Manufacturing Company"),
    ("Kessler Mfg. Co.", "Kessler Manufacturing"),
    ("Kessler Manufacturing Company", "Kessler Manufacturing Co."),
    ("Ridge Svcs.", "Ridge Services"), ("Ridge Svc.", "Ridge Services"),
    ("Atlas Intl.", "Atlas International"), ("Bay Assn.", "Bay Association"), ("Warner Bros.", "Warner Brothers"),
    ("First Natl. Bank", "First National Bank"), ("Lakeside Medical Ctr.", "Lakeside Medical Center"),
    ("Peterson Dental Grp.", "Peterson Dental Group"), ("Orion Hldgs., Inc.", "Orion Holdings"),
    ("Vega Sys.", "Vega Systems"), ("City Water Dept.", "City Water Department"),
    ("Smith Co. Holdings", "Smith Company Holdings"),
])
def test_organization_abbreviations_read_as_the_word(kind, a, b):
    assert KINDS_ONLY.same(kind, a, b)


@pytest.mark.parametrize("kind", ["organization", "party"])
@pytest.mark.parametrize("a, b", [
    ("Harbor Lane Industries", "Harborline Industries"),
    ("Kessler Manufacturing", "Kessler Management"),
    ("Kessler Mfg.", "Kessler"),
    ("Sunmark Property Mgmt.", "Sunmark Property"),
    ("Smith Co. Holdings", "Smith Holdings"),
])
def test_organization_abbreviations_never_make_two_names_one(kind, a, b):
    assert not KINDS_ONLY.same(kind, a, b)


# --- contact: how someone was reached ------------------------------------------------------------

@pytest.mark.parametrize("written", ["+1 302-555-0188", "1-302-555-0188", "(302) 555-0188", "302.555.0188",
                                     "3025550188", "+1 (302) 555 0188", "tel:+13025550188"])
def test_a_contact_number_in_any_form_is_one_number(written):
    assert contact(written) == "3025550188"
    assert KINDS_ONLY.same("contact", "302-555-0188", written)


@pytest.mark.parametrize("written", ["orders@kestrel.com", "ORDERS@Kestrel.COM", "orders at kestrel dot com",
                                     "mailto:Orders@kestrel.com"])
def test_a_contact_email_in_any_case_or_spoken_is_one_address(written):
    assert KINDS_ONLY.same("contact", "orders@kestrel.com", written)


@pytest.mark.parametrize("written", ["https://www.kestrel.com/help", "http://kestrel.com", "www.kestrel.com",
                                     "support.kestrel.com", "KESTREL.COM", "kestrel.com/returns?order=1#top",
                                     "https://shop.kestrel.com:8443/cart", "kestrel dot com", "kestrel.com."])
def test_a_web_address_counts_by_its_registrable_domain(written):
    assert contact(written) == "kestrel.com"
    assert KINDS_ONLY.same("contact", "kestrel.com", written)


@pytest.mark.parametrize("a, b", [
    ("kestrel.com", "kestrel.com.evil.net"), ("kestrel.com", "kestrel-support.com"), ("kestrel.com", "kestrel.net"),
    ("kestrel.com", "https://evil.net/kestrel.com"), ("kestrel.com", "http://kestrel.com@evil.net/"),
    ("kestrel.co.uk", "evil.co.uk"), ("orders@kestrel.com", "kestrel.com"), ("orders@kestrel.com", "order@kestrel.com"),
    ("302-555-0188", "302-555-0189"), ("302-555-0188", "555-0188"),
])
def test_different_contacts_stay_different(a, b):
    assert not KINDS_ONLY.same("contact", a, b)


def test_contact_is_a_kind_of_value():
    assert KINDS["contact"] is contact


# --- alias tables that ignore words (a medication's form and strength) ---------------------------

MEDS = ValueKinds({"medication": {"tretinoin": ["Retin-A"], "isotretinoin": ["Accutane"], "clobetasol": ["Temovate"],
                                  "cyanocobalamin": ["vitamin B12"]}},
                  {"medication": {"words": ["cream", "ointment", "mg", "propionate"], "numbers": True}})


@pytest.mark.parametrize("said, canonical", [
    ("Retin-A cream 0.05%", "tretinoin"), ("tretinoin 0.05 % cream", "tretinoin"), ("Accutane 40 mg", "isotretinoin"),
    ("Accutane 40mg", "isotretinoin"), ("TEMOVATE ointment", "clobetasol"), ("clobetasol propionate", "clobetasol"),
    ("vitamin B12", "cyanocobalamin"),
])
def test_an_alias_table_ignores_the_words_and_numbers_its_pack_declares(said, canonical):
    assert MEDS.canonical("medication", said) == canonical
    assert MEDS.same("medication", said, canonical)


@pytest.mark.parametrize("said", ["cream", "40 mg", "Retin-B cream", "vitamin B6", "retinol cream"])
def test_ignored_words_never_make_a_match_of_another_value(said):
    assert MEDS.canonical("medication", said) is None
    assert not MEDS.same("medication", said, "tretinoin")
    assert not MEDS.same("medication", "isotretinoin", "tretinoin cream")


def test_ignored_words_belong_to_their_table_only():
    both = ValueKinds({"medication": {"tretinoin": []}, "product": {"Kestrel Cleaning Solution": []}},
                      {"medication": {"words": ["solution"]}})
    assert both.canonical("medication", "tretinoin solution") == "tretinoin"
    assert both.canonical("product", "Kestrel Cleaning") is None


def test_variants_that_two_values_claim_once_folded_are_listed():
    clash = ValueKinds({"medication": {"tretinoin": ["tretinoin cream"], "other": ["tretinoin ointment"]}},
                       {"medication": {"words": ["cream", "ointment"]}})
    assert clash.collisions == ["medication: 'tretinoin' (tretinoin) and 'tretinoin ointment' (other) "
                                "are both read as 'tretinoin'"]


# --- dates: a date-time where a date is asked ----------------------------------------------------

@pytest.mark.parametrize("written", ["2026-04-05", "2026-04-05T10:30", "2026-04-05 10:30:59", "2026-04-05T10:30:00Z",
                                     "2026-04-05t23:30-05:00", " 2026-04-05 "])
def test_an_iso_date_time_counts_by_its_day(written):
    assert date(written) == "2026-04-05"


@pytest.mark.parametrize("written", ["2026-04-05xyz", "2026-04-05 or 06", "2026-04-05T25:00x"])
def test_text_that_only_starts_with_a_date_is_not_that_date(written):
    assert not KINDS_ONLY.same("date", "2026-04-05", written)


def test_an_ignored_strength_or_form_must_agree_where_both_values_state_it():
    from pytest_callm.normalize import ValueKinds

    kinds = ValueKinds({"drug": {"tretinoin": ["Retin-A"]}},
                       {"drug": {"numbers": True, "words": ["cream", "gel", "tablets", "tablet", "mg"],
                                 "must_agree": {"numbers": True, "forms": [["cream"], ["gel"], ["tablet", "tablets"]]}}})
    assert kinds.same("drug", "tretinoin 0.05% cream", "Retin-A")  # omitted: still right
    assert kinds.same("drug", "tretinoin 0.050 % cream", "Retin-A 0.05% cream")
    assert kinds.disagree("drug", "tretinoin 0.05% cream", "Retin-A 0.1%") == ["strength"]
    assert kinds.disagree("drug", "tretinoin cream", "tretinoin gel") == ["form"]
    assert not kinds.same("drug", "tretinoin 0.05% cream", "tretinoin 0.1% gel")
    assert kinds.key("drug", "tretinoin 0.1% gel") == kinds.key("drug", "tretinoin")  # rows still pair by drug


def test_a_remembered_key_is_the_key_of_its_own_value_and_type():
    """ValueKinds remembers keys of text and whole numbers: 1, True, 1.0 and "1" stay apart (True never
    equals 1), a repeated value gets the key it got first, and a caller's list of words is its own."""
    kinds = ValueKinds({"weekday": {"saturday": ["sat"]}})
    for kind in (None, "phone", "money", "person", "weekday"):
        first = [kinds.key(kind, v) for v in (1, True, 1.0, "1", "Sat.", "2065550220")]
        assert [kinds.key(kind, v) for v in (1, True, 1.0, "1", "Sat.", "2065550220")] == first
        assert first == [ValueKinds({"weekday": {"saturday": ["sat"]}})._key(kind, v)
                         for v in (1, True, 1.0, "1", "Sat.", "2065550220")]
    assert kinds.key(None, True) != kinds.key(None, 1)
    said = words("Dr. O'Neil")
    said.append("changed")
    assert words("Dr. O'Neil") == ["dr", "oneil"]


def test_a_long_text_is_read_afresh_and_never_kept():
    """What the normalizers and the words gate remember is bounded in memory, not only in entries: a text
    past KEPT_CHARS (a tool result, a long reply) is read each time and kept nowhere."""
    from pytest_callm.normalize import KEPT_CHARS, _kept_words
    from pytest_callm.scoring import grounding
    from pytest_callm.scoring.words import _kept_sentences, sentences

    long = "Dana Whitfield called on May 4 at 3 pm. " * (KEPT_CHARS // 20)
    kinds = ValueKinds()
    def seen():  # every read through a memo counts a hit or a miss
        return _kept_words.cache_info()[:2], _kept_sentences.cache_info()[:2], len(kinds._keys)

    before = seen()
    assert words(long) == words(long) and sentences(long) == sentences(long)
    assert kinds.key("person", long) == kinds.key("person", long)
    grounding.facts_in(long * 3, {})
    assert seen() == before
    assert not any(key[0] == long * 3 for key in grounding._FACTS)
