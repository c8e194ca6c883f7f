"""The initial Workspace world, built from one integer seed (see `workspace_state` for its shape).

A lived-in workspace: about 50 e-mails (inbox, archive, sent) with newsletters, notifications and attachments,
45 files in nested folders, a month of calendar events, 30 contacts, 20 notes, a 48-product shop with past
orders and coupons, checking and savings accounts with three months of transactions, and the apps only `ood`
tasks use (to-do projects, team chat). Tasks add the records they need on top (`plants`).

Built with `random.Random(seed)`: the seed comes from the env's RNG, and Python's generator draws the
thousands of small choices a world needs far faster than numpy's.

    >>> w = build_world(1)
    >>> len(w["emails"]) >= 40 and len(w["files"]) >= 40 and w == build_world(1)
    True
"""

from __future__ import annotations

import random
from datetime import date, timedelta

from magic_envs.tool_execution import workspace_vocab as V
from magic_envs.tool_execution.workspace_state import ID_COLLECTIONS, KEYED

START = 9 * 60  # the clock starts at 09:00 of `today`


def iban(r: random.Random) -> str:
    return "DE" + "".join(str(r.randrange(10)) for _ in range(20))


def stamp(day: date, minute: int) -> str:
    return f"{day.isoformat()} {minute // 60:02d}:{minute % 60:02d}"


def build_world(seed: int) -> dict:
    r = random.Random(seed)
    today = date(2025, 1, 13) + timedelta(days=r.randrange(320))
    first, last = r.choice(V.FIRST), r.choice(V.LAST)
    w = {"today": today.isoformat(), "clock": START, "seq": 5000, "journal": [],
         "user": {"name": f"{first} {last}", "email": f"{first}.{last}@example.com".lower()},
         "cart": {"items": {}, "coupon": ""}, **{c: {} for c in ID_COLLECTIONS + KEYED}}
    _contacts(w, r)
    _files(w, r, today)
    _mail(w, r, today)
    _calendar(w, r, today)
    _notes(w, r, today)
    _shop(w, r, today)
    _bank(w, r, today)
    _ood_apps(w, r, today)
    return w


def _contacts(w, r):
    names = r.sample([(f, la) for f in V.FIRST for la in V.LAST], 30)
    user_first = w["user"]["name"].split()[0]
    for i, (first, last) in enumerate(n for n in names if n[0] != user_first):
        company, domain = r.choice(V.COMPANIES)
        cid = f"c{101 + i}"
        w["contacts"][cid] = {"id": cid, "name": f"{first} {last}", "email": f"{first}.{last}@{domain}".lower(),
                              "phone": f"+1 555 {r.randrange(100, 1000)} {r.randrange(1000, 10000)}",
                              "company": company}


def _put_file(w, path, content, day, minute=600):
    w["files"][path] = {"type": "file", "content": content, "time": stamp(day, minute)}


