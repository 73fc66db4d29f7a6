"""MultiFC: claims from 26 fact-checking sites with dated Google snippets as evidence.

Augenstein et al., 2019, "MultiFC: A Real-World Multi-Domain Dataset for Evidence-Based Fact
Checking of Claims", EMNLP (https://aclanthology.org/D19-1475); the copy here is the one
redistributed with Allein et al., 2023, "Implicit Temporal Reasoning for Evidence-Based
Fact-Checking" (EACL Findings), whose snippet dates drive time-aware evidence ranking.
The PolitiFact domain (``pomt``) is missing from that copy.

Claims: ``claimID`` as ``claim_id``, ``Claim.date`` = ``publish_date_iso`` (when the
fact-check was published; ``meta['claim_date']`` holds the rarer date the claim was made).
Corpus: the Google snippets of the split's claims, one passage each, ``passage_id`` =
``doc_id`` = ``"<claimID>:<rank>"`` (a repeated rank gets ``".1"``, ``".2"``... in file order),
``published`` = the date leading the snippet text where there is one, ``url`` = the result's
url. There are no relevance labels, so ``qrels`` is empty; ``meta['snippet_ids']`` lists each
claim's own snippets in rank order (the per-claim candidate pool of the time-aware rankers).

Claim metadata: ``label`` (the domain's own verdict label), ``domain``, ``claim_url``,
``reason``, ``speaker``, ``checker``, ``article_title``, ``categories``/``tags``/``entities``
(lists), ``publish_date`` (the raw string), ``claim_date``, ``snippet_ids``.
Rows with an empty claim text, and repeated claim ids, are recorded in ``Dataset.skipped``.
"""

from __future__ import annotations

import ast
import csv
import datetime as dt
import gzip
import json
import logging
import re
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from factscout.datasets.base import (
    Dataset,
    DatasetSource,
    fetch,
    github_archive,
    meta_dict,
    register_loader,
    require_file,
)
from factscout.dates import parse_date
from factscout.errors import InputError, MissingDependency
from factscout.formats.jsonl import read_jsonl, write_jsonl
from factscout.records import Claim, Passage

log = logging.getLogger(__name__)

_REPO, _COMMIT = "Marlon668/VerificationClaimsWithTimeAttribution", "8052c3e294797c8f9e00ef084cb94eec399b3b68"
SOURCE = DatasetSource(
    name="MultiFC",
    url=github_archive(_REPO, _COMMIT),
    license="none stated (research use); snippets are Google search results",
    citation="Augenstein, Lioma, Wang, Chaves Lima, Hansen, Hansen, Simonsen. MultiFC: A Real-World Multi-Domain "
    "Dataset for Evidence-Based Fact Checking of Claims. EMNLP 2019.",
)
FOLDER = "multifc"
MINI_FOLDER = "fixtures/multifc_mini"
_NONE = {"", "None", "none", "['None']", "[]"}


def _text(value: object) -> str | None:
    """A metadata string, ``None`` for MultiFC's ``"None"`` placeholders."""
    if value is None:
        return None
    s = str(value).strip()
    return None if s in _NONE else s


def _list(value: object) -> list[str]:
    """MultiFC's list fields: a Python list literal (``"['a', 'b']"``) or comma-separated text."""
    s = _text(value)
    if s is None:
        return []
    if s.startswith("[") and s.endswith("]"):
        try:
            parsed = ast.literal_eval(s)
        except (ValueError, SyntaxError):
            parsed = None
        if isinstance(parsed, list):
            return [str(x) for x in parsed if _text(x) is not None]
    return [t.strip() for t in s.split(",") if t.strip()]


def _claims(path: Path) -> tuple[list[tuple[str, int, dict[str, Any]]], list[str]]:
    """Rows ``(claim_id, line, row)`` that can become claims, and the skipped rows."""
    rows: list[tuple[str, int, dict[str, Any]]] = []
    first: dict[str, tuple[int, dict[str, Any]]] = {}
    skipped: list[str] = []
    for lineno, row in read_jsonl(path):
        claim_id = row.get("claimID")
        if not isinstance(claim_id, str) or not claim_id:
            raise InputError(f"{path}:{lineno}: missing required field 'claimID'")
        if claim_id in first:
            line, prev = first[claim_id]
            same = "identical" if prev == row else "different"
            skipped.append(f"{path}:{lineno}: claim {claim_id} repeats line {line} ({same} row)")
            (log.debug if same == "identical" else log.warning)("%s", skipped[-1])
            continue
        first[claim_id] = (lineno, row)
        if not str(row.get("claim") or "").strip():
            skipped.append(f"{path}:{lineno}: claim {claim_id}: empty claim text")
            log.warning("%s", skipped[-1])
            continue
        rows.append((claim_id, lineno, row))
    return rows, skipped


