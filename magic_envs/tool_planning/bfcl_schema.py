"""BFCL function docs as OpenAI tool schemas, presented the way BFCL presents them to function-calling models.

BFCL docs use their own types ("dict", "float", "tuple", "any", and Java/JavaScript types such as "ArrayList"
or "Bigint"). `to_tool` converts a doc as bfcl-eval's function-calling handlers do: a hint on the language is
appended to the description; types map to JSON schema (dict -> object, float -> number with format "float",
tuple -> array, any -> string, unknown -> string); Java and JavaScript parameters become strings (their values
are source code) whose description names the original type. What the checker needs to score such a string is
kept in annotations: "x-bfcl-type" (the original type) and "x-bfcl-items-type" (the element type of a list).
Function names with dots are shown with "_" instead (OpenAI-style names allow no dots); `shown_name` gives the
mapping and the env maps calls back.
"""

from __future__ import annotations

import copy
import json

OPENAI_TYPES = {
    "integer": "integer", "number": "number", "float": "number", "string": "string", "boolean": "boolean",
    "bool": "boolean", "array": "array", "list": "array", "dict": "object", "object": "object", "tuple": "array",
    "any": "string", "byte": "integer", "short": "integer", "long": "integer", "double": "number",
    "char": "string", "ArrayList": "array", "Array": "array", "HashMap": "object", "Hashtable": "object",
    "Queue": "array", "Stack": "array", "Any": "string", "String": "string", "Bigint": "integer",
}
LANGUAGE_NAMES = {"python": "Python 3", "java": "Java 8 SDK", "javascript": "JavaScript"}
_LIST_TYPES = {"java": ("ArrayList", "Array"), "javascript": ("array",)}


def shown_name(name: str) -> str:
    """The name a model sees for a BFCL function (OpenAI-style names allow no dots)."""
    return name.replace(".", "_")


def language_of(category: str) -> str:
    return "java" if "java" in category and "javascript" not in category else \
        "javascript" if "javascript" in category else "python"


def to_tool(doc: dict, language: str = "python", rename: bool = True) -> dict:
    """The OpenAI tool schema a function-calling model sees for BFCL function `doc` (not modified)."""
    doc = copy.deepcopy(doc)
    params = doc.get("parameters") or {}
    props = params.get("properties") or {}
    if language in _LIST_TYPES:
        for prop in props.values():
            _as_source_string(prop, language)
    params["type"] = "object"
    params["properties"] = _cast(props)
    hint = f" Note that the provided function is in {LANGUAGE_NAMES[language]} syntax."
    function = {"name": shown_name(doc["name"]) if rename else doc["name"],
                "description": (doc.get("description") or "") + hint, "parameters": params}
    return {"type": "function", "function": function}


def _as_source_string(prop: dict, language: str) -> None:
    """A Java/JavaScript parameter: a string of source code, its type in words and in the annotation."""
    kind, lang = prop.get("type"), "Java" if language == "java" else "JavaScript"
    text = prop.get("description") or ""
    if kind == "any":
        text += f" This parameter can be of any type of {lang} object in string representation."
    else:
        text += f" This is {lang} {kind} type parameter in string representation."
    prop["x-bfcl-type"] = kind
    if kind in _LIST_TYPES[language] and isinstance(prop.get("items"), dict):
        items = prop.pop("items").get("type")
        text += f" The list elements are of type {items}; they are not in string representation."
        prop["x-bfcl-items-type"] = items
    if language == "javascript" and kind == "dict" and "properties" in prop:
        text += (" The dictionary entries have the following schema; they are not in string representation. "
                 + json.dumps(prop.pop("properties")))
    prop["description"] = text
    prop["type"] = "string"


def _cast(props: dict) -> dict:
    """BFCL types to JSON-schema types, recursively through nested properties and items."""
    for prop in props.values():
        if not isinstance(prop, dict):
            continue
        kind = prop.get("type")
        if kind == "float":
            prop["format"] = "float"
            prop["description"] = (prop.get("description") or "") + " This is a float type value."
        prop["type"] = OPENAI_TYPES.get(kind, "string") if isinstance(kind, str) else "string"
        if isinstance(prop.get("properties"), dict):
            prop["properties"] = _cast(prop["properties"])
        if isinstance(prop.get("items"), dict):
            _cast_items(prop["items"])
    return props


def _cast_items(items: dict) -> None:
    kind = items.get("type")
    items["type"] = OPENAI_TYPES.get(kind, "string") if isinstance(kind, str) else "string"
    if isinstance(items.get("properties"), dict):
        items["properties"] = _cast(items["properties"])
    if isinstance(items.get("items"), dict):
        _cast_items(items["items"])
