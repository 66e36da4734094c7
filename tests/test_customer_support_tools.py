"""Business rules of the customer-support pack (Kestrel Electronics), through the real tool server.

Money is checked to the cent. The pack clock is Wednesday 2026-10-14 10:00.
"""

from __future__ import annotations

import pytest

from conftest import REPO, PackCall, pack_server
from pytest_callm.task.pack import load_pack

PACK = REPO / "industries" / "customer_support"

# name, phone, billing ZIP, card last four
MAYA = ("Maya Thompson", "303-555-0141", "80205", "4417")          # Plus since March; laptop 19 days, CO
DANIEL_SEA = ("Daniel Kim", "206-555-0112", "98103", "9021")       # no membership; TV delivery in 2 days
DANIEL_ATX = ("Daniel Kim", "512-555-0187", "78704", "3350")       # Elite; camera 55 days; soundbar
PRIYA = ("Priya Nair", "602-555-0163", "85004", "7788")            # recalled heater, 8 months
ROSA = ("Rosa Delgado", "720-555-0129", "80219", "2204")           # marketplace drone, open-box headphones
GREGORY = ("Gregory Hale", "212-555-0176", "10027", "6612")        # Elite mid-term; laptop pro NY
AISHA = ("Aisha Bello", "503-555-0150", "97214", "0937")           # Plus joined after the order; OR
TOMAS = ("Tomas Reyes", "214-555-0133", "75201", "5519")           # washer + dryer delivery in 6 days
LINDA = ("Linda Park", "425-555-0190", "98004", "8842")            # order placed this morning
WALTER = ("Walter Briggs", "480-555-0118", "85251", "1460")        # locked account
HANNAH = ("Hannah Cole", "718-555-0145", "11201", "3077")          # plans: one ended, one standard
OMAR = ("Omar Haddad", "303-555-0198", "80302", "7265")            # price-match candidates
GRACE = ("Grace Okafor", "713-555-0121", "77002", "5120")          # Elite; drone 40 days
SOFIA = ("Sofia Marquez", "602-555-0111", "85016", "4021")         # Plus mid-term; accident plan


@pytest.fixture(scope="module")
def cs_server():
    with pack_server(PACK) as http:
        yield http


class Call(PackCall):
    pack = "customer_support"

    def verified(self, who) -> "Call":
        name, number, zip_code, last4 = who
        self.ok("find_customer", phone_number=number)
        self.ok("verify_identity", billing_zip=zip_code, card_last4=last4)
        return self


@pytest.fixture
def call(cs_server):
    return Call(cs_server)


@pytest.fixture
def new_call(cs_server):
    return lambda: Call(cs_server)


# --- identity gate -----------------------------------------------------------------------------

def test_an_account_is_found_by_order_number_phone_or_name_then_verified(call):
    found = call.ok("find_customer", order_number="ke 100234")
    assert found["found"] is True and "customer_id" not in found  # nothing about the account before verification
    data = call.ok("verify_identity", billing_zip="80205", card_last4="4417")
    assert (data["customer_id"], data["membership_tier"]) == ("cu_1001", "plus")
    assert data["orders"] == ["KE-100236", "KE-100234"]
    call.ok("find_customer", phone_number="(602) 555-0163")
    assert call.error("get_order", order_number="KE-099871") == "not_verified"  # a new search resets verification
    call.ok("find_customer", full_name="ms. priya nair")


def test_two_accounts_with_one_name_need_another_detail(call):
    assert call.error("find_customer", full_name="Daniel Kim") == "multiple_matches"
    assert call.error("verify_identity", billing_zip="98103", card_last4="9021") == "no_account_selected"
    call.ok("find_customer", full_name="Daniel Kim", phone_number="512-555-0187")
    assert call.ok("verify_identity", billing_zip="78704", card_last4="3350")["customer_id"] == "cu_1003"


def test_details_of_different_accounts_find_nothing(call):
    assert call.error("find_customer", full_name="Maya Thompson", order_number="KE-100311") == "customer_not_found"
    assert call.error("find_customer", phone_number="555-0141") == "invalid_phone"
    assert call.error("find_customer") == "missing_lookup_details"


def test_three_failed_verifications_lock_the_account_and_the_lock_stays(call):
    call.ok("find_customer", order_number="KE-100234")
    first = call.tool("verify_identity", billing_zip="80205", card_last4="4471")
    assert (first["error_code"], first["data"]) == ("verification_failed", {"tries_left": 2})
    assert "zip" not in first["caller_safe_message"].casefold()  # never says which detail was wrong
    assert call.error("verify_identity", billing_zip="80250", card_last4="4417") == "verification_failed"
    assert call.error("verify_identity", billing_zip="80205", card_last4="1234") == "account_locked"
    assert call.error("verify_identity", billing_zip="80205", card_last4="4417") == "account_locked"  # right ones now
    assert [c["account_locked"] for c in call.state()["customers"] if c["id"] == "cu_1001"] == [1]


def test_a_locked_account_cannot_be_verified(call):
    call.ok("find_customer", phone_number="480-555-0118")
    assert call.error("verify_identity", billing_zip="85251", card_last4="1460") == "account_locked"


