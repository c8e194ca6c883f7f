"""Workspace tools of the file system and the mailbox (registered in `workspace_tools`).

Files: absolute paths ("/finance/2025/receipt.txt"); a file's folder must exist before it is written; folders
are deleted only when empty. Mail: folders inbox, archive, sent, trash; listings are newest first, ten a page;
deleting moves a message to the trash; sending, replying and forwarding file a copy under "sent".
"""

from __future__ import annotations

import re

from magic_envs.tool_execution.workspace_state import WorkspaceError, new_id
from magic_envs.tool_execution.workspace_tools import (changed, check_emails, find, flag, integer, matches, page_of,
                                                       text, texts, tool)

_SEGMENT = re.compile(r"[A-Za-z0-9 _.,()+-]+")
MAIL_FOLDERS = ("inbox", "archive", "sent", "trash")


# ---- files --------------------------------------------------------------------------------------------------
def check_path(path: str) -> str:
    parts = path.split("/")
    if not path.startswith("/") or path == "/" or any(not _SEGMENT.fullmatch(p) or p in (".", "..") for p in parts[1:]):
        raise WorkspaceError(f"{path!r} is not a valid absolute path such as '/documents/letter.txt'")
    return path


def parent(path: str) -> str:
    return path.rsplit("/", 1)[0] or "/"


def is_folder(world: dict, path: str) -> bool:
    return path == "/" or world["files"].get(path, {}).get("type") == "folder"


def _file(world: dict, path: str) -> dict:
    entry = world["files"].get(check_path(path))
    if entry is None:
        raise WorkspaceError(f"no such file: {path}")
    if entry["type"] != "file":
        raise WorkspaceError(f"{path} is a folder, not a file")
    return entry


def _new_path(world: dict, path: str) -> str:
    """`path` as the place of a new file or folder: its folder exists and nothing is there yet."""
    check_path(path)
    if not is_folder(world, parent(path)):
        raise WorkspaceError(f"no such folder: {parent(path)}")
    if path in world["files"]:
        raise WorkspaceError(f"{path} already exists")
    return path


def _folder(world: dict, path: str) -> str:
    if path != "/":
        check_path(path)
    if not is_folder(world, path):
        raise WorkspaceError(f"{path} is a file, not a folder" if path in world["files"] else f"no such folder: {path}")
    return path


@tool("files", "List the files and sub-folders of a folder.", path=text("Absolute folder path, such as '/documents'; "
      "'/' is the top folder."))
def list_directory(world, path="/"):
    prefix = _folder(world, path).rstrip("/") + "/"
    children = [(p, e) for p, e in world["files"].items() if p.startswith(prefix) and "/" not in p[len(prefix):]]
    return {"path": path, "folders": sorted(p[len(prefix):] for p, e in children if e["type"] == "folder"),
            "files": [{"name": p[len(prefix):], "size": len(e["content"]), "modified": e["time"]}
                      for p, e in sorted(children) if e["type"] == "file"]}


@tool("files", "Read a text file.", ("path",), path=text("Absolute file path."))
def read_file(world, path):
    entry = _file(world, path)
    return {"path": path, "modified": entry["time"], "content": entry["content"]}


@tool("files", "Write a text file. The folder must exist; an existing file is replaced only with overwrite=true.",
      ("path", "content"), path=text("Absolute file path, such as '/finance/receipt.txt'."),
      content=text("The full text of the file."), overwrite=flag("Replace the file if it exists (default false)."))
def write_file(world, path, content, overwrite=False):
    if path in world["files"] and overwrite:
        _file(world, path)
    else:
        _new_path(world, path)
    world["files"][path] = {"type": "file", "content": content, "time": changed(world, "files", path)}
    return {"written": path, "size": len(content)}


@tool("files", "Append text to an existing file, as new line(s) at its end.", ("path", "text"),
      path=text("Absolute file path."), text=text("The text to append."))
def append_to_file(world, path, text):
    entry = _file(world, path)
    body = entry["content"].rstrip("\n")
    entry["content"] = (body + "\n" if body else "") + text.rstrip("\n") + "\n"
    entry["time"] = changed(world, "files", path)
    return {"appended": path, "size": len(entry["content"])}