def _snippets(path: Path, wanted: set[str]) -> Iterator[tuple[str, Passage]]:
    """``(claim_id, passage)`` for the snippets of the wanted claims, in file order."""
    taken: set[str] = set()
    for lineno, row in read_jsonl(path):
        claim_id = row.get("claimID")
        if claim_id not in wanted:
            continue
        rank = row.get("rank")
        base = f"{claim_id}:{rank}"
        pid, n = base, 0
        while pid in taken:
            n += 1
            pid = f"{base}.{n}"
        if n:
            log.debug("%s:%d: rank %s of claim %s repeats; passage id %s", path, lineno, rank, claim_id, pid)
        taken.add(pid)
        published = parse_date(row.get("snippet_date_iso"), field=f"{path}:{lineno}: snippet_date_iso")
        passage = Passage(
            pid, pid, str(row.get("title") or ""), str(row.get("snippet") or ""), published, row.get("url") or None
        )
        yield claim_id, passage


def _read(name: str, split: str, claims_path: Path, snippets_path: Path) -> Dataset:
    rows, skipped = _claims(require_file(claims_path, name))
    snippet_ids: dict[str, list[str]] = {claim_id: [] for claim_id, _, _ in rows}
    corpus = []
    for claim_id, passage in _snippets(require_file(snippets_path, name), set(snippet_ids)):
        snippet_ids[claim_id].append(passage.passage_id)
        corpus.append(passage)
    claims = []
    for claim_id, lineno, row in rows:
        where = f"{claims_path}:{lineno}"
        meta = meta_dict(
            label=_text(row.get("label")),
            domain=row.get("domain") or claim_id.split("-")[0],
            claim_url=_text(row.get("claimURL")),
            reason=_text(row.get("reason")),
            speaker=_text(row.get("speaker")),
            checker=_text(row.get("checker")),
            article_title=_text(row.get("article_title")),
            categories=_list(row.get("categories")),
            tags=_list(row.get("tags")),
            entities=_list(row.get("entities")),
            publish_date=_text(row.get("publish_date")),
            claim_date=parse_date(row.get("claim_date_iso"), field=f"{where}: claim_date_iso"),
            snippet_ids=snippet_ids[claim_id],
        )
        date = parse_date(row.get("publish_date_iso"), field=f"{where}: publish_date_iso")
        claims.append(Claim(claim_id, row["claim"], date, meta))
    return Dataset(name, split, tuple(claims), tuple(corpus), {}, SOURCE, tuple(skipped))


@register_loader("multifc", ("train", "dev", "test"))
def load(split: str, root: Path) -> Dataset:
    """MultiFC ``train`` (15,631 rows) or ``dev`` (1,953 rows) with their dated snippets; ``test``
    (kept aside here) where downloaded."""
    folder = root / FOLDER
    return _read("multifc", split, folder / f"claims_{split}.jsonl", folder / "snippets.jsonl.gz")


def load_file(claims_path: str | Path, snippets_path: str | Path | None = None, *, split: str = "eval") -> Dataset:
    """Any claims file in the ``claims_dev.jsonl`` layout (e.g. the test split) with its snippets
    from ``snippets_path`` (default: the shared ``multifc/snippets.jsonl.gz``)."""
    from factscout.datasets.base import data_root

    snippets = Path(snippets_path) if snippets_path else data_root() / FOLDER / "snippets.jsonl.gz"
    return _read("multifc", split, Path(claims_path), snippets)


@register_loader("multifc_mini", ("dev",))
def load_mini(split: str, root: Path) -> Dataset:
    """40 MultiFC dev claims with a publish date and at least 5 dated snippets each (377 snippets)."""
    folder = root / MINI_FOLDER
    return _read("multifc_mini", split, folder / "claims.jsonl", folder / "snippets.jsonl")


# --- building claims_*.jsonl and snippets.jsonl.gz from the public per-domain files ----------