def test_failures_on_one_account_do_not_count_against_another(call):
    call.ok("find_customer", order_number="KE-100234")
    call.error("verify_identity", billing_zip="00000", card_last4="0000")
    call.error("verify_identity", billing_zip="00000", card_last4="0000")
    call.verified(OMAR)  # a different account: its own three tries
    assert all(c["account_locked"] == 0 for c in call.state()["customers"] if c["id"] != "cu_1010")


def test_every_verification_is_a_record_so_verifying_someone_else_leaves_a_trace(call):
    """A wife with her husband's card, or a neighbor with hers: the check is a `verifications` row on
    that account (front_desk), which a task that expects no verification does not have."""
    call.ok("find_customer", order_number="KE-100640")
    call.ok("verify_identity", billing_zip="10027", card_last4="6612")
    rows = [{k: r[k] for k in ("account", "method", "outcome")} for r in call.state()["verifications"]]
    assert rows == [{"account": "cu_1006", "method": "zip_and_card", "outcome": "verified"}]


def test_failed_tries_are_counted_on_the_account_record_and_a_success_clears_them(call):
    call.ok("find_customer", order_number="KE-100234")
    call.error("verify_identity", billing_zip="00000", card_last4="0000")
    call.ok("find_customer", phone_number="303-555-0141")  # a new search does not reset the count
    call.error("verify_identity", billing_zip="00000", card_last4="0000")
    maya = next(c for c in call.state()["customers"] if c["id"] == "cu_1001")
    assert (maya["failed_verifications"], maya["account_locked"]) == (2, 0)  # kept for the next call too
    call.ok("verify_identity", billing_zip="80205", card_last4="4417")
    maya = next(c for c in call.state()["customers"] if c["id"] == "cu_1001")
    assert maya["failed_verifications"] == 0
    # Every try is a row too (the verifier forgives a failed one only when its values were heard).
    assert [r["outcome"] for r in call.state()["verifications"]] == ["failed", "failed", "verified"]


def test_a_call_stops_verifying_after_six_failed_tries_across_accounts(call):
    for who in (MAYA, OMAR, GRACE):
        call.ok("find_customer", phone_number=who[1])
        call.error("verify_identity", billing_zip="00000", card_last4="0000")
        call.error("verify_identity", billing_zip="00000", card_last4="0000")
    call.ok("find_customer", phone_number=SOFIA[1])
    assert call.error("verify_identity", billing_zip=SOFIA[2], card_last4=SOFIA[3]) == "verification_locked"
    assert call.state()["verifications"][-1]["outcome"] == "refused"


def test_orders_of_another_customer_are_not_found(call):
    call.verified(MAYA)
    assert call.error("get_order", order_number="KE-100311") == "order_not_found"
    assert call.ok("get_order", order_number="KE-100234")["items"][0]["price"] == "1099.99"


# --- returns: windows by tier and class, fees by class and state --------------------------------

def test_plus_window_and_the_colorado_fee_cap_to_the_cent(call):
    call.verified(MAYA)
    quote = call.ok("quote_return", order_number="KE-100234", sku="SKU-1001", opened=True)
    # computers: 15 days without membership, 30 with Plus; delivered 2026-09-25, so due by 2026-10-25
    assert (quote["membership_tier_applied"], quote["window_days"], quote["return_by"]) == ("plus", 30, "2026-10-25")
    # 15 percent capped at 10 in Colorado: 1,099.99 x 10% = 110.00 (109.999 rounded), refund 989.99
    assert (quote["restocking_fee"], quote["refund_amount"]) == ("110.00", "989.99")


def test_unopened_items_have_no_fee(call):
    call.verified(MAYA)
    quote = call.ok("quote_return", order_number="KE-100234", sku="SKU-1001", opened=False)
    assert (quote["restocking_fee"], quote["refund_amount"]) == ("0.00", "1099.99")


def test_new_york_fee_is_the_class_percentage(call):
    call.verified(GREGORY)
    quote = call.ok("quote_return", order_number="KE-100640", sku="SKU-1002", opened=True)
    # 1,899.99 x 15% = 284.9985 -> 285.00; refund 1,614.99
    assert (quote["window_days"], quote["restocking_fee"], quote["refund_amount"]) == (45, "285.00", "1614.99")


def test_oregon_has_no_restocking_fee_but_a_membership_joined_after_the_order_does_not_count(call):
    call.verified(AISHA)
    result = call.tool("quote_return", order_number="KE-100702", sku="SKU-1030", opened=True)
    # drone delivered 2026-09-26: 18 days; Plus joined 2026-09-30, after the order, so 15 days apply
    assert result["error_code"] == "outside_return_window"
    assert result["data"] == {"delivered_on": "2026-09-26", "window_days": 15, "return_by": "2026-10-11",
                              "tier": "none"}


def test_elite_window_for_cameras_and_drones(new_call):
    grace = new_call().verified(GRACE)
    quote = grace.ok("quote_return", order_number="KE-100560", sku="SKU-1030", opened=True)
    # delivered 2026-09-04, 40 days: inside Elite's 45; 799.99 x 15% = 119.9985 -> 120.00; refund 679.99
    assert (quote["window_days"], quote["restocking_fee"], quote["refund_amount"]) == (45, "120.00", "679.99")
    daniel = new_call().verified(DANIEL_ATX)
    assert daniel.error("quote_return", order_number="KE-100402", sku="SKU-1031", opened=False) == \
        "outside_return_window"  # 55 days: past even Elite's 45


