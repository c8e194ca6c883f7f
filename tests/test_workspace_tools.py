"""Workspace tools, table-driven: every tool's happy path and its refusals on a small hand-made world.

Every row also checks the two promises the env's verification rests on: a refused call leaves the world exactly
as it was, and a successful one names in the journal every record it changed (the end-of-episode comparison
and the sub-goal metric only look at journalled records).
"""

import copy

import numpy as np
import pytest

from magic_envs.core.grammar import parse_action
from magic_envs.core.tools import random_call
from magic_envs.tool_execution.workspace_state import ID_COLLECTIONS, KEYED, WorkspaceError, fresh
from magic_envs.tool_execution.workspace_tools import call, fits_schema, registry
from magic_envs.tool_execution.workspace_world import build_world, email

BOB, ME = "bob.stone@x.com", "ann.lee@example.com"


def small_world() -> dict:
    w = {"today": "2025-03-14", "clock": 540, "seq": 5000, "journal": [], "user": {"name": "Ann Lee", "email": ME},
         "cart": {"items": {}, "coupon": ""}, **{c: {} for c in ID_COLLECTIONS + KEYED}}
    for path in ("/docs", "/docs/empty", "/docs/full"):
        w["files"][path] = {"type": "folder", "time": "2025-01-01 09:00"}
    w["files"]["/docs/a.txt"] = {"type": "file", "content": "alpha line\nbeta line\n", "time": "2025-01-01 10:00"}
    w["files"]["/docs/full/x.txt"] = {"type": "file", "content": "x", "time": "2025-01-01 10:00"}
    w["emails"]["m1"] = email("m1", "inbox", BOB, "Bob Stone", [ME], "Invoice 12", "Please pay 12 EUR.",
                              "2025-03-13 10:00", [{"name": "inv.txt", "content": "INV 12"}])
    w["emails"]["m2"] = email("m2", "sent", ME, "Ann Lee", [BOB], "Hello", "Hi Bob", "2025-03-12 10:00")
    w["emails"]["m3"] = email("m3", "trash", "spam@ads.com", "Ads", [ME], "Win", "Click", "2025-03-11 10:00")
    w["events"]["ev1"] = {"id": "ev1", "title": "Sync", "date": "2025-03-17", "start": "10:00", "end": "11:00",
                          "location": "Room 1", "attendees": [BOB], "notes": ""}
    w["contacts"]["c1"] = {"id": "c1", "name": "Bob Stone", "email": BOB, "phone": "+1 555 100 2000", "company": "X"}
    w["contacts"]["c2"] = {"id": "c2", "name": "Cy Vale", "email": "cy@y.com", "phone": "", "company": "Y"}
    w["notes"]["n1"] = {"id": "n1", "title": "Groceries", "body": "milk\n", "tags": ["shopping"],
                        "time": "2025-03-01 10:00"}
    w["notes"]["n2"] = {"id": "n2", "title": "Ideas", "body": "", "tags": [], "time": "2025-03-02 10:00"}
    w["products"]["SKU-1"] = {"sku": "SKU-1", "name": "Cablo USB-C cable, 1 m", "kind": "USB-C cable",
                              "category": "electronics", "price": 999, "stock": 2}
    w["products"]["SKU-2"] = {"sku": "SKU-2", "name": "Linkra USB-C cable, 2 m", "kind": "USB-C cable",
                              "category": "electronics", "price": 799, "stock": 0}
    w["coupons"] = {"OK10": {"code": "OK10", "percent": 10, "min_total": 0, "expired": False},
                    "OLD5": {"code": "OLD5", "percent": 5, "min_total": 0, "expired": True},
                    "BIG20": {"code": "BIG20", "percent": 20, "min_total": 100000, "expired": False}}
    item = {"sku": "SKU-1", "name": "Cablo USB-C cable, 1 m", "quantity": 1, "price": 999}
    for oid, status in (("ORD-1", "delivered"), ("ORD-2", "placed")):
        w["orders"][oid] = {"id": oid, "items": [dict(item)], "subtotal": 999, "discount": 0, "total": 999,
                            "coupon": "", "account": "checking", "status": status, "time": "2025-03-01 10:00"}
    w["accounts"]["checking"] = {"id": "checking", "name": "Checking", "iban": "DE00000000000000000001",
                                 "balance": 10000}
    w["accounts"]["savings"] = {"id": "savings", "name": "Savings", "iban": "DE00000000000000000002", "balance": 50000}
    w["payees"]["P1"] = {"id": "P1", "name": "Voltra Power", "iban": "DE11111111111111111111"}
    w["transactions"]["T1"] = {"id": "T1", "account": "checking", "date": "2025-02-03", "amount": -450,
                               "counterparty": "FreshMart", "reference": "card payment", "time": "2025-02-03 12:00"}
    w["projects"]["Home"] = {"name": "Home"}
    w["todos"]["td1"] = {"id": "td1", "project": "Home", "title": "Fix the gate", "done": False, "due": "2025-03-20",
                         "notes": ""}
    w["todos"]["td2"] = {"id": "td2", "project": "Home", "title": "Buy seeds", "done": True, "due": "", "notes": ""}
    w["channels"]["general"] = {"name": "general", "topic": "All things general"}
    w["messages"]["cm1"] = {"id": "cm1", "channel": "general", "author": "Bob Stone", "text": "Lunch at noon?",
                            "time": "2025-03-14 08:00"}
    return w


