"""Sub-goals of the `ood` split: they need the to-do and chat apps, which train and test never offer."""

from __future__ import annotations

from magic_envs.tool_execution import workspace_vocab as V
from magic_envs.tool_execution.workspace_goals_office import mail_to_me, pick_contact, send_file, shareable
from magic_envs.tool_execution.workspace_plan import Draft, day_after, first_name, goal, planted_time

ACTIONS = ("Review the {} slides", "Send feedback on the {}", "Book a room for the {}", "Draft the {} summary",
           "Collect numbers for the {}")
TRIP = ("Book the hotel for the {} trip", "Buy train tickets for the {} trip", "Renew travel insurance for the {} trip",
        "Print the boarding passes for the {} trip")


def _message(d: Draft, channel: str, author: str, text: str) -> str:
    key = d.key("cm")
    d.plant("messages", key, {"id": key, "channel": channel, "author": author, "text": text,
                              "time": planted_time(d.world, d.r)})
    return key


@goal("task", ood=True, repeat=True)
def todos_from_mail(d: Draft):
    """Turn a contact's "Action:" e-mails into to-dos of a project."""
    w, r = d.world, d.r
    topic = r.choice(V.TOPICS)
    titles = [t.format(topic) for t in r.sample(ACTIONS, r.choice((2, 3)))]
    if ("topic", topic) in d.used or not d.fits(1 + len(titles)) or (c := pick_contact(d)) is None:
        return None
    d.used.add(("topic", topic))
    project, due = r.choice(V.PROJECTS), day_after(w, r, 3, 14)
    for title in titles:
        mail_to_me(d, c, f"Action: {title}", f"Hi {first_name(w)},\n\ncould you take care of this one?\n\n"
                    f"Thanks,\n{c['name'].split()[0]}\n")
    d.run("search_emails", {"query": f"action {c['name']}"})
    for title in titles:
        d.run("add_todo", {"project": project, "title": title, "due": due})
    return {"text": f"{c['name']} sent me e-mails whose subjects start with 'Action:'. For each of them add a to-do to "
                    f"my project '{project}', titled with the subject without the 'Action: ' prefix, due on {due}."}


@goal("task", ood=True)
def finish_trip_todos(d: Draft):
    """Complete the open to-dos of one project about a trip (a look-alike in another project stays open)."""
    w, r = d.world, d.r
    city, project = r.choice(V.CITIES), "Vacation"
    titles = [t.format(city) for t in r.sample(TRIP, r.choice((2, 3)))]
    if not d.fits(1 + len(titles)):
        return None
    keys = []
    for i, title in enumerate(titles + [f"Claim the {city} trip expenses"]):
        key = d.key("td")
        d.plant("todos", key, {"id": key, "project": project if i < len(titles) else "Taxes", "title": title,
                               "done": False, "due": day_after(w, r, 1, 20), "notes": ""})
        keys.append(key)
    d.run("list_todos", {"project": project})
    for key in sorted(keys[:-1], key=lambda k: (w["todos"][k]["due"], w["todos"][k]["title"], k)):
        d.run("complete_todo", {"todo_id": key})
    return {"text": f"Mark as done every open to-do of my project '{project}' that is about the {city} trip."}


@goal("task", ood=True, weight=1.5)
def chat_file_request(d: Draft):
    """A colleague asks for a file in chat: find it, mail it, answer in the channel."""
    w, r = d.world, d.r
    files = shareable(d)
    if not files or not d.fits(6) or (c := pick_contact(d)) is None:
        return None
    path, channel, first = r.choice(files), r.choice(("team", "ops")), c["name"].split()[0]
    d.used.add(("file", path))
    name = path.rsplit("/", 1)[1]
    _message(d, channel, c["name"], f"@{first_name(w)} could you e-mail me {name}? Thanks!")
    d.run("read_channel", {"channel": f"#{channel}"})
    d.run("search_files", {"query": name})
    send_file(d, path, c, name)
    d.run("post_message", {"channel": f"#{channel}", "text": f"Sent it to you by e-mail, {first}."})
    return {"text": f"In the #{channel} chat channel, {c['name']} asked me for a file. E-mail it to them with the file "
                    f"name as the subject and the file's exact text as the body, then answer in #{channel} with "
                    f"exactly: `Sent it to you by e-mail, {first}.`"}


@goal("question", ood=True)
def chat_question(d: Draft):
    w, r = d.world, d.r
    topic = r.choice(V.TOPICS)
    if not d.fits(1) or (c := pick_contact(d)) is None:
        return None
    room = f"Room {r.randrange(1, 6)}{r.choice('ABC')}"
    _message(d, "announcements", c["name"], f"Heads up: the {topic} kickoff is on {day_after(w, r, 2, 9)} in {room}.")
    d.run("search_messages", {"query": f"{topic} kickoff"})
    return {"text": f"in the team chat, who announced the {topic} kickoff, and in which room is it?",
            "facts": [{"kind": "text", "value": c["name"]}, {"kind": "text", "value": room}]}