def test_open_box_items_have_a_fourteen_day_window_for_everyone(call):
    call.verified(ROSA)
    quote = call.ok("quote_return", order_number="KE-100520", sku="SKU-1021", opened=True)
    # open box: 14 days for everyone; delivered 2026-10-06, so 2026-10-20; general class: no fee
    assert (quote["window_days"], quote["return_by"], quote["restocking_fee"], quote["refund_amount"]) == (
        14, "2026-10-20", "0.00", "219.99")


def test_marketplace_items_go_back_to_their_seller(call):
    call.verified(ROSA)
    result = call.tool("quote_return", order_number="KE-100520", sku="SKU-1030", opened=False)
    assert (result["error_code"], result["data"]) == ("marketplace_item", {"seller": "SkyHobby Outlet"})


def test_a_recalled_item_comes_back_any_time_with_no_fee(call):
    call.verified(PRIYA)
    quote = call.ok("quote_return", order_number="KE-099871", sku="SKU-1050", opened=True)
    assert (quote["return_type"], quote["restocking_fee"], quote["refund_amount"]) == ("recall", "0.00", "89.99")
    assert call.error("quote_return", order_number="KE-099871", sku="SKU-1051", opened=False) == \
        "outside_return_window"  # the espresso machine on the same order is not recalled
    call.ok("confirm_return", return_token=quote["return_token"], restocking_fee_acknowledged=False,
            method="store_drop_off", reason="recall")
    ret = call.state()["returns"][-1]
    assert (ret["kind"], ret["restocking_fee_cents"], ret["refund_cents"]) == ("recall", 0, 8999)


def test_items_not_delivered_or_already_returned_cannot_be_returned(new_call):
    maya = new_call().verified(MAYA)
    assert maya.error("quote_return", order_number="KE-100236", sku="SKU-1022", opened=False) == "not_delivered"
    linda = new_call().verified(LINDA)
    assert linda.error("quote_return", order_number="KE-100610", sku="SKU-1021", opened=True) == "already_returned"
    assert linda.error("quote_return", order_number="KE-100610", sku="SKU-1002", opened=True) == "item_not_on_order"


def test_a_return_with_a_fee_needs_the_fee_acknowledged_and_refunds_price_minus_fee(call):
    call.verified(MAYA)
    token = call.ok("quote_return", order_number="KE-100234", sku="SKU-1001", opened=True)["return_token"]
    assert call.error("confirm_return", return_token=token, restocking_fee_acknowledged=False,
                      method="prepaid_label", reason="too slow") == "fee_not_acknowledged"
    assert call.state()["returns"] == call.state()["returns"][:1]  # nothing written; the token still works
    done = call.ok("confirm_return", return_token=token, restocking_fee_acknowledged=True, method="prepaid_label",
                   reason="too slow")
    assert (done["restocking_fee"], done["refund_amount"]) == ("110.00", "989.99")
    state = call.state()
    ret, refund = state["returns"][-1], state["refunds"][-1]
    assert (ret["customer_id"], ret["order_number"], ret["opened"], ret["restocking_fee_cents"], ret["refund_cents"],
            ret["method"]) == ("cu_1001", "KE-100234", 1, 11000, 98999, "prepaid_label")
    assert (refund["kind"], refund["amount_cents"], refund["status"]) == ("return", 98999, "pending")
    assert ret["refund_cents"] + ret["restocking_fee_cents"] == 109999


# --- tokens: single use, bound to their kind and their customer ---------------------------------

def test_a_token_is_single_use(call):
    call.verified(MAYA)
    token = call.ok("quote_return", order_number="KE-100234", sku="SKU-1001", opened=False)["return_token"]
    call.ok("confirm_return", return_token=token, restocking_fee_acknowledged=False, method="store_drop_off",
            reason="x")
    assert call.error("confirm_return", return_token=token, restocking_fee_acknowledged=False,
                      method="store_drop_off", reason="x") == "token_already_used"
    assert len([r for r in call.state()["returns"] if r["customer_id"] == "cu_1001"]) == 1


def test_a_token_of_the_wrong_kind_is_refused(call):
    call.verified(OMAR)
    pm = call.ok("quote_price_match", order_number="KE-100850", sku="SKU-1021", competitor="BrightBuy",
                 competitor_price="279.99")["price_match_token"]
    ret = call.ok("quote_return", order_number="KE-100850", sku="SKU-1021", opened=False)["return_token"]
    assert call.error("confirm_return", return_token=pm, restocking_fee_acknowledged=False,
                      method="store_drop_off", reason="x") == "wrong_token_kind"
    assert call.error("confirm_price_match", price_match_token=ret) == "wrong_token_kind"
    assert call.error("confirm_membership_cancellation", cancel_token=pm) == "wrong_token_kind"


