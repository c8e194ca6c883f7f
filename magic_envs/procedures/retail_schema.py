"""The retail tools' constants, their OpenAI tool schemas and the shapes their results print in (tau2-bench's
field order). `retail_tools` re-exports every public name here."""

from __future__ import annotations

from magic_envs.core.tools import Tool

STATUSES = ("processed", "pending", "pending (item modified)", "delivered", "cancelled", "exchange requested",
            "return requested")
CANCEL_REASONS = ("no longer needed", "ordered by mistake")
OPTIONAL_ORDER_FIELDS = ("cancel_reason", "exchange_items", "exchange_new_items", "exchange_payment_method_id",
                         "exchange_price_difference", "return_items", "return_payment_method_id")
ORDER_FIELDS = ("order_id", "user_id", "address", "items", "status", "fulfillments",
                "payment_history") + OPTIONAL_ORDER_FIELDS
ADDRESS_FIELDS = ("address1", "address2", "city", "country", "state", "zip")
PAYMENT_FIELDS = {"credit_card": ("source", "id", "brand", "last_four"), "paypal": ("source", "id"),
                  "gift_card": ("source", "id", "balance")}


# ---------------------------------------------------------------------------------------------- schemas

_ORDER_ID = "The order id, such as '#W0000000'. Be careful there is a '#' symbol at the beginning of the order id."
_USER_ID = "The user id, such as 'sara_doe_496'."
_PRODUCT_ID = ("The product id, such as '6086499569'. Be careful: a product id is not an item id; "
               "a product has many items.")
_ITEM_ID = "The item id, such as '6086499569'. Be careful: an item id is not a product id."
_PAYMENT_ID = ("The payment method id that pays or receives the price difference, such as 'gift_card_0000000' "
               "or 'credit_card_0000000'; look it up in the user or order details.")
_CONFIRM = " Explain the details to the user and ask for explicit confirmation (yes/no) before calling it."
_ADDRESS = {"address1": "The first address line, such as '123 Main St'.",
            "address2": "The second address line, such as 'Apt 1', or ''.",
            "city": "The city, such as 'San Francisco'.", "state": "The state, such as 'CA'.",
            "country": "The country, such as 'USA'.", "zip": "The zip code, such as '12345'."}


def _tool(name: str, description: str, **params: str | tuple[str]) -> Tool:
    """A Tool whose parameters are all required; a tuple description marks a list of strings."""
    props = {}
    for key, text in params.items():
        if isinstance(text, tuple):
            props[key] = {"type": "array", "items": {"type": "string"}, "description": text[0]}
        else:
            props[key] = {"type": "string", "description": text}
    return Tool(name, description, {"type": "object", "properties": props, "required": list(params),
                                    "additionalProperties": False})