@tool("files", "Create a folder inside an existing folder.", ("path",), path=text("Absolute path of the new folder."))
def create_folder(world, path):
    _new_path(world, path)
    world["files"][path] = {"type": "folder", "time": changed(world, "files", path)}
    return {"created": path}


@tool("files", "Delete a file, or an empty folder.", ("path",), path=text("Absolute path."))
def delete_path(world, path):
    entry = world["files"].get(check_path(path))
    if entry is None:
        raise WorkspaceError(f"no such file or folder: {path}")
    if entry["type"] == "folder" and any(p.startswith(path + "/") for p in world["files"]):
        raise WorkspaceError(f"the folder {path} is not empty")
    del world["files"][path]
    changed(world, "files", path)
    return {"deleted": path}


def _destination(world, path, destination):
    target = destination.rstrip("/") + "/" + path.rsplit("/", 1)[1] if is_folder(world, destination) else destination
    return _new_path(world, target)


@tool("files", "Move a file into a folder (keeping its name) or to a new path.", ("path", "destination"),
      path=text("Absolute path of the file."), destination=text("An existing folder, or the file's new absolute path."))
def move_file(world, path, destination):
    entry, target = _file(world, path), _destination(world, path, destination)
    del world["files"][path]
    changed(world, "files", path)
    world["files"][target] = entry | {"time": changed(world, "files", target)}
    return {"moved": path, "to": target}


@tool("files", "Copy a file into a folder (keeping its name) or to a new path.", ("path", "destination"),
      path=text("Absolute path of the file."), destination=text("An existing folder, or the copy's absolute path."))
def copy_file(world, path, destination):
    entry, target = _file(world, path), _destination(world, path, destination)
    world["files"][target] = entry | {"time": changed(world, "files", target)}
    return {"copied": path, "to": target}


@tool("files", "Search file names and contents for words (all must occur; case-insensitive).", ("query",),
      query=text("Words to look for."), folder=text("Search only below this folder (default: everywhere)."))
def search_files(world, query, folder="/"):
    prefix = _folder(world, folder).rstrip("/") + "/"
    words, hits = query.lower().split(), []
    for path, entry in sorted(world["files"].items()):
        if entry["type"] == "file" and path.startswith(prefix) and matches(query, path, entry["content"]):
            lines = [f"line {i}: {line}" for i, line in enumerate(entry["content"].split("\n"), 1)
                     if any(w in line.lower() for w in words)]
            hits.append({"path": path, "matches": lines[:3]})
    return {"query": query, "total": len(hits), "results": hits[:20]}


# ---- mail ---------------------------------------------------------------------------------------------------
def summary(mail: dict) -> dict:
    return {"id": mail["id"], "from": f"{mail['from_name']} <{mail['from']}>", "subject": mail["subject"],
            "time": mail["time"], "folder": mail["folder"], "attachments": [a["name"] for a in mail["attachments"]]}


def newest_first(mails) -> list[dict]:
    return sorted(mails, key=lambda m: (m["time"], m["id"]), reverse=True)


def _send(world, to, cc, subject, body, attachments=(), in_reply_to=""):
    eid = new_id(world, "m")
    world["emails"][eid] = {"id": eid, "folder": "sent", "from": world["user"]["email"],
                            "from_name": world["user"]["name"], "to": to, "cc": cc, "subject": subject, "body": body,
                            "time": changed(world, "emails", eid), "in_reply_to": in_reply_to,
                            "attachments": [dict(a) for a in attachments]}
    return {"sent": eid, "to": to, "subject": subject}


@tool("mail", "List the messages of a mail folder, newest first, ten a page.",
      folder=text("Mail folder.", MAIL_FOLDERS), page=integer("Page number, from 1."))
def list_emails(world, folder="inbox", page=1):
    rows, pages = page_of(newest_first(m for m in world["emails"].values() if m["folder"] == folder), page)
    total = sum(m["folder"] == folder for m in world["emails"].values())
    return {"folder": folder, "page": page, "pages": pages, "total": total, "emails": [summary(m) for m in rows]}


@tool("mail", "Search e-mails (sender, recipients, subject and body) for words; newest first, at most 20.",
      ("query",), flaky=True, query=text("Words that must all occur."),
      folder=text("Search only this folder (default: every folder but trash).", MAIL_FOLDERS))
