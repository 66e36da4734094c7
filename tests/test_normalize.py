"""Value normalization shared by the tool gate and the database gate."""

from __future__ import annotations

import pytest

from pytest_callm.normalize import normalize, same

WEEKDAY = {"sat": "saturday", "sat.": "saturday", "saturday": "saturday", "sun": "sunday", "sunday": "sunday"}


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


# --- aliases -----------------------------------------------------------------------------------

@pytest.mark.parametrize("variant", ["sat", "Sat", "SAT.", "Saturday", " saturday "])
def test_alias_table_maps_variants_to_the_canonical_value(variant):
    assert same(variant, "saturday", WEEKDAY)


def test_alias_table_keeps_different_canonical_values_apart():
    assert not same("sat", "sun", WEEKDAY)


def test_variants_are_not_aliases_without_the_table():
    assert not same("sat", "saturday")


def test_example_pack_alias_table_maps_weekday_variants(vet_pack):
    assert same("Sat.", "saturday", vet_pack.aliases["weekday"])
    assert not same("Sat.", "sunday", vet_pack.aliases["weekday"])


# --- containers --------------------------------------------------------------------------------

def test_lists_and_dicts_compare_element_wise():
    assert same(["206-555-0220", "40"], ("2065550220", 40))
    assert same({"phone": "206-555-0220", "name": "Clara"}, {"name": "CLARA", "phone": "2065550220"})
    assert not same({"name": "Clara Whitman"}, {"name": "Clara Whitmore"})