def ok(check=lambda result, world: True):
    return ("ok", check)


def refused(words):
    return ("refused", words)


ROWS = [
    # files
    ("list_directory", {"path": "/docs"}, ok(lambda r, w: r["folders"] == ["empty", "full"]
                                             and [f["name"] for f in r["files"]] == ["a.txt"])),
    ("list_directory", {}, ok(lambda r, w: r["folders"] == ["docs"])),
    ("list_directory", {"path": "/docs/a.txt"}, refused("is a file, not a folder")),
    ("list_directory", {"path": "/nope"}, refused("no such folder")),
    ("read_file", {"path": "/docs/a.txt"}, ok(lambda r, w: r["content"] == "alpha line\nbeta line\n")),
    ("read_file", {"path": "/docs"}, refused("is a folder, not a file")),
    ("read_file", {"path": "docs/a.txt"}, refused("not a valid absolute path")),
    ("write_file", {"path": "/docs/b.txt", "content": "hi"},
     ok(lambda r, w: w["files"]["/docs/b.txt"]["content"] == "hi")),
    ("write_file", {"path": "/docs/a.txt", "content": "new", "overwrite": True},
     ok(lambda r, w: w["files"]["/docs/a.txt"]["content"] == "new")),
    ("write_file", {"path": "/docs/a.txt", "content": "new"}, refused("already exists")),
    ("write_file", {"path": "/missing/b.txt", "content": "hi"}, refused("no such folder: /missing")),
    ("write_file", {"path": "/docs/../b.txt", "content": "hi"}, refused("not a valid absolute path")),
    ("append_to_file", {"path": "/docs/a.txt", "text": "gamma"},
     ok(lambda r, w: w["files"]["/docs/a.txt"]["content"] == "alpha line\nbeta line\ngamma\n")),
    ("append_to_file", {"path": "/docs/z.txt", "text": "gamma"}, refused("no such file")),
    ("create_folder", {"path": "/docs/new"}, ok(lambda r, w: w["files"]["/docs/new"]["type"] == "folder")),
    ("create_folder", {"path": "/docs/empty"}, refused("already exists")),
    ("create_folder", {"path": "/a/b"}, refused("no such folder: /a")),
    ("delete_path", {"path": "/docs/empty"}, ok(lambda r, w: "/docs/empty" not in w["files"])),
    ("delete_path", {"path": "/docs/a.txt"}, ok(lambda r, w: "/docs/a.txt" not in w["files"])),
    ("delete_path", {"path": "/docs/full"}, refused("is not empty")),
    ("delete_path", {"path": "/docs/zz"}, refused("no such file or folder")),
    ("move_file", {"path": "/docs/a.txt", "destination": "/docs/empty"},
     ok(lambda r, w: "/docs/empty/a.txt" in w["files"] and "/docs/a.txt" not in w["files"])),
    ("move_file", {"path": "/docs/a.txt", "destination": "/docs/c.txt"}, ok(lambda r, w: r["to"] == "/docs/c.txt")),
    ("move_file", {"path": "/docs/full/x.txt", "destination": "/docs/full"}, refused("already exists")),
    ("move_file", {"path": "/docs/a.txt", "destination": "/nope/c.txt"}, refused("no such folder")),
    ("copy_file", {"path": "/docs/a.txt", "destination": "/docs/full"},
     ok(lambda r, w: w["files"]["/docs/full/a.txt"]["content"] == w["files"]["/docs/a.txt"]["content"])),
    ("copy_file", {"path": "/docs/q.txt", "destination": "/docs/full"}, refused("no such file")),
    ("search_files", {"query": "BETA"}, ok(lambda r, w: r["results"] == [{"path": "/docs/a.txt",
                                                                         "matches": ["line 2: beta line"]}])),
    ("search_files", {"query": "alpha", "folder": "/docs/full"}, ok(lambda r, w: r["total"] == 0)),
    ("search_files", {"query": "  "}, refused("query is empty")),
    # mail
    ("list_emails", {}, ok(lambda r, w: [m["id"] for m in r["emails"]] == ["m1"] and r["pages"] == 1)),
    ("list_emails", {"folder": "trash"}, ok(lambda r, w: r["total"] == 1)),
    ("list_emails", {"page": 2}, refused("page 2 does not exist")),
    ("search_emails", {"query": "invoice bob"}, ok(lambda r, w: [m["id"] for m in r["results"]] == ["m1"])),
    ("search_emails", {"query": "click"}, ok(lambda r, w: r["total"] == 0)),  # the trash is left out
    ("search_emails", {"query": "click", "folder": "trash"}, ok(lambda r, w: r["total"] == 1)),
    ("read_email", {"email_id": "m1"}, ok(lambda r, w: r["attachments"] == [{"name": "inv.txt", "size": 6}])),
    ("read_email", {"email_id": "m9"}, refused("no e-mail with id 'm9'")),
    ("send_email", {"to": ["Cy@Y.com", BOB, BOB], "subject": "S", "body": "B"},
     ok(lambda r, w: w["emails"][r["sent"]]["to"] == [BOB, "cy@y.com"] and w["emails"][r["sent"]]["folder"] == "sent")),
    ("send_email", {"to": [], "subject": "S", "body": "B"}, refused("needs at least one e-mail address")),
    ("send_email", {"to": ["bob"], "subject": "S", "body": "B"}, refused("not an e-mail address")),
    ("send_email", {"to": [BOB], "subject": "S", "body": "B", "cc": ["x"]}, refused("not an e-mail address")),
    ("reply_email", {"email_id": "m1", "body": "Paid."},
     ok(lambda r, w: w["emails"][r["sent"]]["subject"] == "Re: Invoice 12" and r["to"] == [BOB]
        and w["emails"][r["sent"]]["in_reply_to"] == "m1")),
    ("reply_email", {"email_id": "m0", "body": "x"}, refused("no e-mail")),
    ("forward_email", {"email_id": "m1", "to": ["cy@y.com"], "note": "FYI"},
     ok(lambda r, w: w["emails"][r["sent"]]["body"].startswith("FYI\n\n---------- Forwarded message")
        and w["emails"][r["sent"]]["attachments"][0]["name"] == "inv.txt")),
    ("forward_email", {"email_id": "m1", "to": ["nobody"]}, refused("not an e-mail address")),
    ("move_email", {"email_id": "m1", "folder": "archive"}, ok(lambda r, w: w["emails"]["m1"]["folder"] == "archive")),
    ("move_email", {"email_id": "m1", "folder": "inbox"}, refused("cannot be moved")),
    ("move_email", {"email_id": "m2", "folder": "inbox"}, refused("cannot be moved")),
    ("delete_email", {"email_id": "m1"}, ok(lambda r, w: w["emails"]["m1"]["folder"] == "trash")),
    ("delete_email", {"email_id": "m3"}, refused("already in the trash")),
    ("save_attachment", {"email_id": "m1", "attachment": "inv.txt", "folder": "/docs"},
     ok(lambda r, w: w["files"]["/docs/inv.txt"]["content"] == "INV 12")),
    ("save_attachment", {"email_id": "m1", "attachment": "x.pdf", "folder": "/docs"}, refused("has no attachment")),
    ("save_attachment", {"email_id": "m1", "attachment": "inv.txt", "folder": "/nope"}, refused("no such folder")),
    # calendar
    ("list_events", {"start_date": "2025-03-17"}, ok(lambda r, w: [e["id"] for e in r["events"]] == ["ev1"])),
    ("list_events", {"start_date": "2025-03-17", "end_date": "2025-03-01"}, refused("on or after start_date")),
    ("list_events", {"start_date": "17/03/2025"}, refused("YYYY-MM-DD")),
    ("search_events", {"query": "room sync"}, ok(lambda r, w: r["total"] == 1)),
    ("search_events", {"query": ""}, refused("query is empty")),
    ("get_event", {"event_id": "ev1"}, ok(lambda r, w: r["title"] == "Sync")),
    ("get_event", {"event_id": "ev2"}, refused("no event")),
    ("create_event", {"title": "Lunch", "date": "2025-03-17", "start": "11:00", "end": "12:00", "attendees": [BOB]},
     ok(lambda r, w: r["created"]["attendees"] == [BOB] and r["created"]["location"] == "")),
    ("create_event", {"title": "X", "date": "2025-03-17", "start": "10:30", "end": "11:30"}, refused("conflicts with")),
    ("create_event", {"title": "X", "date": "2025-03-17", "start": "12:00", "end": "11:00"}, refused("end after")),
    ("create_event", {"title": "X", "date": "2025-03-17", "start": "25:00", "end": "26:00"}, refused("HH:MM")),
    ("update_event", {"event_id": "ev1", "date": "2025-03-18"},
     ok(lambda r, w: w["events"]["ev1"]["date"] == "2025-03-18")),
    ("update_event", {"event_id": "ev1", "end": "11:30"}, ok(lambda r, w: w["events"]["ev1"]["end"] == "11:30")),
    ("update_event", {"event_id": "ev1"}, refused("nothing to update")),
    ("update_event", {"event_id": "ev1", "attendees": ["x"]}, refused("not an e-mail address")),
    ("delete_event", {"event_id": "ev1"}, ok(lambda r, w: "ev1" not in w["events"])),
    ("delete_event", {"event_id": "ev7"}, refused("no event")),
    ("find_free_slots", {"date": "2025-03-17", "minutes": 60},
     ok(lambda r, w: r["free"] == [{"start": "08:00", "end": "10:00"}, {"start": "11:00", "end": "18:00"}])),
    ("find_free_slots", {"date": "2025-03-17", "minutes": 60, "earliest": "9"}, refused("HH:MM")),
    # contacts
    ("search_contacts", {"query": "stone"}, ok(lambda r, w: [c["id"] for c in r["results"]] == ["c1"])),
    ("search_contacts", {"query": " "}, refused("query is empty")),
    ("get_contact", {"contact_id": "c2"}, ok(lambda r, w: r["name"] == "Cy Vale")),
    ("get_contact", {"contact_id": "c9"}, refused("no contact")),
    ("add_contact", {"name": "Di Moss", "email": "di@z.com"}, ok(lambda r, w: r["created"]["phone"] == "")),
    ("add_contact", {"name": "Bob Two", "email": "BOB.stone@x.com"}, refused("already belongs to contact c1")),
    ("update_contact", {"contact_id": "c1", "phone": "+1 555 0"},
     ok(lambda r, w: w["contacts"]["c1"]["phone"] == "+1 555 0")),
    ("update_contact", {"contact_id": "c1", "email": "cy@y.com"}, refused("already belongs to contact c2")),
    ("update_contact", {"contact_id": "c1"}, refused("nothing to update")),
    ("delete_contact", {"contact_id": "c2"}, ok(lambda r, w: "c2" not in w["contacts"])),
    ("delete_contact", {"contact_id": "c0"}, refused("no contact")),
    # notes
    ("list_notes", {}, ok(lambda r, w: [n["id"] for n in r["notes"]] == ["n2", "n1"])),
    ("list_notes", {"tag": "shopping"}, ok(lambda r, w: r["total"] == 1)),
    ("list_notes", {"page": 3}, refused("page 3 does not exist")),
    ("search_notes", {"query": "MILK"}, ok(lambda r, w: r["results"][0]["id"] == "n1")),
    ("search_notes", {"query": ""}, refused("query is empty")),
    ("read_note", {"note_id": "n1"}, ok(lambda r, w: r["body"] == "milk\n")),
    ("read_note", {"note_id": "n5"}, refused("no note")),
    ("create_note", {"title": "Todo", "body": "a", "tags": ["b", "a", "b"]},
     ok(lambda r, w: w["notes"][r["created"]]["tags"] == ["a", "b"])),
    ("create_note", {"title": "Groceries", "body": "a"}, refused("already exists")),
    ("create_note", {"title": " ", "body": "a"}, refused("needs a title")),
    ("update_note", {"note_id": "n1", "title": "Food"}, ok(lambda r, w: w["notes"]["n1"]["title"] == "Food")),
    ("update_note", {"note_id": "n2", "title": "Groceries"}, refused("already exists")),
    ("update_note", {"note_id": "n2"}, refused("nothing to update")),
    ("append_to_note", {"note_id": "n1", "text": "eggs"}, ok(lambda r, w: w["notes"]["n1"]["body"] == "milk\neggs\n")),
    ("append_to_note", {"note_id": "n8", "text": "eggs"}, refused("no note")),
    ("delete_note", {"note_id": "n2"}, ok(lambda r, w: "n2" not in w["notes"])),
    ("delete_note", {"note_id": "n8"}, refused("no note")),
    # shop
    ("search_products", {"query": "usb-c cable"},
     ok(lambda r, w: [p["sku"] for p in r["results"]] == ["SKU-2", "SKU-1"])),
    ("search_products", {"query": "cable", "in_stock_only": True, "max_price": 10}, ok(lambda r, w: r["total"] == 1)),
    ("search_products", {"query": ""}, refused("query is empty")),
    ("get_product", {"sku": "SKU-1"}, ok(lambda r, w: r == {"sku": "SKU-1", "name": "Cablo USB-C cable, 1 m",
                                                            "category": "electronics", "price": 9.99, "in_stock": 2})),
    ("get_product", {"sku": "SKU-9"}, refused("no product")),
    ("add_to_cart", {"sku": "SKU-1", "quantity": 2}, ok(lambda r, w: w["cart"]["items"] == {"SKU-1": 2})),
    ("add_to_cart", {"sku": "SKU-1", "quantity": 3}, refused("only 2 of SKU-1 in stock")),
    ("add_to_cart", {"sku": "SKU-2"}, refused("only 0 of SKU-2")),
    ("remove_from_cart", {"sku": "SKU-1"}, refused("is not in the cart")),
    ("view_cart", {}, ok(lambda r, w: r["items"] == [] and r["total"] == 0)),
    ("apply_coupon", {"code": "OLD5"}, refused("has expired")),
    ("apply_coupon", {"code": "NOPE"}, refused("unknown coupon")),
    ("apply_coupon", {"code": "OK10"}, refused("needs a cart subtotal")),  # the cart is empty
    ("checkout", {"account_id": "checking"}, refused("the cart is empty")),
    ("list_orders", {"status": "placed"}, ok(lambda r, w: [o["id"] for o in r["orders"]] == ["ORD-2"])),
    ("get_order", {"order_id": "ORD-1"}, ok(lambda r, w: r["total"] == 9.99 and r["items"][0]["price"] == 9.99)),
    ("get_order", {"order_id": "ORD-7"}, refused("no order")),
    ("cancel_order", {"order_id": "ORD-2"}, ok(lambda r, w: w["orders"]["ORD-2"]["status"] == "cancelled"
                                                and w["accounts"]["checking"]["balance"] == 10999
                                                and w["products"]["SKU-1"]["stock"] == 3)),
    ("cancel_order", {"order_id": "ORD-1"}, refused("only a placed order can be cancelled")),
    ("return_order", {"order_id": "ORD-1"}, ok(lambda r, w: r == {"ORD-1": "returned", "refunded": 9.99,
                                                                   "to": "checking"})),
    ("return_order", {"order_id": "ORD-2"}, refused("only a delivered order can be returned")),
    # bank
    ("list_accounts", {}, ok(lambda r, w: [a["balance"] for a in r["accounts"]] == [100.0, 500.0])),
    ("get_balance", {"account_id": "savings"}, ok(lambda r, w: r["balance"] == 500.0)),
    ("get_balance", {"account_id": "credit"}, refused("no account")),
    ("list_transactions", {"account_id": "checking", "month": "2025-02"}, ok(lambda r, w: r["total"] == 1)),
    ("list_transactions", {"account_id": "checking", "month": "Feb"}, refused("YYYY-MM")),
    ("list_transactions", {"account_id": "checking", "page": 2}, refused("page 2 does not exist")),
    ("search_transactions", {"query": "freshmart"}, ok(lambda r, w: r["transactions"][0]["amount"] == -4.5)),
    ("search_transactions", {"query": ""}, refused("query is empty")),
    ("transfer", {"from_account": "savings", "to_account": "checking", "amount": 12.5},
     ok(lambda r, w: r["balances"] == {"savings": 487.5, "checking": 112.5})),
    ("transfer", {"from_account": "checking", "to_account": "savings", "amount": 100.01},
     refused("insufficient funds")),
    ("transfer", {"from_account": "checking", "to_account": "checking", "amount": 1}, refused("the same account")),
    ("transfer", {"from_account": "checking", "to_account": "savings", "amount": 1.234},
     refused("more than two decimals")),
    ("transfer", {"from_account": "checking", "to_account": "savings", "amount": -5}, refused("must be more than 0")),
    ("transfer", {"from_account": "checking", "to_account": "savings", "amount": 1e300}, refused("too large")),
    ("list_payees", {}, ok(lambda r, w: r["payees"][0]["id"] == "P1")),
    ("add_payee", {"name": "Hartwell", "iban": "de89 3704 0044 0532 0130 00"},
     ok(lambda r, w: r["created"]["iban"] == "DE89370400440532013000")),
    ("add_payee", {"name": "Again", "iban": "DE11111111111111111111"}, refused("already saved as payee P1")),
    ("add_payee", {"name": "Bad", "iban": "12345"}, refused("not a valid IBAN")),
    ("pay", {"from_account": "checking", "payee_id": "P1", "amount": 40, "reference": "March"},
     ok(lambda r, w: r["balance"] == 60.0 and w["transactions"][r["transaction"]]["counterparty"] == "Voltra Power")),
    ("pay", {"from_account": "checking", "payee_id": "P9", "amount": 40, "reference": "x"}, refused("no payee")),
    ("pay", {"from_account": "checking", "payee_id": "P1", "amount": 40, "reference": " "},
     refused("needs a reference")),
    ("pay", {"from_account": "checking", "payee_id": "P1", "amount": 400, "reference": "x"},
     refused("insufficient funds")),
    # to-do
    ("list_projects", {}, ok(lambda r, w: r["projects"] == [{"name": "Home", "open": 1}])),
    ("list_todos", {"project": "Home"}, ok(lambda r, w: [t["id"] for t in r["todos"]] == ["td1"])),
    ("list_todos", {"project": "Home", "include_done": True}, ok(lambda r, w: len(r["todos"]) == 2)),
    ("list_todos", {"project": "Work"}, refused("no project named 'Work'")),
    ("search_todos", {"query": "gate"}, ok(lambda r, w: r["total"] == 1)),
    ("search_todos", {"query": ""}, refused("query is empty")),
    ("add_todo", {"project": "Home", "title": "Paint", "due": "2025-04-01"},
     ok(lambda r, w: r["created"]["done"] is False)),
    ("add_todo", {"project": "Home", "title": "Paint", "due": "April"}, refused("YYYY-MM-DD")),
    ("add_todo", {"project": "Home", "title": " "}, refused("needs a title")),
    ("complete_todo", {"todo_id": "td1"}, ok(lambda r, w: w["todos"]["td1"]["done"] is True)),
    ("complete_todo", {"todo_id": "td2"}, refused("already done")),
    ("update_todo", {"todo_id": "td1", "due": "2025-05-01"}, ok(lambda r, w: w["todos"]["td1"]["due"] == "2025-05-01")),
    ("update_todo", {"todo_id": "td1"}, refused("nothing to update")),
    ("update_todo", {"todo_id": "td1", "due": "soon"}, refused("YYYY-MM-DD")),
    ("delete_todo", {"todo_id": "td2"}, ok(lambda r, w: "td2" not in w["todos"])),
    ("delete_todo", {"todo_id": "td9"}, refused("no to-do")),
    # chat
    ("list_channels", {}, ok(lambda r, w: r["channels"][0]["name"] == "#general")),
    ("read_channel", {"channel": "#general"}, ok(lambda r, w: r["messages"][0]["text"] == "Lunch at noon?")),
    ("read_channel", {"channel": "#sales"}, refused("no channel #sales")),
    ("read_channel", {"channel": "general", "page": 2}, refused("page 2 does not exist")),
    ("search_messages", {"query": "lunch bob"}, ok(lambda r, w: r["results"][0]["channel"] == "#general")),
    ("search_messages", {"query": "lunch", "channel": "#x"}, refused("no channel")),
    ("post_message", {"channel": "general", "text": "On my way"},
     ok(lambda r, w: w["messages"][r["posted"]]["author"] == "Ann Lee")),
    ("post_message", {"channel": "general", "text": " "}, refused("the message is empty")),
]


