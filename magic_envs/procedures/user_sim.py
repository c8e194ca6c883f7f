"""User simulators: the customer an agent serves, played from a task's scenario.

A simulator is a strategy with two methods:

    first_message() -> str                       the customer's answer to the agent's fixed greeting
    reply(agent_text, progress) -> str           the answer to one agent message

`progress` (a `Progress`) is what the customer can observe besides the agent's words: whether the current
request has been carried out (a customer gets the confirmation email; a refusal or an answer they read in
the message itself) and whether they have been transferred. A reply containing `STOP` (`###STOP###`, goal
reached or given up), `TRANSFER` or `OUT_OF_SCOPE` ends the conversation, as in tau2-bench.

* `ScriptedUser` (default): deterministic and offline. It answers only what its scenario knows, one thing at
  a time when asked, confirms a proposed write with an explicit "yes" when it mentions what the customer is
  after, moves to the next request when the current one is done, and ends with `###STOP###`. The same
  scenario and agent messages always give the same replies, so transcripts are reproducible byte for byte.
* `ModelUser`: any OpenAI-compatible chat model plays the customer from the scenario text (tau2-bench's
  setup: guidelines plus scenario as the system prompt, roles flipped so the agent speaks as "user").

The scenario (a JSON dict in the task):

    persona     one line about the customer, e.g. "Polite but in a hurry."
    identity    what the customer can say to prove who they are: {"email", "first_name", "last_name", "zip"}
                (retail) or {"user_id"} (airline); a missing key is something they do not know
    requests    in order; each {"say": first words of the request, "facts": {keywords: answer} revealed when
                the agent's message contains one of the keywords ("reason|why": alternatives separated by
                "|", matched case-insensitively), "confirm": answer to a confirmation (default true)}
    closing     the last words before `###STOP###`
    text        (optional) the scenario as free text for `ModelUser`; built from the fields when absent

    >>> scenario = {"persona": "Brief.", "identity": {"email": "ann@example.com"},
    ...             "requests": [{"say": "Cancel my order #W1.", "facts": {"reason|why": "I ordered it by mistake."}}],
    ...             "closing": "Thanks!"}
    >>> user = ScriptedUser(scenario)
    >>> user.first_message()
    'Cancel my order #W1.'
    >>> user.reply("Sure. What is your email address?", Progress())
    'My email is ann@example.com.'
    >>> user.reply("Why do you want to cancel it?", Progress())
    'I ordered it by mistake.'
    >>> user.reply("I will cancel order #W1 (reason: ordered by mistake). Shall I proceed (yes/no)?", Progress())
    'Yes, please go ahead.'
    >>> user.reply("Done: order #W1 is cancelled.", Progress(request_done=True))
    'Thanks! ###STOP###'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

STOP, TRANSFER, OUT_OF_SCOPE = "###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"
STOP_TOKENS = (STOP, TRANSFER, OUT_OF_SCOPE)
GREETING = "Hi! How can I help you today?"  # tau2-bench's fixed first agent message

# A message asks for confirmation when it asks whether to go ahead; the customer answers with an explicit yes
# (the policy check in reward.py looks for exactly such a reply before every write).
_ASKS_CONFIRMATION = re.compile(
    r"\b(proceed|go ahead|shall i|should i|would you like me to|do you want me to|yes or no)\b|yes/no|\(yes\)", re.I)
_ASKS_CONFIRMATION_WEAKLY = re.compile(r"\b(confirm|is that correct|is this correct|is that right)\b", re.I)
_PATIENCE = 6  # replies in a row that make no progress before a scripted customer gives up


def ends_conversation(text: str) -> bool:
    """Whether a customer message ends the conversation (a tau2-bench stop token anywhere in it)."""
    return any(token in text for token in STOP_TOKENS)


def said(text: str, phrase: str) -> bool:
    """Whether `phrase` occurs in `text` as tau2-bench's COMMUNICATE check reads it: case-insensitively,
    commas removed from the text (so "$1,628.50" says "1628.50")."""
    return phrase.lower() in text.lower().replace(",", "")


@dataclass(frozen=True)
class Progress:
    """What the customer observes besides the agent's words."""

    request_done: bool = False  # the current request has been carried out, answered or rightly refused
    transferred: bool = False   # the agent handed the conversation to a human


