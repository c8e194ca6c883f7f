"""Sub-goals on mail, files, calendar, contacts and notes, and the questions about them (see `workspace_plan`)."""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import date, timedelta

from magic_envs.tool_execution import workspace_vocab as V
from magic_envs.tool_execution.workspace_office import parent
from magic_envs.tool_execution.workspace_plan import (Draft, first_name, free_slot, goal, hhmm, planted_time, slug,
                                                      weekday)
from magic_envs.tool_execution.workspace_tools import matches
from magic_envs.tool_execution.workspace_world import email


def pick_contact(d: Draft, *exclude):
    """An unused contact, now marked used (None when every contact is taken)."""
    free = [c for c in d.world["contacts"].values() if ("contact", c["id"]) not in d.used and c["id"] not in exclude]
    if not free:
        return None
    chosen = d.r.choice(free)
    d.used.add(("contact", chosen["id"]))
    return chosen


def mail_to_me(d: Draft, sender: dict, subject: str, body: str, attachments=()) -> str:
    key = d.key("m")
    d.plant("emails", key, email(key, "inbox", sender["email"], sender["name"], [d.world["user"]["email"]], subject,
                                 body, planted_time(d.world, d.r), attachments))
    return key


@goal("task", weight=1.5, repeat=True)
def schedule_meeting(d: Draft):
    """Book the earliest free slot on a day with a contact, then tell them by mail."""
    w, r = d.world, d.r
    minutes = r.choice((30, 60))
    slot = free_slot(w, r, 1, 10, minutes)
    if slot is None or not d.fits(4) or (c := pick_contact(d)) is None:
        return None
    (day, start), first, place = slot, c["name"].split()[0], r.choice(V.LOCATIONS)
    title = f"{r.choice(V.TOPICS).capitalize()} with {first}"
    body = f"Hi {first}, I booked '{title}' on {day} at {hhmm(start)} in {place}. See you there! {first_name(w)}"
    d.run("search_contacts", {"query": c["name"]})
    d.run("list_events", {"start_date": day})
    d.run("create_event", {"title": title, "date": day, "start": hhmm(start), "end": hhmm(start + minutes),
                           "location": place, "attendees": [c["email"]]})
    d.run("send_email", {"to": [c["email"]], "subject": title, "body": body})
    return {"text": f"Book a {minutes}-minute meeting '{title}' with {c['name']} on {weekday(day)} in {place}, at the "
                    "earliest time from 09:00 (starting on the hour or half hour) at which my calendar is free, with "
                    f"{first} as the only attendee. Then e-mail {first} with the subject '{title}' and exactly this "
                    f"text: `Hi {first}, I booked '{title}' on {day} at <start time, HH:MM> in {place}. See you "
                    f"there! {first_name(w)}`."}


@goal("task")
def file_scans(d: Draft):
    """Find the scans of one issuer by content and move them into a new folder."""
    w, r = d.world, d.r
    company = r.choice(V.COMPANIES)[0]
    scans = sorted(p for p, e in w["files"].items() if parent(p) == "/downloads" and e["type"] == "file"
                   and matches(company, p, e["content"]))
    extra = max(0, r.randrange(2, 5) - len(scans))
    folder = f"/documents/{slug(company)}"
    if len(scans) > 4 or folder in w["files"] or not d.fits(2 + len(scans) + extra):
        return None
    for _ in range(extra):
        path = f"/downloads/scan_{d.key('')}.txt"
        topic = r.choice(V.FILE_TOPICS)
        d.plant("files", path, {"type": "file", "time": planted_time(w, r), "content": f"Scanned document ({topic})\n"
                                f"Issuer: {company}\nReference: {topic[:3].upper()}-{r.randrange(10**5)}\nPages: 1\n"})
        scans.append(path)
    d.run("search_files", {"query": company, "folder": "/downloads"})
    d.run("create_folder", {"path": folder})
    for path in sorted(scans):
        d.run("move_file", {"path": path, "destination": folder})
    return {"text": f"Move every file in /downloads that was issued by {company} (the file's text names its issuer) "
                    f"into a new folder {folder}."}