def test_a_token_of_another_customer_is_refused_like_an_unknown_one(call):
    call.verified(OMAR)
    token = call.ok("quote_return", order_number="KE-100850", sku="SKU-1021", opened=False)["return_token"]
    call.verified(MAYA)  # the same call, another account
    result = call.tool("confirm_return", return_token=token, restocking_fee_acknowledged=False,
                       method="store_drop_off", reason="x")
    unknown = call.tool("confirm_return", return_token="RET-000000", restocking_fee_acknowledged=False,
                        method="store_drop_off", reason="x")
    assert (result["error_code"], unknown["error_code"]) == ("token_not_yours", "invalid_token")
    assert result["caller_safe_message"] == unknown["caller_safe_message"]
    assert [r for r in call.state()["returns"] if r["customer_id"] in ("cu_1001", "cu_1012")] == []


def test_the_same_quote_asked_twice_gives_the_same_token(call):
    call.verified(OMAR)
    args = dict(order_number="KE-100850", sku="SKU-1021", opened=True)
    assert call.ok("quote_return", **args)["return_token"] == call.ok("quote_return", **args)["return_token"]


# --- delivery changes ---------------------------------------------------------------------------

def test_a_change_two_days_before_delivery_costs_the_fee_once_acknowledged(call):
    call.verified(DANIEL_SEA)
    quote = call.ok("quote_delivery_change", order_number="KE-100311", new_date="2026-10-21")
    assert (quote["current_date"], quote["fee"], quote["days_before_delivery"]) == ("2026-10-16", "14.99", 2)
    assert call.error("confirm_delivery_change", change_token=quote["change_token"],
                      fee_acknowledged=False) == "fee_not_acknowledged"
    call.ok("confirm_delivery_change", change_token=quote["change_token"], fee_acknowledged=True)
    state = call.state()
    order = next(o for o in state["orders"] if o["order_number"] == "KE-100311")
    assert order["scheduled_delivery"] == "2026-10-21"
    assert [(c["kind"], c["amount_cents"]) for c in state["charges"]] == [("delivery_change_fee", 1499)]


def test_a_change_earlier_than_two_days_is_free(call):
    call.verified(TOMAS)
    quote = call.ok("quote_delivery_change", order_number="KE-100815", new_date="2026-10-24")
    assert quote["fee"] == "0.00"
    call.ok("confirm_delivery_change", change_token=quote["change_token"], fee_acknowledged=False)
    assert call.state()["charges"] == []


@pytest.mark.parametrize("new_date, code", [
    ("2026-10-25", "no_sunday_delivery"),
    ("2026-11-04", "date_too_late"),      # 14 days after 2026-10-20 is 2026-11-03
    ("2026-10-14", "date_too_soon"),      # today
    ("2026-10-20", "same_date"),
])
def test_delivery_date_limits(call, new_date, code):
    call.verified(TOMAS)
    assert call.error("quote_delivery_change", order_number="KE-100815", new_date=new_date) == code


def test_the_latest_date_is_fourteen_days_after_the_scheduled_one(call):
    call.verified(TOMAS)
    assert call.ok("quote_delivery_change", order_number="KE-100815", new_date="2026-11-03")["fee"] == "0.00"


def test_carrier_parcels_and_delivered_orders_cannot_be_rescheduled(call):
    call.verified(MAYA)
    assert call.error("quote_delivery_change", order_number="KE-100236", new_date="2026-10-19") == "not_reschedulable"
    assert call.error("quote_delivery_change", order_number="KE-100234", new_date="2026-10-19") == "not_reschedulable"


# --- price matching ------------------------------------------------------------------------------

def test_a_price_match_refunds_the_difference_to_the_cent(call):
    call.verified(OMAR)
    quote = call.ok("quote_price_match", order_number="KE-100850", sku="SKU-1021", competitor="bright buy",
                    competitor_price="$279.99")
    assert (quote["competitor"], quote["refund_amount"]) == ("BrightBuy", "20.00")
    call.ok("confirm_price_match", price_match_token=quote["price_match_token"])
    refund = call.state()["refunds"][-1]
    assert (refund["kind"], refund["sku"], refund["amount_cents"], refund["status"]) == (
        "price_match", "SKU-1021", 2000, "issued")
    assert call.error("quote_price_match", order_number="KE-100850", sku="SKU-1021", competitor="MegaMart",
                      competitor_price="249.99") == "already_price_matched"


@pytest.mark.parametrize("who, order, sku, competitor, price, code", [
    (ROSA, "KE-100520", "SKU-1030", "BrightBuy", "599.00", "marketplace_item_excluded"),
    (ROSA, "KE-100520", "SKU-1021", "BrightBuy", "199.99", "open_box_excluded"),
    (OMAR, "KE-100850", "SKU-1021", "ZapDeals", "249.99", "competitor_not_eligible"),
    (OMAR, "KE-100850", "SKU-1021", "MegaMart", "319.99", "not_lower_price"),
    (OMAR, "KE-100850", "SKU-1021", "Tech Depot", "299.99", "not_lower_price"),   # equal is not lower
    (OMAR, "KE-100850", "SKU-1021", "BrightBuy", "259.99", "price_not_verified"),  # not the listed price
    (OMAR, "KE-100850", "SKU-1021", "Circuit Hub", "199.99", "price_not_verified"),  # no listed price at all
    (TOMAS, "KE-100790", "SKU-1011", "Tech Depot", "599.99", "outside_price_match_window"),  # 29 days
])
def test_price_match_exclusions(call, who, order, sku, competitor, price, code):
    call.verified(who)
    assert call.error("quote_price_match", order_number=order, sku=sku, competitor=competitor,
                      competitor_price=price) == code


