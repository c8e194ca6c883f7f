"""Workspace tools of the calendar, the contacts and the notes (registered in `workspace_tools`).

Calendar events never overlap: creating or moving an event onto a taken time is refused with the conflicting
event named. Contacts have unique e-mail addresses, notes unique titles.
"""

from __future__ import annotations

from datetime import date

from magic_envs.tool_execution.workspace_state import WorkspaceError, new_id
from magic_envs.tool_execution.workspace_tools import (as_set, changed, check_date, check_emails, check_time, find,
                                                       integer, matches, needs_change, page_of, remove, text, texts,
                                                       tool)


# ---- calendar -----------------------------------------------------------------------------------------------
def _ordered(events) -> list[dict]:
    return sorted(events, key=lambda e: (e["date"], e["start"], e["id"]))


def _check_slot(world, day, start, end, ignore=""):
    check_date(day)
    if check_time(end, "end") <= check_time(start, "start"):
        raise WorkspaceError(f"the event must end after it starts ({start}-{end})")
    for e in world["events"].values():
        if e["date"] == day and e["id"] != ignore and e["start"] < end and start < e["end"]:
            raise WorkspaceError(f"{day} {start}-{end} conflicts with event {e['id']} '{e['title']}' "
                                 f"{e['start']}-{e['end']}")


@tool("calendar", "List the events between two dates (inclusive, at most 31 days), in time order.", ("start_date",),
      start_date=text("First day, YYYY-MM-DD."), end_date=text("Last day, YYYY-MM-DD (default: start_date)."))
def list_events(world, start_date, end_date=""):
    first, last = check_date(start_date, "start_date"), check_date(end_date or start_date, "end_date")
    span = (date.fromisoformat(last) - date.fromisoformat(first)).days
    if not 0 <= span <= 30:
        raise WorkspaceError("end_date must be on or after start_date and at most 30 days later")
    return {"events": _ordered(e for e in world["events"].values() if first <= e["date"] <= last)}


@tool("calendar", "Search events (title, location, notes, attendees) for words.", ("query",),
      query=text("Words that must all occur."))
def search_events(world, query):
    found = _ordered(e for e in world["events"].values()
                     if matches(query, e["title"], e["location"], e["notes"], " ".join(e["attendees"])))
    return {"query": query, "total": len(found), "results": found[:20]}


@tool("calendar", "Get one event.", ("event_id",), event_id=text("The event id, such as 'ev123'."))
def get_event(world, event_id):
    return find(world, "events", event_id, "event")


@tool("calendar", "Create an event; it must not overlap another event.", ("title", "date", "start", "end"),
      title=text("Title."), date=text("Day, YYYY-MM-DD."), start=text("Start time, HH:MM (24 h)."),
      end=text("End time, HH:MM (24 h)."), location=text("Where (default none)."),
      attendees=texts("E-mail addresses of the people invited (default none)."), notes=text("Notes (default none)."))
def create_event(world, title, date, start, end, location="", attendees=(), notes=""):
    _check_slot(world, date, start, end)
    people = check_emails(list(attendees), "attendees", allow_empty=True)
    eid = new_id(world, "ev")
    changed(world, "events", eid)
    world["events"][eid] = {"id": eid, "title": title, "date": date, "start": start, "end": end, "location": location,
                            "attendees": people, "notes": notes}
    return {"created": world["events"][eid]}


@tool("calendar", "Change fields of an event (only those given); the new time must not overlap another event.",
      ("event_id",), event_id=text("The event id."), title=text("New title."), date=text("New day, YYYY-MM-DD."),
      start=text("New start, HH:MM."), end=text("New end, HH:MM."), location=text("New location."),
      attendees=texts("New list of attendee e-mail addresses."), notes=text("New notes."))
def update_event(world, event_id, title=None, date=None, start=None, end=None, location=None, attendees=None,
                 notes=None):
    event = find(world, "events", event_id, "event")
    new = needs_change({"title": title, "date": date, "start": start, "end": end, "location": location,
                        "attendees": attendees, "notes": notes})
    after = event | new
    _check_slot(world, after["date"], after["start"], after["end"], ignore=event_id)
    if attendees is not None:
        new["attendees"] = check_emails(attendees, "attendees", allow_empty=True)
    event.update(new)
    changed(world, "events", event_id)
    return {"updated": event}


@tool("calendar", "Delete an event.", ("event_id",), event_id=text("The event id."))
def delete_event(world, event_id):
    return remove(world, "events", event_id, "event")


@tool("calendar", "The free periods of a day between two times that last at least a given number of minutes.",
      ("date", "minutes"), date=text("Day, YYYY-MM-DD."), minutes=integer("Shortest useful length, in minutes."),
      earliest=text("Start of the working day, HH:MM (default 08:00)."),
      latest=text("End of the working day, HH:MM (default 18:00)."))