@goal("task", repeat=True)
def update_phone(d: Draft):
    """Copy a new phone number from an e-mail onto a contact card."""
    w, r = d.world, d.r
    if not d.fits(4) or (c := pick_contact(d)) is None:
        return None
    phone = f"+1 555 {r.randrange(100, 1000)} {r.randrange(1000, 10000)}"
    mail = mail_to_me(d, c, "New phone number", f"Hi {first_name(w)},\n\nquick note: my new mobile number is {phone}. "
                       f"The old one stops working next week.\n\nCheers,\n{c['name'].split()[0]}\n")
    d.run("search_emails", {"query": f"{c['name']} phone"})
    d.run("read_email", {"email_id": mail})
    d.run("search_contacts", {"query": c["name"]})
    d.run("update_contact", {"contact_id": c["id"], "phone": phone})
    return {"text": f"{c['name']} e-mailed me a new phone number; put it on their contact card instead of the old one."}


def _inbox_by_sender(world: dict) -> dict[str, list[str]]:
    found = defaultdict(list)
    for m in sorted(world["emails"].values(), key=lambda m: (m["time"], m["id"]), reverse=True):
        if m["folder"] == "inbox":
            found[m["from"]].append(m["id"])
    return found


@goal("task", repeat=True)
def mail_cleanup(d: Draft):
    """Delete every inbox e-mail of one newsletter."""
    w, r = d.world, d.r
    inbox = _inbox_by_sender(w)
    choices = [(t, a) for t, a, _ in V.NEWSLETTERS if 2 <= len(inbox[a]) <= 4 and ("sender", a) not in d.used]
    if not choices:
        return None
    title, address = r.choice(choices)
    if not d.fits(1 + len(inbox[address])):
        return None
    d.used.add(("sender", address))
    d.run("search_emails", {"query": address, "folder": "inbox"})
    for mail in inbox[address]:
        d.run("delete_email", {"email_id": mail})
    return {"text": f"Delete every e-mail from {title} ({address}) that is in my inbox."}


@goal("task")
def notes_index(d: Draft):
    """Write a note listing the titles of every note with a tag."""
    w, r = d.world, d.r
    tags = Counter(t for n in w["notes"].values() for t in n["tags"])
    choices = sorted(t for t, k in tags.items() if 2 <= k <= 10 and t != "index")
    if not choices or not d.fits(2):
        return None
    tag = r.choice(choices)
    title = f"Index of {tag} notes"
    d.run("list_notes", {"tag": tag})
    d.run("create_note", {"title": title, "tags": ["index"], "body": "\n".join(
        sorted(n["title"] for n in w["notes"].values() if tag in n["tags"]))})
    return {"text": f"Create a note titled '{title}', tagged 'index', whose text lists the titles of all my notes "
                    f"tagged '{tag}', one per line, in alphabetical order."}


@goal("task", repeat=True)
def reschedule_event(d: Draft):
    """Move an event to another day at the same time and tell its attendees."""
    w, r = d.world, d.r
    today = date.fromisoformat(w["today"])
    same_day = Counter((e["date"], e["title"]) for e in w["events"].values())
    choices = sorted((e["id"] for e in w["events"].values() if e["attendees"] and ("event", e["id"]) not in d.used
                      and 1 <= (date.fromisoformat(e["date"]) - today).days <= 14 and
                      same_day[(e["date"], e["title"])] == 1))
    if not choices or not d.fits(3):
        return None
    e = w["events"][r.choice(choices)]
    later = [(date.fromisoformat(e["date"]) + timedelta(days=k)).isoformat() for k in range(1, 8)]
    free = [day for day in later if date.fromisoformat(day).weekday() < 5 and all(
        o["date"] != day or o["end"] <= e["start"] or e["end"] <= o["start"] for o in w["events"].values())]
    if not free:
        return None
    d.used.add(("event", e["id"]))
    old, new, title, span = e["date"], r.choice(free), e["title"], f"{e['start']}-{e['end']}"
    d.run("search_events", {"query": title})
    d.run("update_event", {"event_id": e["id"], "date": new})
    d.run("send_email", {"to": list(e["attendees"]), "subject": f"Moved: {title}",
                         "body": f"Hi all, {title} moves from {old} to {new}, same time ({span})."})
    return {"text": f"Move my '{title}' event of {weekday(old)} to {weekday(new)}, at the same time. Then send one "
                    f"e-mail to all of its attendees with the subject 'Moved: {title}' and exactly this text: `Hi all, "
                    f"{title} moves from {old} to {new}, same time (<start>-<end>).`"}