def _files(w, r, today):
    old = today - timedelta(days=200)
    for folder in ("/documents", "/documents/letters", "/downloads", "/finance", "/finance/2024", "/photos",
                   "/projects", "/recipes", "/work"):
        w["files"][folder] = {"type": "folder", "time": stamp(old, 540)}
    wifi = f"{r.choice(V.LAST).lower()}-{r.randrange(1000, 10000)}-{r.choice(('sun', 'oak', 'sky', 'fox'))}"
    _put_file(w, "/documents/network.txt", f"Home network\nSSID: Casa-{r.randrange(100, 1000)}\n"
              f"Wi-Fi password: {wifi}\nRouter admin: http://192.168.1.1\n", old)
    _put_file(w, "/documents/cv.txt", f"{w['user']['name']}\nCurriculum vitae\n\nExperience\n" + "".join(
        f"- {2012 + 2 * i}-{2014 + 2 * i}: {r.choice(V.COMPANIES)[0]}, {r.choice(V.TOPICS)}\n" for i in range(5)), old)
    for i, contact in enumerate(r.sample(list(w["contacts"].values()), 3)):
        _put_file(w, f"/documents/letters/letter-{i + 1}.txt", f"Dear {contact['name']},\n\nThank you for the "
                  f"{r.choice(V.TOPICS)}. I will follow up next week.\n\nKind regards,\n{w['user']['name']}\n", old)
    for i in range(r.randrange(6, 10)):
        topic = r.choice(V.FILE_TOPICS)
        vendor = r.choice(V.COMPANIES)[0]
        _put_file(w, f"/downloads/scan_{1000 + 7 * i + r.randrange(7)}.txt",
                  f"Scanned document ({topic})\nIssuer: {vendor}\nReference: {topic[:3].upper()}-{r.randrange(10**5)}"
                  f"\nPages: {r.randrange(1, 6)}\n", today - timedelta(days=r.randrange(1, 60)))
    _put_file(w, "/finance/budget.csv", "category,monthly\n" + "".join(
        f"{c},{r.randrange(50, 900)}\n" for c in ("rent", "groceries", "transport", "leisure", "savings")), old)
    _put_file(w, "/finance/2024/tax-summary.txt", f"Tax year 2024\nIncome: {r.randrange(40, 90)} 000 EUR\n"
              f"Refund expected: {r.randrange(100, 2000)} EUR\n", old)
    if r.random() < 0.5:  # the current year's folder exists in only half of the worlds
        w["files"][f"/finance/{today.year}"] = {"type": "folder", "time": stamp(old, 540)}
    for name, ingredients in V.RECIPES:
        _put_file(w, f"/recipes/{name.lower().replace(' ', '-')}.txt", f"{name}\n\nIngredients:\n" +
                  "".join(f"- {x}\n" for x in ingredients) + f"\nCook for {r.randrange(10, 60)} minutes.\n", old)
    for i in range(r.randrange(3, 6)):
        _put_file(w, f"/photos/IMG_{2000 + 13 * i}.jpg", f"[JPEG image, {r.choice((3024, 4032))}x3024]", old)
    for topic in r.sample(V.TOPICS, 3):
        folder = "/projects/" + topic.replace(" ", "-")
        w["files"][folder] = {"type": "folder", "time": stamp(old, 540)}
        _put_file(w, f"{folder}/README.md", f"# {topic.title()}\n\nOwner: {w['user']['name']}\n"
                  f"Status: {r.choice(('planning', 'in progress', 'blocked', 'review'))}\n", old)
        _put_file(w, f"{folder}/todo.txt", "".join(f"[{' x'[r.random() < 0.5]}] {t}\n"
                                                  for t in r.sample(V.TODO_TITLES, 4)), old)
    for topic in r.sample(V.TOPICS, 3):
        lines = [f"Meeting minutes: {topic}", ""] + [
            f"{i + 1}. {r.choice(list(w['contacts'].values()))['name']} to {r.choice(('draft', 'review', 'send'))} "
            f"the {r.choice(V.TOPICS)}." for i in range(r.randrange(6, 14))]
        _put_file(w, f"/work/minutes-{topic.replace(' ', '-')}.txt", "\n".join(lines) + "\n", old)


def email(eid, folder, sender, name, to, subject, body, time, attachments=(), in_reply_to="") -> dict:
    return {"id": eid, "folder": folder, "from": sender, "from_name": name, "to": list(to), "cc": [],
            "subject": subject, "body": body, "time": time, "in_reply_to": in_reply_to,
            "attachments": [dict(a) for a in attachments]}