def find_free_slots(world, date, minutes, earliest="08:00", latest="18:00"):
    check_date(date)
    cursor, stop, free = check_time(earliest, "earliest"), check_time(latest, "latest"), []
    for e in _ordered(e for e in world["events"].values() if e["date"] == date):
        begin, end = check_time(e["start"]), check_time(e["end"])
        if begin - cursor >= minutes and cursor < stop:
            free.append((cursor, min(begin, stop)))
        cursor = max(cursor, end)
    if stop - cursor >= minutes:
        free.append((cursor, stop))
    clock = "{:02d}:{:02d}".format
    return {"date": date, "free": [{"start": clock(a // 60, a % 60), "end": clock(b // 60, b % 60)}
                                   for a, b in free if b - a >= minutes]}


# ---- contacts -----------------------------------------------------------------------------------------------
def _unique_email(world, email, ignore=""):
    check_emails([email], "email")
    owner = next((c for c in world["contacts"].values() if c["email"].lower() == email.lower() and c["id"] != ignore),
                 None)
    if owner:
        raise WorkspaceError(f"{email} already belongs to contact {owner['id']} ({owner['name']})")


@tool("contacts", "Search contacts (name, e-mail, phone, company) for words.", ("query",),
      query=text("Words that must all occur."))
def search_contacts(world, query):
    found = [c for c in world["contacts"].values() if matches(query, c["name"], c["email"], c["phone"], c["company"])]
    return {"query": query, "total": len(found), "results": sorted(found, key=lambda c: c["name"])[:20]}


@tool("contacts", "Get one contact.", ("contact_id",), contact_id=text("The contact id, such as 'c123'."))
def get_contact(world, contact_id):
    return find(world, "contacts", contact_id, "contact")


@tool("contacts", "Add a contact.", ("name", "email"), name=text("Full name."), email=text("E-mail address."),
      phone=text("Phone number (default none)."), company=text("Company (default none)."))
def add_contact(world, name, email, phone="", company=""):
    _unique_email(world, email)
    cid = new_id(world, "c")
    changed(world, "contacts", cid)
    world["contacts"][cid] = {"id": cid, "name": name, "email": email.lower(), "phone": phone, "company": company}
    return {"created": world["contacts"][cid]}


@tool("contacts", "Change fields of a contact (only those given).", ("contact_id",), contact_id=text("The contact id."),
      name=text("New name."), email=text("New e-mail address."), phone=text("New phone number."),
      company=text("New company."))
def update_contact(world, contact_id, name=None, email=None, phone=None, company=None):
    contact = find(world, "contacts", contact_id, "contact")
    new = needs_change({"name": name, "email": email, "phone": phone, "company": company})
    if email is not None:
        _unique_email(world, email, ignore=contact_id)
        new["email"] = email.lower()
    contact.update(new)
    changed(world, "contacts", contact_id)
    return {"updated": contact}


@tool("contacts", "Delete a contact.", ("contact_id",), contact_id=text("The contact id."))
def delete_contact(world, contact_id):
    return remove(world, "contacts", contact_id, "contact")


# ---- notes --------------------------------------------------------------------------------------------------
def _unique_title(world, title, ignore=""):
    if not title.strip():
        raise WorkspaceError("a note needs a title")
    same = next((n for n in world["notes"].values() if n["title"] == title and n["id"] != ignore), None)
    if same:
        raise WorkspaceError(f"a note titled {title!r} already exists ({same['id']})")


@tool("notes", "List notes (title, tags, last change), newest change first, ten a page.",
      tag=text("Only notes with this tag (default: all)."), page=integer("Page number, from 1."))
def list_notes(world, tag="", page=1):
    found = sorted((n for n in world["notes"].values() if not tag or tag in n["tags"]),
                   key=lambda n: (n["time"], n["id"]), reverse=True)
    rows, pages = page_of(found, page)
    return {"page": page, "pages": pages, "total": len(found),
            "notes": [{"id": n["id"], "title": n["title"], "tags": n["tags"], "modified": n["time"]} for n in rows]}


@tool("notes", "Search notes (title and text) for words.", ("query",), query=text("Words that must all occur."))
def search_notes(world, query):
    found = [{"id": n["id"], "title": n["title"], "tags": n["tags"]} for n in world["notes"].values()
             if matches(query, n["title"], n["body"])]
    return {"query": query, "total": len(found), "results": found[:20]}


@tool("notes", "Read one note.", ("note_id",), note_id=text("The note id, such as 'n123'."))
def read_note(world, note_id):
    return find(world, "notes", note_id, "note")


@tool("notes", "Create a note (titles are unique).", ("title", "body"), title=text("Title."), body=text("Text."),
      tags=texts("Tags (default none)."))
def create_note(world, title, body, tags=()):
    _unique_title(world, title)
    nid = new_id(world, "n")
    world["notes"][nid] = {"id": nid, "title": title, "body": body, "tags": as_set(tags),
                           "time": changed(world, "notes", nid)}
    return {"created": nid, "title": title}


@tool("notes", "Change a note's title, text or tags (only those given).", ("note_id",), note_id=text("The note id."),
      title=text("New title."), body=text("New text (replaces the old)."), tags=texts("New tags."))
def update_note(world, note_id, title=None, body=None, tags=None):
    note = find(world, "notes", note_id, "note")
    new = needs_change({"title": title, "body": body, "tags": None if tags is None else as_set(tags)})
    if title is not None:
        _unique_title(world, title, ignore=note_id)
    note.update(new)
    note["time"] = changed(world, "notes", note_id)
    return {"updated": note_id}


@tool("notes", "Append text to a note, as new line(s) at its end.", ("note_id", "text"), note_id=text("The note id."),
      text=text("The text to append."))
def append_to_note(world, note_id, text):
    note = find(world, "notes", note_id, "note")
    body = note["body"].rstrip("\n")
    note["body"] = (body + "\n" if body else "") + text.rstrip("\n") + "\n"
    note["time"] = changed(world, "notes", note_id)
    return {"updated": note_id, "body": note["body"]}


@tool("notes", "Delete a note.", ("note_id",), note_id=text("The note id."))
def delete_note(world, note_id):
    return remove(world, "notes", note_id, "note")