def _changes(before: dict, after: dict) -> set:
    """Every (collection, key) whose record differs between two worlds (None: the cart)."""
    out = {("cart", None)} if before["cart"] != after["cart"] else set()
    for c in ID_COLLECTIONS + KEYED:
        out |= {(c, k) for k in before[c].keys() | after[c].keys() if before[c].get(k) != after[c].get(k)}
    return out


def test_every_tool_has_rows():
    assert {row[0] for row in ROWS} == set(registry()) and len(registry()) >= 40


@pytest.mark.parametrize("name,arguments,expect", ROWS, ids=[f"{r[0]}-{i}" for i, r in enumerate(ROWS)])
def test_tool_rule(name, arguments, expect):
    tool = registry()[name].tool
    assert tool.check(arguments) == "" and fits_schema(tool.parameters, arguments)  # a rule, not a schema error
    world = small_world()
    before = copy.deepcopy(world)
    kind, check = expect
    if kind == "refused":
        with pytest.raises(WorkspaceError, match=check):
            call(world, name, arguments)
        assert world == before
        return
    result = call(world, name, arguments)
    assert check(result, world), result
    journal = {("cart", None) if c == "cart" else (c, k) for c, k in world["journal"]}
    assert _changes(before, world) <= journal
    assert (world["clock"] > before["clock"]) == bool(journal)  # each change advances the clock