_COLUMNS = [
    "claimID",
    "claim",
    "label",
    "claimURL",
    "reason",
    "categories",
    "speaker",
    "checker",
    "tags",
    "article_title",
    "publish_date",
    "claim_date",
    "entities",
]
_SNIPPET_DATE = re.compile(r"^\s*([A-Z][a-z]{2} \d{1,2}, (?:19|20)\d\d)\s*\.\.\.")


def _loose_date(text: str | None) -> str | None:
    """Best-effort ISO date from MultiFC's free-form dates ("Thu 3 Mar 2016, 6:04am"); None without a year."""
    try:
        from dateutil import parser as date_parser
    except ImportError:  # pragma: no cover - only for building from the raw files
        raise MissingDependency(
            "building MultiFC from its raw files needs python-dateutil: pip install python-dateutil"
        ) from None
    if not text or text == "None":
        return None
    s = text.replace("\\xa0", " ").strip("[]' ").split("Last Updated")[0]
    if not re.search(r"(19|20)\d\d", s):
        return None
    try:
        d = date_parser.parse(s, fuzzy=True, default=dt.datetime(1900, 1, 1))
    except (ValueError, OverflowError):
        return None
    return d.date().isoformat() if 1990 <= d.year <= 2019 else None


def _tsv(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def _snippet_rows(snippets: Path, claim_ids: set[str]) -> Iterator[dict[str, Any]]:
    """Rows of the per-claim snippet files (``rank<TAB>title<TAB>text<TAB>url`` lines)."""
    for path in sorted(snippets.iterdir()):
        if path.name not in claim_ids:
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            parts = line.split("\t")
            if len(parts) < 4:
                continue
            rank, title, text, url = parts[0], parts[1], "\t".join(parts[2:-1]), parts[-1]
            m = _SNIPPET_DATE.match(text)
            date = None
            if m:
                try:
                    date = dt.datetime.strptime(m.group(1), "%b %d, %Y").date().isoformat()
                except ValueError:
                    date = None
            yield {
                "claimID": path.name,
                "rank": int(rank) if rank.isdigit() else rank,
                "title": title,
                "snippet": text,
                "url": url,
                "snippet_date_iso": date,
            }


def build_from_source(source: str | Path, folder: str | Path) -> Path:
    """Write ``claims_{train,dev,test}.jsonl`` and ``snippets.jsonl.gz`` into ``folder`` from the
    public per-domain TSVs (``<split>/<split>-<domain>.tsv``, test labels in
    ``test/test-<domain>-labels.tsv``) and snippet files (``snippets/<claimID>``) under ``source``."""
    source, folder = Path(source), Path(folder)
    test_labels = {r[0]: r[1] for p in sorted(source.glob("test/test-*-labels.tsv")) for r in _tsv(p) if len(r) >= 2}
    have: set[str] = set()
    for split in ("train", "dev", "test"):
        records = []
        for path in sorted(source.glob(f"{split}/{split}-*.tsv")):
            if not re.fullmatch(rf"{split}-[a-z]{{4}}\.tsv", path.name):
                continue
            for r in _tsv(path):
                if split == "test":
                    r = [*r[:2], test_labels.get(r[0], ""), *r[2:]]
                rec: dict[str, Any] = dict(zip(_COLUMNS, r, strict=False))
                rec["domain"] = rec["claimID"].split("-")[0]
                rec["publish_date_iso"] = _loose_date(rec.get("publish_date"))
                rec["claim_date_iso"] = _loose_date(rec.get("claim_date"))
                records.append(rec)
                have.add(rec["claimID"])
        write_jsonl(folder / f"claims_{split}.jsonl", records)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / ".snippets.jsonl.gz.part"
    with gzip.open(tmp, "wt", encoding="utf-8") as out:
        for row in _snippet_rows(source / "snippets", have):
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    tmp.replace(folder / "snippets.jsonl.gz")
    return folder


def download(dest: str | Path) -> Path:
    """Fetch the repository archive that redistributes MultiFC (large) and build ``dest/multifc``."""
    folder = Path(dest) / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        archive = fetch(SOURCE.url, Path(tmp) / "source.zip")
        with zipfile.ZipFile(archive) as z:
            z.extractall(tmp)
        tops = [p for p in Path(tmp).iterdir() if p.is_dir()]
        if len(tops) != 1:
            raise InputError(f"{SOURCE.url}: expected one top folder in the archive, found {len(tops)}")
        build_from_source(tops[0], folder)
    return folder