def _mail(w, r, today):
    me, contacts, n = w["user"]["email"], list(w["contacts"].values()), 0

    def when():
        return stamp(today - timedelta(days=r.randrange(1, 40)), r.randrange(7 * 60, 21 * 60))

    for _ in range(24):
        c, topic = r.choice(contacts), r.choice(V.TOPICS)
        subject = r.choice((f"Notes from the {topic} meeting", f"Question about the {topic}",
                            f"{topic.capitalize()} draft", f"Re: {topic}", "Lunch next week?"))
        body = (f"Hi {w['user']['name'].split()[0]},\n\n" + " ".join(r.sample((
            f"I went through the {topic} again.", "Could you have a look before Thursday?",
            f"{r.choice(contacts)['name']} agreed with the plan.", "The numbers look better than last month.",
            "Let me know what you think.", "I attached nothing this time, it is all in this mail."), 3)) +
            f"\n\nBest,\n{c['name'].split()[0]}\n")
        attach = [{"name": f"{topic.replace(' ', '-')}.txt", "content": f"{topic.title()}\n" + "".join(
            f"- point {i + 1}: {r.choice(V.TOPICS)}\n" for i in range(4))}] if r.random() < 0.2 else []
        n += 1
        w["emails"][f"m{100 + n}"] = email(f"m{100 + n}", r.choice(("inbox",) * 3 + ("archive",)), c["email"],
                                           c["name"], [me], subject, body, when(), attach)
    for title, sender, label in r.sample(V.NEWSLETTERS, 4):
        for k in range(r.randrange(2, 5)):
            n += 1
            w["emails"][f"m{100 + n}"] = email(
                f"m{100 + n}", "inbox", sender, title, [me], f"{label} #{r.randrange(10, 300)}: {r.choice(V.TOPICS)} "
                "and more", f"This week in {title}:\n" + "".join(f"* {r.choice(V.TOPICS).capitalize()}\n"
                                                                 for _ in range(5)) + "\nUnsubscribe any time.\n",
                when())
    for _ in range(6):
        n += 1
        vendor, sender, service = r.choice(V.VENDORS)
        w["emails"][f"m{100 + n}"] = email(f"m{100 + n}", "archive", sender, vendor, [me],
                                           f"Receipt for your {service}", "Thank you, we received your payment of "
                                           f"{r.randrange(40, 400)}.00 EUR.\n", when())
    for _ in range(8):
        c = r.choice(contacts)
        n += 1
        w["emails"][f"m{100 + n}"] = email(f"m{100 + n}", "sent", me, w["user"]["name"], [c["email"]],
                                           f"Re: {r.choice(V.TOPICS)}", f"Hi {c['name'].split()[0]},\n\nThanks, "
                                           f"sounds good.\n\n{w['user']['name']}\n", when())
    # newest first is how every listing shows mail; keep insertion order by time for stable pages
    w["emails"] = dict(sorted(w["emails"].items(), key=lambda kv: kv[1]["time"], reverse=True))




def _calendar(w, r, today):
    contacts, n = list(w["contacts"].values()), 0
    for offset in range(-7, 29):
        day = today + timedelta(days=offset)
        if day.weekday() >= 5 and r.random() < 0.7:
            continue
        taken = []
        for _ in range(r.randrange(0, 4)):
            start, length = r.randrange(16, 36) * 30, r.choice((30, 60, 60, 90))
            if start + length > 19 * 60 or any(start < e and s < start + length for s, e in taken):
                continue
            taken.append((start, start + length))
            n += 1
            w["events"][f"ev{100 + n}"] = {
                "id": f"ev{100 + n}", "title": r.choice(V.EVENT_TITLES), "date": day.isoformat(),
                "start": f"{start // 60:02d}:{start % 60:02d}",
                "end": f"{(start + length) // 60:02d}:{(start + length) % 60:02d}",
                "location": r.choice(V.LOCATIONS), "notes": "",
                "attendees": sorted(c["email"] for c in r.sample(contacts, r.randrange(0, 4)))}


def _notes(w, r, today):
    items = [(f"Recipe idea: {name}", "recipe", "Try with " + ", ".join(ing[:3]) + ".") for name, ing in V.RECIPES]
    items += [(f"Read: {b}", "books", f"Recommended by {r.choice(V.FIRST)}.") for b in r.sample(V.BOOKS, 5)]
    items += [(f"Trip to {c}", "travel", f"Best season: {r.choice(('spring', 'summer', 'autumn'))}.")
              for c in r.sample(V.CITIES, 4)]
    items += [(f"Idea: {t}", "work", "Raise at the next planning session.") for t in r.sample(V.TOPICS, 4)]
    items.append(("Purchases", "finance", "".join(f"Order: {r.randrange(5, 90)}.{r.randrange(100):02d} EUR\n"
                                                  for _ in range(3))))
    r.shuffle(items)
    for i, (title, tag, body) in enumerate(items):
        nid = f"n{101 + i}"
        w["notes"][nid] = {"id": nid, "title": title, "body": body, "tags": [tag],
                           "time": stamp(today - timedelta(days=r.randrange(2, 90)), 600)}


