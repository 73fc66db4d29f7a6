"""Tweet cleaning before claim matching: what a tweet says, without the platform's furniture.

A tweet embedded from X/Twitter carries text no fact-check repeats: the embed signature
("— Name (@handle) January 14, 2020"), ``pic.twitter.com/…`` and other links, @-mentions,
emoji and ``#CamelCaseHashtags``. Removing them (and splitting hashtags into words) is the
first step of most CheckThat! 2022 task 2A systems (Nakov et al. 2022, the task overview;
Hövelmeyer et al. 2022, "SimBa"), since a lexical matcher otherwise scores handles and link
ids, and a sentence encoder spends its few hundred tokens on them. The author's name from
the signature is kept as words: a fact-check often names who said it ("Ilhan Omar said...").
"""

from __future__ import annotations

import datetime as dt
import html
import re
import unicodedata

__all__ = ["clean_tweet", "signature_date", "split_hashtag"]

# "— Name (@handle) January 14, 2020" (also with "-" or "--", and "Month D, YYYY" optional)
_SIGNATURE = re.compile(
    r"\s*(?:—|–|--|-)\s*(?P<name>[^—\n]{0,80}?)\s*\(@\w{1,30}\)\s*"
    r"(?P<date>[A-Z][a-z]+\.? \d{1,2}, \d{4})?\s*\"?\s*$"
)
_URL = re.compile(r"(?:https?://|www\.)\S+|\bpic\.twitter\.com/\S+|\b\w+\.(?:com|org|net|ly|gov)/\S+", re.IGNORECASE)
_MENTION = re.compile(r"(?<![\w@])@(\w{1,30})")
_HASHTAG = re.compile(r"(?<![\w#])#(\w+)")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_SPACE = re.compile(r"\s+")


def split_hashtag(tag: str) -> str:
    """``AustralianFires`` -> ``Australian Fires``; ``COVID19`` -> ``COVID 19``; one-case tags stay whole."""
    words = _CAMEL.findall(tag.replace("_", " "))
    return " ".join(words) if words else tag


def _is_emoji(ch: str) -> bool:
    if ch in "\u200d\ufe0f\ufe0e\u20e3":
        return True
    cat = unicodedata.category(ch)
    return cat == "So" or (cat == "Sk" and "\U0001f3fb" <= ch <= "\U0001f3ff") or "\U0001f1e6" <= ch <= "\U0001f1ff"


def _unquoted(text: str) -> str:
    t = html.unescape(text.strip()).strip()
    if len(t) >= 2 and t[0] == '"' and t[-1] == '"':
        t = t[1:-1].replace('""', '"')
    return t


def signature_date(text: str) -> dt.date | None:
    """The date of a tweet's embed signature ("— Name (@handle) January 14, 2020"), or None; the
    tweet may still carry the CSV quoting of the lab's TSV files (``"..."`` with ``""`` inside)."""
    m = _SIGNATURE.search(_unquoted(text))
    if m is None or not m.group("date"):
        return None
    try:
        return dt.datetime.strptime(m.group("date").replace(".", ""), "%B %d, %Y").date()
    except ValueError:
        return None


def clean_tweet(text: str, *, keep_author: bool = True) -> str:
    """The text of a tweet as a claim-matching query.

    Removes the embed signature (keeping the author's name when ``keep_author``), links
    (``http…``, ``pic.twitter.com/…``), the ``@`` of mentions (the handle stays as a word, since
    handles often name the subject: ``@JoeBiden``), emoji and other pictographs, and splits
    ``#CamelCase`` hashtags into words. HTML entities are decoded and spaces collapsed. A tweet
    that is nothing but furniture comes back as the stripped original rather than empty.
    """
    original = text.strip()
    t = _unquoted(original)
    author = ""
    m = _SIGNATURE.search(t)
    if m is not None:
        author = m.group("name").strip()
        t = t[: m.start()]
    t = _URL.sub(" ", t)
    t = _HASHTAG.sub(lambda h: split_hashtag(h.group(1)), t)
    t = _MENTION.sub(lambda h: split_hashtag(h.group(1)), t)
    t = "".join(" " if _is_emoji(ch) else ch for ch in t)
    if keep_author and author and not author.startswith("@"):
        t = f"{t} {author}"
    t = _SPACE.sub(" ", t).strip(" .")
    return t or original