def test_an_in_transit_order_inside_the_window_can_be_matched(call):
    call.verified(OMAR)
    quote = call.ok("quote_price_match", order_number="KE-100851", sku="SKU-1011", competitor="Circuit Hub",
                    competitor_price="599.99")
    assert quote["refund_amount"] == "50.00"


def test_the_competitor_price_is_the_listed_one_not_the_callers_word(call):
    """A caller who says BrightBuy sells the headphones for $199.99 gets no $100 match: the price list
    Kestrel keeps says $279.99."""
    call.verified(OMAR)
    assert call.error("quote_price_match", order_number="KE-100850", sku="SKU-1021", competitor="BrightBuy",
                      competitor_price="199.99") == "price_not_verified"
    assert not [r for r in call.state()["refunds"] if r["order_number"] == "KE-100850"]


def test_one_price_match_per_item_is_checked_at_confirm_too(call):
    """Two quotes for one item (Tech Depot, then Circuit Hub) never both pay out."""
    call.verified(DANIEL_ATX)
    first = call.ok("quote_price_match", order_number="KE-100405", sku="SKU-1020", competitor="Tech Depot",
                    competitor_price="409.99")["price_match_token"]
    second = call.ok("quote_price_match", order_number="KE-100405", sku="SKU-1020", competitor="Circuit Hub",
                     competitor_price="419.99")["price_match_token"]
    call.ok("confirm_price_match", price_match_token=first)
    assert call.error("confirm_price_match", price_match_token=second) == "already_price_matched"
    matches = [r["amount_cents"] for r in call.state()["refunds"] if r["order_number"] == "KE-100405"]
    assert matches == [4000]


def test_a_price_matched_item_returned_refunds_what_was_paid_after_the_match(call):
    """$449.99 soundbar matched at Circuit Hub ($30.00 back): its return refunds $419.99, not $449.99."""
    call.verified(DANIEL_ATX)
    pm = call.ok("quote_price_match", order_number="KE-100405", sku="SKU-1020", competitor="Circuit Hub",
                 competitor_price="419.99")["price_match_token"]
    call.ok("confirm_price_match", price_match_token=pm)
    quote = call.ok("quote_return", order_number="KE-100405", sku="SKU-1020", opened=False)
    assert (quote["price_paid"], quote["price_matched"], quote["refund_amount"]) == ("419.99", "30.00", "419.99")
    call.ok("confirm_return", return_token=quote["return_token"], restocking_fee_acknowledged=False,
            method="prepaid_label", reason="changed my mind")
    paid_back = sum(r["amount_cents"] for r in call.state()["refunds"] if r["order_number"] == "KE-100405")
    assert paid_back == 44999
    assert call.error("quote_price_match", order_number="KE-100405", sku="SKU-1020", competitor="Tech Depot",
                      competitor_price="409.99") == "already_returned"


def test_a_seeded_price_match_is_taken_off_the_return(call):
    call.verified(("Paula Greene", "602-555-0184", "85008", "9157"))
    quote = call.ok("quote_return", order_number="KE-100950", sku="SKU-1020", opened=True)  # general: no fee
    assert (quote["price_paid"], quote["restocking_fee"], quote["refund_amount"]) == ("409.99", "0.00", "409.99")


def test_the_restocking_fee_is_worked_out_on_what_was_paid_after_a_match(call):
    """$1,899.99 laptop pro matched at MegaMart ($100.00 back): opened, NY 15% of $1,799.99 = $270.00."""
    call.verified(GREGORY)
    pm = call.ok("quote_price_match", order_number="KE-100640", sku="SKU-1002", competitor="MegaMart",
                 competitor_price="1799.99")["price_match_token"]
    call.ok("confirm_price_match", price_match_token=pm)
    quote = call.ok("quote_return", order_number="KE-100640", sku="SKU-1002", opened=True)
    assert (quote["price_paid"], quote["restocking_fee"], quote["refund_amount"]) == ("1799.99", "270.00", "1529.99")


def test_a_price_matched_order_cancelled_refunds_the_total_less_the_match(call):
    call.verified(LINDA)
    pm = call.ok("quote_price_match", order_number="KE-100777", sku="SKU-1002", competitor="MegaMart",
                 competitor_price="1799.99")["price_match_token"]
    call.ok("confirm_price_match", price_match_token=pm)
    assert call.ok("cancel_order", order_number="KE-100777", reason="changed my mind")["refund_amount"] == "1799.99"
    paid_back = sum(r["amount_cents"] for r in call.state()["refunds"] if r["order_number"] == "KE-100777")
    assert paid_back == 189999


# --- cancelling an order --------------------------------------------------------------------------