def _shop(w, r, today):
    skus = r.sample(range(10000, 99999), 60)
    for kind, category, brands, variants, (lo, hi) in V.PRODUCTS:
        combos = r.sample([(b, v) for b in brands for v in variants], min(4, len(brands) * len(variants)))
        prices = r.sample(range(lo // 10, hi // 10), len(combos))
        for (brand, variant), price in zip(combos, prices):
            sku = f"SKU-{skus.pop()}"
            w["products"][sku] = {"sku": sku, "name": f"{brand} {kind}, {variant}", "kind": kind, "category": category,
                                  "price": price * 10 + 9, "stock": r.choice((0, 3, 8, 12, 25, 40))}
    for code in V.COUPONS:
        w["coupons"][code] = {"code": code, "percent": int("".join(ch for ch in code if ch.isdigit())),
                              "min_total": r.choice((0, 2000, 5000)), "expired": r.random() < 0.35}
    products = list(w["products"].values())
    for i in range(5):
        picks = r.sample(products, r.randrange(1, 4))
        items = [{"sku": p["sku"], "name": p["name"], "quantity": r.randrange(1, 3), "price": p["price"]}
                 for p in picks]
        total = sum(x["quantity"] * x["price"] for x in items)
        oid = f"ORD-{3101 + i}"
        w["orders"][oid] = {"id": oid, "items": items, "subtotal": total, "discount": 0, "total": total, "coupon": "",
                            "account": "checking", "status": r.choice(("delivered", "delivered", "shipped")),
                            "time": stamp(today - timedelta(days=r.randrange(5, 60)), 700)}


def _bank(w, r, today):
    w["accounts"]["checking"] = {"id": "checking", "name": "Everyday checking", "iban": iban(r),
                                 "balance": r.randrange(1800, 4200) * 100 + r.randrange(100)}
    w["accounts"]["savings"] = {"id": "savings", "name": "Savings", "iban": iban(r),
                                "balance": r.randrange(6000, 20000) * 100}
    for i, (name, _) in enumerate(V.PAYEES):
        w["payees"][f"P{101 + i}"] = {"id": f"P{101 + i}", "name": name, "iban": iban(r)}
    rows = []
    for back in range(90, 0, -1):
        day = today - timedelta(days=back)
        if day.day == 1:
            rows += [(day, "Salary " + r.choice(V.COMPANIES)[0], r.randrange(3000, 4000) * 100, "salary"),
                     (day, V.PAYEES[0][0], -r.randrange(900, 1400) * 100, "rent")]
        for _ in range(r.choice((0, 1, 1, 2))):
            rows.append((day, r.choice(V.MERCHANTS), -r.randrange(250, 9000), "card payment"))
    for i, (day, party, amount, reference) in enumerate(rows):
        tid = f"T{1001 + i}"
        w["transactions"][tid] = {"id": tid, "account": "checking", "date": day.isoformat(), "amount": amount,
                                  "counterparty": party, "reference": reference, "time": stamp(day, 720)}
    w["transactions"] = dict(sorted(w["transactions"].items(), key=lambda kv: kv[1]["date"], reverse=True))


def _ood_apps(w, r, today):
    for name in V.PROJECTS:
        w["projects"][name] = {"name": name}
    for i, title in enumerate(r.sample(V.TODO_TITLES, 12)):
        tid = f"td{101 + i}"
        w["todos"][tid] = {"id": tid, "project": r.choice(V.PROJECTS), "title": title, "done": r.random() < 0.3,
                           "due": (today + timedelta(days=r.randrange(-5, 30))).isoformat(), "notes": ""}
    contacts = list(w["contacts"].values())
    for name in V.CHANNELS:
        w["channels"][name] = {"name": name, "topic": f"All things {name}"}
    for i in range(50):
        mid = f"cm{101 + i}"
        w["messages"][mid] = {"id": mid, "channel": r.choice(V.CHANNELS), "author": r.choice(contacts)["name"],
                              "text": r.choice(V.CHAT_LINES),
                              "time": stamp(today - timedelta(days=r.randrange(0, 14)), r.randrange(480, 1140))}
    w["messages"] = dict(sorted(w["messages"].items(), key=lambda kv: kv[1]["time"], reverse=True))