def search_emails(world, query, folder=""):
    found = newest_first(m for m in world["emails"].values()
                         if (m["folder"] == folder if folder else m["folder"] != "trash")
                         and matches(query, m["from"], m["from_name"], " ".join(m["to"]), m["subject"], m["body"]))
    return {"query": query, "total": len(found), "results": [summary(m) for m in found[:20]]}


@tool("mail", "Read one e-mail in full.", ("email_id",), email_id=text("The e-mail id, such as 'm123'."))
def read_email(world, email_id):
    mail = find(world, "emails", email_id, "e-mail")
    return {k: v for k, v in mail.items() if k != "attachments"} | {
        "attachments": [{"name": a["name"], "size": len(a["content"])} for a in mail["attachments"]]}


@tool("mail", "Send a new e-mail.", ("to", "subject", "body"), flaky=True, to=texts("Recipient e-mail addresses."),
      subject=text("Subject line."), body=text("Message text."), cc=texts("Addresses to copy (default none)."))
def send_email(world, to, subject, body, cc=()):
    return _send(world, check_emails(to), check_emails(list(cc), "cc", allow_empty=True), subject, body)


@tool("mail", "Reply to the sender of an e-mail (subject 'Re: ...').", ("email_id", "body"), flaky=True,
      email_id=text("The id of the e-mail to answer."), body=text("Message text."))
def reply_email(world, email_id, body):
    mail = find(world, "emails", email_id, "e-mail")
    to = mail["to"] if mail["folder"] == "sent" else [mail["from"]]
    subject = mail["subject"] if mail["subject"].lower().startswith("re:") else "Re: " + mail["subject"]
    return _send(world, list(to), [], subject, body, in_reply_to=email_id)


@tool("mail", "Forward an e-mail with its attachments, optionally with a note above it.", ("email_id", "to"),
      flaky=True, email_id=text("The id of the e-mail to forward."), to=texts("Recipient e-mail addresses."),
      note=text("Text to put above the forwarded message (default none)."))
def forward_email(world, email_id, to, note=""):
    mail = find(world, "emails", email_id, "e-mail")
    quoted = (f"---------- Forwarded message ----------\nFrom: {mail['from_name']} <{mail['from']}>\n"
              f"Date: {mail['time']}\nSubject: {mail['subject']}\n\n{mail['body']}")
    return _send(world, check_emails(to), [], "Fwd: " + mail["subject"], (note + "\n\n" if note else "") + quoted,
                 mail["attachments"])


@tool("mail", "Move an e-mail to another folder.", ("email_id", "folder"), email_id=text("The e-mail id."),
      folder=text("Target folder.", ("inbox", "archive")))
def move_email(world, email_id, folder):
    mail = find(world, "emails", email_id, "e-mail")
    if mail["folder"] in ("sent", folder):
        raise WorkspaceError(f"e-mail {email_id} is in '{mail['folder']}' and cannot be moved to '{folder}'")
    mail["folder"] = folder
    changed(world, "emails", email_id)
    return {"moved": email_id, "folder": folder}


@tool("mail", "Delete an e-mail (it moves to the trash).", ("email_id",), email_id=text("The e-mail id."))
def delete_email(world, email_id):
    mail = find(world, "emails", email_id, "e-mail")
    if mail["folder"] == "trash":
        raise WorkspaceError(f"e-mail {email_id} is already in the trash")
    mail["folder"] = "trash"
    changed(world, "emails", email_id)
    return {"deleted": email_id}


@tool("mail", "Save an attachment of an e-mail as a file in a folder (under the attachment's name).",
      ("email_id", "attachment", "folder"), email_id=text("The e-mail id."),
      attachment=text("The attachment's file name."), folder=text("An existing folder."))
def save_attachment(world, email_id, attachment, folder):
    mail = find(world, "emails", email_id, "e-mail")
    match = next((a for a in mail["attachments"] if a["name"] == attachment), None)
    if match is None:
        names = ", ".join(a["name"] for a in mail["attachments"]) or "none"
        raise WorkspaceError(f"e-mail {email_id} has no attachment {attachment!r} (attachments: {names})")
    path = _new_path(world, _folder(world, folder).rstrip("/") + "/" + attachment)
    world["files"][path] = {"type": "file", "content": match["content"], "time": changed(world, "files", path)}
    return {"saved": path, "size": len(match["content"])}