TOOLS: tuple[Tool, ...] = (
    _tool("calculate", "Calculate the value of an arithmetic expression, rounded to 2 decimals.",
          expression="The expression, such as '2 + 2'; it may contain numbers, the operators + - * /, "
                     "parentheses and spaces."),
    _tool("cancel_pending_order",
          "Cancel a pending order; processed or delivered orders cannot be cancelled." + _CONFIRM +
          " The order becomes 'cancelled' and its payment is refunded: at once to a gift card, otherwise "
          "within 5-7 business days. Returns the order after the cancellation.",
          order_id=_ORDER_ID,
          reason="The reason for cancelling: either 'no longer needed' or 'ordered by mistake'."),
    _tool("exchange_delivered_order_items",
          "Exchange items of a delivered order for other items of the same product type. An order can be "
          "returned or exchanged only once, so collect every item first." + _CONFIRM +
          " Returns the order after the exchange request.",
          order_id=_ORDER_ID,
          item_ids=("The item ids to exchange, each such as '1008292230'; an id may repeat.",),
          new_item_ids=(("The item ids to exchange them for, each such as '1008292230', in the same "
                         "positions as item_ids and of the same product; an id may repeat."),),
          payment_method_id=_PAYMENT_ID),
    _tool("find_user_id_by_name_zip",
          "Find a user id by first name, last name and zip code. Look users up by email first; use this only "
          "if the email lookup fails or the user cannot remember their email.",
          first_name="The customer's first name, such as 'John'.",
          last_name="The customer's last name, such as 'Doe'.", zip="The zip code, such as '12345'."),
    _tool("find_user_id_by_email", "Find a user id by email address.",
          email="The email address, such as 'something@example.com'."),
    _tool("get_order_details", "Get the status and details of an order.", order_id=_ORDER_ID),
    _tool("get_product_details", "Get the inventory details of a product: all of its items, available or not.",
          product_id=_PRODUCT_ID),
    _tool("get_item_details", "Get the inventory details of one item.", item_id=_ITEM_ID),
    _tool("get_user_details", "Get the details of a user, including their payment methods and orders.",
          user_id=_USER_ID),
    _tool("list_all_product_types",
          "List the name and product id of every product type in the store (each type has several items "
          "with their own item ids and options)."),
    _tool("modify_pending_order_address", "Change the shipping address of a pending order." + _CONFIRM +
          " Returns the order after the change.", order_id=_ORDER_ID, **_ADDRESS),
    _tool("modify_pending_order_items",
          "Change items of a pending order to other items of the same product type. This can be done only "
          "once per order, so collect every item first." + _CONFIRM + " Returns the order after the change.",
          order_id=_ORDER_ID,
          item_ids=("The item ids to change, each such as '1008292230'; an id may repeat.",),
          new_item_ids=(("The item ids to change them to, each such as '1008292230', in the same positions "
                         "as item_ids and of the same product; an id may repeat."),),
          payment_method_id=_PAYMENT_ID),
    _tool("modify_pending_order_payment", "Change the payment method of a pending order." + _CONFIRM +
          " Returns the order after the change.",
          order_id=_ORDER_ID,
          payment_method_id="The new payment method id, such as 'gift_card_0000000' or 'credit_card_0000000'; "
                            "look it up in the user details."),
    _tool("modify_user_address", "Change the default address of a user." + _CONFIRM +
          " Returns the user after the change.", user_id=_USER_ID, **_ADDRESS),
    _tool("return_delivered_order_items",
          "Request a return of items of a delivered order; the order becomes 'return requested' and the user "
          "gets an email on how and where to send the items." + _CONFIRM +
          " Returns the order after the return request.",
          order_id=_ORDER_ID,
          item_ids=("The item ids to return, each such as '1008292230'; an id may repeat.",),
          payment_method_id="The payment method id that receives the refund: the original payment method or "
                            "a gift card, such as 'gift_card_0000000'; look it up in the user or order details."),
    _tool("transfer_to_human_agents",
          "Transfer the user to a human agent, with a summary of the issue. Transfer only if the user "
          "explicitly asks for a human agent, or if the policy and the tools cannot solve the issue.",
          summary="A summary of the user's issue."),
)
TOOLS_BY_NAME = {tool.name: tool for tool in TOOLS}
WRITE_TOOLS: frozenset[str] = frozenset({
    "cancel_pending_order", "exchange_delivered_order_items", "modify_pending_order_address",
    "modify_pending_order_items", "modify_pending_order_payment", "modify_user_address",
    "return_delivered_order_items"})


# ------------------------------------------------------------------------------------ results as tau2 prints

def _address_view(a: dict) -> dict:
    return {k: a[k] for k in ADDRESS_FIELDS}


def _payment_method_view(pm: dict) -> dict:
    return {k: pm[k] for k in PAYMENT_FIELDS.get(pm["source"], ("source", "id"))}


def _variant_view(v: dict) -> dict:
    return {"item_id": v["item_id"], "options": v["options"], "available": v["available"], "price": v["price"]}


def _product_view(p: dict) -> dict:
    return {"name": p["name"], "product_id": p["product_id"],
            "variants": {k: _variant_view(v) for k, v in p["variants"].items()}}


def _user_view(u: dict) -> dict:
    return {"user_id": u["user_id"], "name": {"first_name": u["name"]["first_name"],
                                              "last_name": u["name"]["last_name"]},
            "address": _address_view(u["address"]), "email": u["email"],
            "payment_methods": {k: _payment_method_view(pm) for k, pm in u["payment_methods"].items()},
            "orders": u["orders"]}


def _order_view(o: dict) -> dict:
    # model_dump prints every field, the optional ones as null, in the model's order.
    view = {k: o.get(k) for k in ORDER_FIELDS}
    view["address"] = _address_view(o["address"])
    view["items"] = [{k: i[k] for k in ("name", "product_id", "item_id", "price", "options")} for i in o["items"]]
    view["fulfillments"] = [{"tracking_id": f["tracking_id"], "item_ids": f["item_ids"]} for f in o["fulfillments"]]
    view["payment_history"] = [{k: p[k] for k in ("transaction_type", "amount", "payment_method_id")}
                               for p in o["payment_history"]]
    return view