def test_only_a_processing_order_can_be_cancelled(call):
    call.verified(LINDA)
    data = call.ok("cancel_order", order_number="KE-100777", reason="not mine")
    assert (data["status"], data["refund_amount"]) == ("cancelled", "1899.99")
    assert call.error("cancel_order", order_number="KE-100777", reason="again") == "cannot_cancel"
    assert call.error("cancel_order", order_number="KE-100610", reason="x") == "cannot_cancel"


# --- memberships -----------------------------------------------------------------------------------

def test_a_mid_term_cancellation_is_prorated_to_the_cent(call):
    call.verified(GREGORY)
    quote = call.ok("quote_membership_cancellation")
    # Elite 179.99 from 2026-01-15 to 2027-01-15: 93 of 365 days left; 179.99 x 93 / 365 = 45.8606 -> 45.86
    assert (quote["days_remaining"], quote["term_days"], quote["rule"], quote["refund_amount"]) == (
        93, 365, "prorated", "45.86")
    call.ok("confirm_membership_cancellation", cancel_token=quote["cancel_token"])
    state = call.state()
    m = next(m for m in state["memberships"] if m["customer_id"] == "cu_1006")
    assert (m["status"], m["cancelled_on"]) == ("cancelled", "2026-10-14")
    assert (state["refunds"][-1]["kind"], state["refunds"][-1]["amount_cents"]) == ("membership_cancel", 4586)
    assert call.error("quote_membership_cancellation") == "no_active_membership"


def test_a_cancellation_within_30_days_of_joining_is_a_full_refund(call):
    call.verified(AISHA)
    quote = call.ok("quote_membership_cancellation")
    assert (quote["rule"], quote["refund_amount"]) == ("full_refund_within_30_days", "59.99")


def test_an_upgrade_charges_the_prorated_difference_and_keeps_the_term(call):
    call.verified(SOFIA)
    quote = call.ok("quote_membership_change", new_tier="Kestrel Elite")
    # (179.99 - 59.99) x 218 / 365 = 71.6712 -> 71.67
    assert (quote["change"], quote["days_remaining"], quote["charge_amount"], quote["renews_on"]) == (
        "upgrade", 218, "71.67", "2027-05-20")
    call.ok("confirm_membership_change", change_token=quote["change_token"])
    state = call.state()
    m = next(m for m in state["memberships"] if m["customer_id"] == "cu_1014")
    assert (m["tier"], m["renews_on"], m["fee_paid_cents"]) == ("elite", "2027-05-20", 5999 + 7167)
    assert [(c["kind"], c["amount_cents"]) for c in state["charges"]] == [("membership_upgrade", 7167)]
    # upgraded today, the Elite windows apply: the laptop of 2026-07-03 is still past 45 days
    assert call.error("quote_return", order_number="KE-100333", sku="SKU-1001", opened=True) == "outside_return_window"


def test_an_upgrade_cancelled_later_refunds_the_unused_value_of_what_was_paid(call):
    """Sofia upgrades today ($71.67 for 218 of 365 days), then cancels: her Plus fee's 218/365
    ($35.83) plus the whole upgrade, whose 218 days are all unused ($71.67): $107.50, not the total
    paid prorated over the full term ($78.64)."""
    call.verified(SOFIA)
    change = call.ok("quote_membership_change", new_tier="elite")
    call.ok("confirm_membership_change", change_token=change["change_token"])
    quote = call.ok("quote_membership_cancellation")
    assert (quote["rule"], quote["refund_amount"]) == ("prorated", "107.50")


def test_within_30_days_cancel_and_rejoin_costs_what_the_upgrade_costs(call, new_call):
    """Rosa joins Plus, then wants Elite: the upgrade, or Plus cancelled (full refund) and Elite joined,
    end with the same money and the same renewal date, so C5-H4 lists both routes."""
    def join_plus(c):
        c.verified(ROSA)
        c.ok("confirm_membership_change", change_token=c.ok("quote_membership_change", new_tier="plus")["change_token"])

    upgrade = call
    join_plus(upgrade)
    quote = upgrade.ok("quote_membership_change", new_tier="elite")
    assert (quote["change"], quote["charge_amount"], quote["renews_on"]) == ("upgrade", "120.00", "2027-10-14")
    upgrade.ok("confirm_membership_change", change_token=quote["change_token"])

    rejoin = new_call()
    join_plus(rejoin)
    cancel = rejoin.ok("quote_membership_cancellation")
    assert cancel["refund_amount"] == "59.99"
    rejoin.ok("confirm_membership_cancellation", cancel_token=cancel["cancel_token"])
    signup = rejoin.ok("quote_membership_change", new_tier="elite")
    assert (signup["change"], signup["charge_amount"], signup["renews_on"]) == ("signup", "179.99", "2027-10-14")
    rejoin.ok("confirm_membership_change", change_token=signup["change_token"])

    def paid(c, customer="cu_1005"):
        state = c.state()
        charged = sum(r["amount_cents"] for r in state["charges"] if r["customer_id"] == customer)
        refunded = sum(r["amount_cents"] for r in state["refunds"] if r["customer_id"] == customer)
        active = [m for m in state["memberships"] if m["customer_id"] == customer and m["status"] == "active"]
        return charged - refunded, [(m["tier"], m["renews_on"]) for m in active]

    assert paid(upgrade) == paid(rejoin) == (17999, [("elite", "2027-10-14")])