def test_integral_numbers_count_as_integers():
    """jsonschema accepts 2.0 for an integer; the tools then count with 2."""
    world = small_world()
    assert registry()["add_to_cart"].tool.check({"sku": "SKU-1", "quantity": 2.0}) == ""
    call(world, "add_to_cart", {"sku": "SKU-1", "quantity": 2.0})
    assert type(world["cart"]["items"]["SKU-1"]) is int
    assert call(world, "list_emails", {"page": 1.0})["page"] == 1


def test_cart_coupon_checkout_and_refunds():
    w = small_world()
    call(w, "add_to_cart", {"sku": "SKU-1", "quantity": 2})
    assert call(w, "apply_coupon", {"code": "OK10"})["total"] == 17.98  # 19.98 - 2.00 (10 %, rounded to the cent)
    with pytest.raises(WorkspaceError, match="needs a cart subtotal of at least 1000.0 EUR"):
        call(w, "apply_coupon", {"code": "BIG20"})
    w["accounts"]["checking"]["balance"] = 100
    with pytest.raises(WorkspaceError, match="insufficient funds: checking holds 1.0 EUR, the order needs 17.98 EUR"):
        call(w, "checkout", {"account_id": "checking"})
    w["accounts"]["checking"]["balance"] = 10000
    order = call(w, "checkout", {"account_id": "checking"})
    assert (order["total"], order["coupon"], order["status"]) == (17.98, "OK10", "placed")
    assert w["cart"] == {"items": {}, "coupon": ""} and w["products"]["SKU-1"]["stock"] == 0
    assert w["accounts"]["checking"]["balance"] == 10000 - 1798
    payment = next(t for t in w["transactions"].values() if t["reference"] == order["id"])
    assert (payment["amount"], payment["counterparty"], payment["date"]) == (-1798, "Shop", "2025-03-14")
    call(w, "cancel_order", {"order_id": order["id"]})
    assert w["accounts"]["checking"]["balance"] == 10000 and w["products"]["SKU-1"]["stock"] == 2


