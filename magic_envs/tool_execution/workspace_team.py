"""Workspace tools of the to-do lists and the team chat: the apps only `ood` tasks use (never offered in train/test).

To-do: projects by name, each with to-dos (title, due date, done flag, notes). Chat: channels by name with
messages, newest first, ten a page; posting writes as the user.
"""

from __future__ import annotations

from magic_envs.tool_execution.workspace_state import WorkspaceError, new_id
from magic_envs.tool_execution.workspace_tools import (changed, check_date, find, flag, integer, matches, needs_change,
                                                       page_of, remove, text, tool)


# ---- to-do --------------------------------------------------------------------------------------------------
def _project(world, project):
    if project not in world["projects"]:
        raise WorkspaceError(f"no project named {project!r}; projects: {', '.join(world['projects'])}")
    return project


def _ordered(todos) -> list[dict]:
    return sorted(todos, key=lambda t: (t["due"] or "9999", t["title"], t["id"]))


@tool("todo", "List the to-do projects with their numbers of open to-dos.")
def list_projects(world):
    return {"projects": [{"name": p, "open": sum(t["project"] == p and not t["done"] for t in world["todos"].values())}
                         for p in world["projects"]]}


@tool("todo", "List a project's to-dos, by due date.", ("project",), project=text("Project name."),
      include_done=flag("Also list the done ones (default false)."))
def list_todos(world, project, include_done=False):
    _project(world, project)
    return {"project": project, "todos": _ordered(t for t in world["todos"].values()
                                                  if t["project"] == project and (include_done or not t["done"]))}


@tool("todo", "Search to-dos (title and notes) in every project for words.", ("query",),
      query=text("Words that must all occur."))
def search_todos(world, query):
    found = _ordered(t for t in world["todos"].values() if matches(query, t["title"], t["notes"]))
    return {"query": query, "total": len(found), "results": found[:20]}


@tool("todo", "Add a to-do to a project.", ("project", "title"), project=text("Project name."), title=text("Title."),
      due=text("Due date, YYYY-MM-DD (default none)."), notes=text("Notes (default none)."))
def add_todo(world, project, title, due="", notes=""):
    _project(world, project)
    if due:
        check_date(due, "due")
    if not title.strip():
        raise WorkspaceError("a to-do needs a title")
    tid = new_id(world, "td")
    changed(world, "todos", tid)
    world["todos"][tid] = {"id": tid, "project": project, "title": title, "done": False, "due": due, "notes": notes}
    return {"created": world["todos"][tid]}


@tool("todo", "Mark a to-do as done.", ("todo_id",), todo_id=text("The to-do id, such as 'td123'."))
def complete_todo(world, todo_id):
    todo = find(world, "todos", todo_id, "to-do")
    if todo["done"]:
        raise WorkspaceError(f"to-do {todo_id} is already done")
    todo["done"] = True
    changed(world, "todos", todo_id)
    return {"done": todo_id}


@tool("todo", "Change a to-do's title, due date or notes (only those given).", ("todo_id",),
      todo_id=text("The to-do id."), title=text("New title."), due=text("New due date, YYYY-MM-DD."),
      notes=text("New notes."))
def update_todo(world, todo_id, title=None, due=None, notes=None):
    todo = find(world, "todos", todo_id, "to-do")
    new = needs_change({"title": title, "due": due, "notes": notes})
    if due:
        check_date(due, "due")
    todo.update(new)
    changed(world, "todos", todo_id)
    return {"updated": todo}


@tool("todo", "Delete a to-do.", ("todo_id",), todo_id=text("The to-do id."))
def delete_todo(world, todo_id):
    return remove(world, "todos", todo_id, "to-do")


# ---- chat ---------------------------------------------------------------------------------------------------
def _channel(world, channel):
    name = channel.lstrip("#")
    if name not in world["channels"]:
        raise WorkspaceError(f"no channel #{name}; channels: {', '.join('#' + c for c in world['channels'])}")
    return name


def _newest(messages) -> list[dict]:
    return sorted(messages, key=lambda m: (m["time"], m["id"]), reverse=True)


@tool("chat", "List the chat channels.")
def list_channels(world):
    return {"channels": [{"name": "#" + c["name"], "topic": c["topic"]} for c in world["channels"].values()]}


@tool("chat", "Read a channel's messages, newest first, ten a page.", ("channel",), flaky=True,
      channel=text("Channel name, such as '#general'."), page=integer("Page number, from 1."))
def read_channel(world, channel, page=1):
    name = _channel(world, channel)
    rows, pages = page_of(_newest(m for m in world["messages"].values() if m["channel"] == name), page)
    return {"channel": "#" + name, "page": page, "pages": pages,
            "messages": [{"id": m["id"], "author": m["author"], "time": m["time"], "text": m["text"]} for m in rows]}


@tool("chat", "Search messages of every channel (author and text) for words.", ("query",),
      query=text("Words that must all occur."), channel=text("Only this channel (default: all)."))
def search_messages(world, query, channel=""):
    name = _channel(world, channel) if channel else ""
    found = _newest(m for m in world["messages"].values() if (not name or m["channel"] == name)
                    and matches(query, m["author"], m["text"]))
    return {"query": query, "total": len(found), "results": [m | {"channel": "#" + m["channel"]} for m in found[:20]]}


@tool("chat", "Post a message to a channel.", ("channel", "text"), flaky=True, channel=text("Channel name."),
      text=text("The message."))
def post_message(world, channel, text):
    name = _channel(world, channel)
    if not text.strip():
        raise WorkspaceError("the message is empty")
    mid = new_id(world, "cm")
    world["messages"][mid] = {"id": mid, "channel": name, "author": world["user"]["name"], "text": text,
                              "time": changed(world, "messages", mid)}
    return {"posted": mid, "channel": "#" + name}