def test_a_downgrade_waits_for_renewal_and_the_same_tier_is_refused(call):
    call.verified(GREGORY)
    assert call.error("quote_membership_change", new_tier="plus") == "downgrade_at_renewal"
    assert call.error("quote_membership_change", new_tier="Elite membership") == "already_on_tier"
    assert call.error("quote_membership_change", new_tier="Platinum") == "unknown_tier"


def test_joining_charges_the_full_fee_for_a_year(call):
    call.verified(OMAR)  # his old membership was cancelled last year
    quote = call.ok("quote_membership_change", new_tier="plus")
    assert (quote["change"], quote["charge_amount"], quote["renews_on"]) == ("signup", "59.99", "2027-10-14")
    call.ok("confirm_membership_change", change_token=quote["change_token"])
    m = call.state()["memberships"][-1]
    assert (m["customer_id"], m["tier"], m["started_on"], m["status"]) == ("cu_1012", "plus", "2026-10-14", "active")


# --- TechCrew service ------------------------------------------------------------------------------

def test_a_plan_covers_the_repairs_of_its_type_only(call):
    call.verified(HANNAH)
    covered = call.ok("check_service_coverage", order_number="KE-100300", sku="SKU-1010",
                      service_type="repair_malfunction")
    assert (covered["covered"], covered["price"]) == (True, "0.00")
    drop = call.ok("check_service_coverage", order_number="KE-100300", sku="SKU-1010",
                   service_type="repair_accidental_damage")
    assert (drop["covered"], drop["plan_type"], drop["price"]) == (False, "standard", "149.99")
    ended = call.ok("check_service_coverage", order_number="KE-099500", sku="SKU-1011",
                    service_type="repair_malfunction")
    assert (ended["covered"], ended["plan_active"], ended["plan_ends_on"], ended["price"]) == (
        False, False, "2026-09-05", "89.99")


def test_hold_then_confirm_books_a_covered_repair_at_no_cost(call):
    call.verified(GREGORY)
    slots = call.ok("find_service_slots", service_type="repair_accidental_damage")["slots"]
    assert [s["slot_id"] for s in slots][:2] == ["TS-303", "TS-301"]  # TS-304 booked, TS-307 booked
    hold = call.ok("hold_service_slot", slot_id="ts-303", order_number="KE-100120", sku="SKU-1040",
                   service_type="repair_accidental_damage")
    assert (hold["covered_by_plan"], hold["price"], hold["expires_at"]) == (True, "0.00", "2026-10-14T10:10")
    booked = call.ok("confirm_service_appointment", hold_token=hold["hold_token"])
    assert booked["status"] == "scheduled"
    appt = call.state()["service_appointments"][-1]
    assert (appt["slot_id"], appt["plan_id"], appt["price_cents"]) == ("TS-303", "PP-5501", 0)
    assert call.error("confirm_service_appointment", hold_token=hold["hold_token"]) == "token_already_used"


def test_an_install_is_priced_and_never_covered(call):
    call.verified(DANIEL_SEA)
    assert call.error("hold_service_slot", slot_id="TS-311", order_number="KE-100311", sku="SKU-1010",
                      service_type="tv_mounting") == "not_delivered"
    call.verified(HANNAH)
    hold = call.ok("hold_service_slot", slot_id="TS-311", order_number="KE-100300", sku="SKU-1010",
                   service_type="tv_mounting")
    assert (hold["covered_by_plan"], hold["price"]) == (False, "129.99")
    assert call.error("hold_service_slot", slot_id="TS-301", order_number="KE-100300", sku="SKU-1010",
                      service_type="tv_mounting") == "slot_wrong_service"


def test_a_slot_held_by_someone_else_is_unavailable_and_a_lapsed_hold_is_marked_expired(call):
    call.verified(HANNAH)
    args = dict(order_number="KE-100300", sku="SKU-1010", service_type="tv_mounting")
    assert "TS-312" not in [s["slot_id"] for s in call.ok("find_service_slots", service_type="tv_mounting")["slots"]]
    assert call.error("hold_service_slot", slot_id="TS-312", **args) == "slot_unavailable"
    call.ok("hold_service_slot", slot_id="TS-313", **args)
    holds = {h["id"]: h["status"] for h in call.state()["service_holds"]}
    assert (holds[1], holds[2], holds[3]) == ("active", "expired", "active")
    call.ok("hold_service_slot", slot_id="TS-315", **args)  # a second hold releases the first
    assert [h["status"] for h in call.state()["service_holds"][2:]] == ["released", "active"]


def test_appointments_cancel_24_hours_ahead_only(new_call):
    sofia = new_call().verified(SOFIA)
    token = sofia.ok("list_service_appointments")["appointments"][0]["cancel_token"]
    assert sofia.error("cancel_service_appointment", cancel_token=token) == "too_late_to_cancel"
    hannah = new_call().verified(HANNAH)
    token = hannah.ok("list_service_appointments")["appointments"][0]["cancel_token"]
    assert hannah.ok("cancel_service_appointment", cancel_token=token)["status"] == "cancelled"
    assert hannah.error("cancel_service_appointment", cancel_token=token) == "token_already_used"
    assert hannah.error("confirm_service_appointment", hold_token=token) == "wrong_token_kind"