@goal("task", repeat=True)
def save_attachment(d: Draft):
    """Find a contact's e-mail by topic and save its attachment, creating the folder after the refusal."""
    w, r = d.world, d.r
    topic = r.choice(V.TOPICS)
    missing = r.random() < 0.5
    folder = f"/projects/{slug(topic)}-shared" if missing else "/work"
    version = r.randrange(2, 10)
    name = f"{slug(topic)}-v{version}.txt"
    if folder in w["files"] or f"{folder}/{name}" in w["files"] or not d.fits(3 + 2 * missing) \
            or (c := pick_contact(d)) is None:
        return None
    content = f"{topic.title()}, version {version}\n\n" + "".join(
        f"{i + 1}. {r.choice(V.TOPICS)}: {r.choice(('on track', 'late', 'done'))}\n" for i in range(r.randrange(4, 9)))
    mail = mail_to_me(d, c, f"{topic.capitalize()} document", f"Hi {first_name(w)},\n\nattached is the latest {topic} "
                       f"document, as promised.\n\n{c['name'].split()[0]}\n", [{"name": name, "content": content}])
    d.run("search_emails", {"query": f"{c['name']} {topic} document"})
    d.run("read_email", {"email_id": mail})
    step = {"email_id": mail, "attachment": name, "folder": folder}
    if missing:
        d.run("save_attachment", step, fails=True)
        d.run("create_folder", {"path": folder})
    d.run("save_attachment", step)
    return {"text": f"{c['name']} e-mailed me the {topic} document as an attachment today. Save the attachment into "
                    f"the folder {folder}, under its own file name" + (" (create the folder if it does not exist)."
                                                                       if missing else ".")}


@goal("task", repeat=True)
def forward_mail(d: Draft):
    """Forward a named e-mail to a contact, with a note."""
    w, r = d.world, d.r
    by_contact = {c["email"]: c for c in w["contacts"].values()}
    pairs = Counter((m["subject"], m["from"]) for m in w["emails"].values())
    choices = sorted(m["id"] for m in w["emails"].values() if m["folder"] in ("inbox", "archive")
                     and m["from"] in by_contact and pairs[(m["subject"], m["from"])] == 1
                     and ("email", m["id"]) not in d.used and ("contact", by_contact[m["from"]]["id"]) not in d.used)
    if not choices or not d.fits(3):
        return None
    mail = w["emails"][r.choice(choices)]
    sender = by_contact[mail["from"]]
    d.used.add(("email", mail["id"]))
    if (c := pick_contact(d, sender["id"])) is None:
        return None
    note = f"FYI {c['name'].split()[0]}, see below."
    d.run("search_emails", {"query": f"{mail['subject']} {sender['name']}"})
    d.run("search_contacts", {"query": c["name"]})
    d.run("forward_email", {"email_id": mail["id"], "to": [c["email"]], "note": note})
    return {"text": f"Forward the e-mail '{mail['subject']}' that {sender['name']} sent me to {c['name']}, with the "
                    f"note `{note}`."}