def test_random_calls_only_ever_refuse_with_a_reason():
    """Thousands of right-typed random calls with words from the world (real ids, paths, addresses): a tool
    answers or raises WorkspaceError, nothing else; a refusal changes nothing."""
    world = build_world(3)
    words = (list(world["emails"])[:8] + list(world["files"])[:8] + list(world["events"])[:5]
             + list(world["products"])[:5] + [c["email"] for c in world["contacts"].values()][:4]
             + ["checking", "savings", "P101", "ORD-3101", "#team", "Home", "2025-03-14", "10:00", "inbox", "x"])
    tools = [spec.tool for spec in registry().values()]
    rng = np.random.default_rng(0)
    for _ in range(1500):
        name, arguments = _parse(random_call(tools, rng, words=words))
        if not fits_schema(registry()[name].tool.parameters, arguments):
            continue
        before = fresh(world)
        try:
            call(world, name, arguments)
        except WorkspaceError:
            assert world == before


def _parse(text: str):
    parsed = parse_action(text).calls[0]
    return parsed.name, parsed.arguments


def test_fast_argument_check_never_accepts_what_jsonschema_rejects():
    rng = np.random.default_rng(1)
    tools = [spec.tool for spec in registry().values()]
    accepted = 0
    for _ in range(3000):
        name, arguments = _parse(random_call(tools, rng, optional=0.6))
        if rng.random() < 0.3:  # a wrong type or an unknown argument
            key, value = ["page", "query", "amount", "zzz"][rng.integers(4)], [True, "2", 1.5, [1]][rng.integers(4)]
            arguments = {**arguments, key: value}
        elif arguments and rng.random() < 0.2:  # a missing one
            arguments.pop(sorted(arguments)[0])
        tool = registry()[name].tool
        if fits_schema(tool.parameters, arguments):
            accepted += 1
            assert tool.check(arguments) == "", (name, arguments)
    assert accepted > 1000