# --- fraud desk, reception, escalation ---------------------------------------------------------------

def test_a_scam_report_needs_no_identity_and_records_none(call):
    data = call.ok("report_scam", channel="text_message", impersonated="kestrel_support",
                   payment_requested="gift_cards", amount_lost="$200", scammer_phone="(302) 555-0188",
                   description="asked for gift cards")
    assert data["reference"] == "SR-00001"
    row = call.state()["scam_reports"][0]
    assert (row["amount_lost_cents"], row["scammer_phone"], row["scammer_email"]) == (20000, "3025550188", None)
    assert "customer_id" not in row


@pytest.mark.parametrize("contact, official", [
    ("888-555-0100", True), ("1 (888) 555-0177", True), ("53735", True),
    ("orders@kestrelelectronics.com", True), ("kestrel-refunds.com", False), ("support@kestrel-help.net", False),
    ("302-555-0188", False),
])
def test_official_contacts(call, contact, official):
    assert call.ok("check_official_contact", contact=contact)["official"] is official


# Seeded official contacts: 888-555-0100, 888-555-0177, short code 53735, kestrelelectronics.com.
@pytest.mark.parametrize("contact", [
    "+1 888-555-0100", "1-888-555-0100", "(888) 555-0100", "888.555.0100", "+1.888.555.0177", "tel:+18885550177",
    "https://www.kestrelelectronics.com/help", "http://kestrelelectronics.com", "www.kestrelelectronics.com",
    "support.kestrelelectronics.com", "KestrelElectronics.com", "kestrelelectronics.com:443/orders?id=1",
    "kestrel electronics dot com", "Orders AT Kestrel Electronics dot com", "help@support.kestrelelectronics.com",
])
def test_an_official_contact_is_official_in_any_form(call, contact):
    data = call.ok("check_official_contact", contact=contact)
    assert data["official"] is True, data


@pytest.mark.parametrize("contact", [
    "kestrelelectronics.com.evil.net", "https://kestrelelectronics.com.refunds.net/login", "kestrel-electronics.com",
    "kestrelelectronics.net", "help@kestrelelectronics.com.evil.net", "http://kestrelelectronics.com@evil.net/",
    "+1 302-555-0188", "888-555-0101",
])
def test_a_lookalike_contact_is_not_official(call, contact):
    assert call.ok("check_official_contact", contact=contact)["official"] is False


@pytest.mark.parametrize("contact", ["+1 888-555-0100", "https://www.kestrelelectronics.com/help", "1-302-555-0188",
                                     "kestrelelectronics.com.evil.net", "orders@kestrelelectronics.com"])
def test_the_tool_and_the_verifier_read_a_contact_alike(call, contact):
    # tools.json declares `contact` of kind contact: what the tool checked is the verifier's reading.
    pack = load_pack(PACK)
    assert pack.tools["check_official_contact"].kinds == {"contact": "contact"}
    checked = call.ok("check_official_contact", contact=contact)["checked"]
    if "@" not in contact:
        assert pack.values.same("contact", checked, contact)


def test_a_contact_that_is_neither_a_number_nor_an_address_is_asked_again(call):
    for contact in ("kestrel", "555", ""):
        assert call.error("check_official_contact", contact=contact) == "invalid_contact"


def test_recalls_are_public(call):
    data = call.ok("check_recall", model_number="kh 1500")
    assert (data["recalled"], data["recall_id"]) == (True, "RC-2026-07")
    assert call.ok("check_recall", model_number="QL-700")["recalled"] is False


def test_an_escalation_records_the_verified_customer_or_none(new_call):
    anonymous = new_call()
    anonymous.ok("escalate_to_human", reason="caller_request", summary="x")
    assert anonymous.state()["escalations"][0]["customer_id"] is None
    known = new_call().verified(MAYA)
    known.ok("escalate_to_human", reason="complaint", summary="x")
    assert known.state()["escalations"][0]["customer_id"] == "cu_1001"


# Every caller-safe message is one the prompts let the agent read out: none names another account,
# says which verification detail was wrong, or quotes a number the tools did not compute.
FORBIDDEN = ("zip", "last four", "card", "another customer", "someone else", "belongs to", "cu_1")


def test_caller_safe_messages_reveal_no_account(new_call):
    c = new_call()
    messages = [c.tool("find_customer", full_name="Daniel Kim")["caller_safe_message"],
                c.tool("find_customer", order_number="KE-999999")["caller_safe_message"]]
    c.ok("find_customer", order_number="KE-100234")
    messages.append(c.tool("verify_identity", billing_zip="1", card_last4="2")["caller_safe_message"])
    c.verified(MAYA)
    messages.append(c.tool("get_order", order_number="KE-100311")["caller_safe_message"])
    for message in messages:
        assert message and not any(word in message.casefold() for word in FORBIDDEN), message