@goal("task", repeat=True)
def accept_invitation(d: Draft):
    """Turn an e-mailed invitation into a calendar event and accept it."""
    w, r = d.world, d.r
    minutes = r.choice((60, 90, 120))
    slot = free_slot(w, r, 3, 20, minutes)
    if slot is None or not d.fits(4) or (c := pick_contact(d)) is None:
        return None
    (day, start), end = slot, hhmm(slot[1] + minutes)
    kind = r.choice(("Launch party", "Workshop", "Farewell drinks", "Demo day", "Strategy offsite"))
    name = f"{kind} at {c['company']}"
    place = f"{c['company']} office, room {r.randrange(1, 9)}{r.choice('ABC')}"
    mail = mail_to_me(d, c, f"Invitation: {name}", f"Hi {first_name(w)},\n\nyou are invited to the {name} on {day}, "
                       f"from {hhmm(start)} to {end}, at {place}.\nLet me know if you can make it.\n\n"
                       f"{c['name'].split()[0]}\n")
    d.run("search_emails", {"query": f"invitation {c['name']}"})
    d.run("read_email", {"email_id": mail})
    d.run("create_event", {"title": name, "date": day, "start": hhmm(start), "end": end, "location": place,
                           "attendees": [c["email"]]})
    d.run("reply_email", {"email_id": mail, "body": "Thanks, I will be there."})
    return {"text": f"{c['name']} invited me by e-mail to the {name}. Add it to my calendar titled '{name}', with the "
                    f"date, times and location given in the invitation and {c['name']} as the only attendee; then "
                    "reply to the invitation with exactly: `Thanks, I will be there.`"}


def send_file(d: Draft, path: str, contact: dict, subject: str) -> None:
    """Read a file, look the contact up and mail them the file's text (three steps)."""
    d.run("read_file", {"path": path})
    d.run("search_contacts", {"query": contact["name"]})
    d.run("send_email", {"to": [contact["email"]], "subject": subject, "body": d.world["files"][path]["content"]})


def shareable(d: Draft) -> list[str]:
    return sorted(p for p, e in d.world["files"].items() if e["type"] == "file" and ("file", p) not in d.used
                  and p.startswith(("/recipes/", "/work/", "/documents/letters/", "/finance/budget")))


@goal("task", repeat=True)
def share_file(d: Draft):
    """Send a file's exact text to a contact (a long body copied from a long observation)."""
    r = d.r
    files = shareable(d)
    if not files or not d.fits(3) or (c := pick_contact(d)) is None:
        return None
    path = r.choice(files)
    d.used.add(("file", path))
    subject = f"File: {path.rsplit('/', 1)[1]}"
    send_file(d, path, c, subject)
    return {"text": f"E-mail the file {path} to {c['name']} with the subject '{subject}'; the body must be exactly "
                    "the file's text."}


@goal("question", weight=0.7)
def mail_count_question(d: Draft):
    w, r = d.world, d.r
    inbox = _inbox_by_sender(w)
    choices = [(t, a) for t, a, _ in V.NEWSLETTERS if inbox[a] and ("sender", a) not in d.used]
    if not choices or not d.fits(1):
        return None
    title, address = r.choice(choices)
    d.run("search_emails", {"query": address, "folder": "inbox"})
    return {"text": f"how many e-mails from {title} ({address}) are in my inbox now?",
            "facts": [{"kind": "count", "value": len(inbox[address])}]}


@goal("question", weight=0.5)
def wifi_question(d: Draft):
    w = d.world
    entry = w["files"].get("/documents/network.txt")
    if entry is None or not d.fits(1):
        return None
    password = next(line.split(": ", 1)[1] for line in entry["content"].split("\n") if line.startswith("Wi-Fi"))
    d.run("search_files", {"query": "Wi-Fi password"})
    return {"text": "what is my home Wi-Fi password? It is written in one of my files.",
            "facts": [{"kind": "text", "value": password}]}


@goal("question", weight=0.7)
def next_event_question(d: Draft):
    w, r = d.world, d.r
    upcoming = sorted((e for e in w["events"].values() if e["date"] > w["today"] and e["title"] in V.EVENT_TITLES),
                      key=lambda e: (e["date"], e["start"]))
    first = {}
    for e in upcoming:
        first.setdefault(e["title"], e)
    if not first or not d.fits(1):
        return None
    e = first[r.choice(sorted(first))]
    d.run("search_events", {"query": e["title"]})
    return {"text": f"when is my next '{e['title']}' after today? Give its date (YYYY-MM-DD) and start time (HH:MM).",
            "facts": [{"kind": "text", "value": e["date"]}, {"kind": "text", "value": e["start"]}]}