class ScriptedUser:
    """The deterministic customer (see the module docstring)."""

    def __init__(self, scenario: dict):
        self.scenario = scenario
        self.requests = list(scenario.get("requests") or [{"say": "I need some help."}])
        self.identity = dict(scenario.get("identity") or {})
        self.current = 0
        self._stalled = 0
        self._told: set[str] = set()

    def first_message(self) -> str:
        return self.requests[0]["say"]

    def reply(self, agent_text: str, progress: Progress) -> str:
        if progress.transferred:
            return TRANSFER
        if progress.request_done:
            self.current += 1
            self._stalled = 0
            self._told = set()
            if self.current >= len(self.requests):
                return f"{self.scenario.get('closing', 'Thank you, that is all.')} {STOP}"
            return self.requests[self.current]["say"]
        answer = self._answer(agent_text.lower())
        if answer:
            self._stalled = 0
            return answer
        self._stalled += 1
        if self._stalled >= _PATIENCE:
            return f"This is not getting anywhere; I will call back later. {STOP}"
        return f"Sorry, I am not sure what you need from me. {self.requests[self.current]['say']}"

    def _answer(self, text: str) -> str:
        request = self.requests[self.current]
        consent = "Yes, please go ahead." if request.get("confirm", True) else "No, please do not do that."
        # A confirmation request lists the details back, so it is answered before any keyword in it; a bare
        # "confirm" ("can you confirm your email?") may ask for a detail instead, so it comes last.
        if _ASKS_CONFIRMATION.search(text):
            return consent
        parts = self._identity_answers(text)
        for keywords, answer in (request.get("facts") or {}).items():
            if any(k.strip().lower() in text for k in keywords.split("|")) and answer not in parts:
                parts.append(answer)
        if not parts and _ASKS_CONFIRMATION_WEAKLY.search(text):
            return consent
        return " ".join(parts)

    def _identity_answers(self, text: str) -> list[str]:
        ident, out = self.identity, []
        if "user id" in text or "user_id" in text:
            out.append(f"My user id is {ident['user_id']}." if "user_id" in ident else "I don't know my user id.")
        if "email" in text:
            if "email" in ident:
                out.append(f"My email is {ident['email']}.")
            elif "zip" in ident and "zip" not in text:
                out.append(self._name_zip("I don't remember my email, but"))
        if "zip" in text or ("name" in text and "user" not in text):
            if "zip" in ident and "first_name" in ident:
                out.append(self._name_zip(""))
        return list(dict.fromkeys(out))

    def _name_zip(self, lead: str) -> str:
        ident = self.identity
        words = f"my name is {ident['first_name']} {ident['last_name']} and my zip code is {ident['zip']}."
        return f"{lead} {words}" if lead else words[0].upper() + words[1:]


GUIDELINES = """You play a customer who contacts a customer service agent. Follow the scenario below strictly.
- Write one message at a time, short and natural, as a real customer would.
- Never invent information: anything the scenario does not give you, you do not know.
- Reveal information only when the agent asks for it; do not recite the scenario.
- When the agent asks you to confirm an action you want, answer with an explicit "yes"; refuse what you do not want.
- When your goal is reached, or you are sure it cannot be, end your message with ###STOP###.
- If the agent transfers you to another agent, answer only ###TRANSFER###.
- If the scenario lacks information you need to go on, answer ###OUT-OF-SCOPE###."""


def scenario_text(scenario: dict) -> str:
    """The scenario as free text, for a model playing the customer."""
    if scenario.get("text"):
        return scenario["text"]
    lines = [f"Persona: {scenario.get('persona', '')}".rstrip(), "What you know about yourself:"]
    lines += [f"- {key.replace('_', ' ')}: {value}" for key, value in (scenario.get("identity") or {}).items()]
    lines.append("What you want, in this order (one request at a time):")
    for k, request in enumerate(scenario.get("requests") or [], 1):
        lines.append(f"{k}. {request['say']}")
        lines += [f"   - if asked about {keys.split('|')[0]}: {answer}"
                  for keys, answer in (request.get("facts") or {}).items()]
        if not request.get("confirm", True):
            lines.append("   - do not agree to go ahead with it")
    return "\n".join(lines)


class ModelUser:
    """A chat model plays the customer. `complete(messages) -> str` is any OpenAI-compatible chat call (see
    `magic_envs.core.openai_chat.ChatClient`); the agent's messages reach it as "user" turns and its own as
    "assistant" turns, and it never sees tool calls or results (tau2-bench's role flip)."""

    def __init__(self, scenario: dict, complete):
        self.complete = complete
        self.history = [{"role": "system", "content": f"{GUIDELINES}\n\n<scenario>\n{scenario_text(scenario)}\n"
                                                      "</scenario>"}]

    def first_message(self) -> str:
        return self._turn(GREETING)

    def reply(self, agent_text: str, progress: Progress) -> str:
        return self._turn(agent_text)

    def _turn(self, agent_text: str) -> str:
        self.history.append({"role": "user", "content": agent_text})
        text = (self.complete(self.history) or "").strip() or "Sorry, could you say that again?"
        self.history.append({"role": "assistant", "content": text})
        return text
