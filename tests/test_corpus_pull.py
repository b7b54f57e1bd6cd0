"""`peerlint corpus pull` against loopback servers that answer in each API's documented layout.

A small OpenAlex (works with cursor paging, the `openalex`/`doi`/`cites`/`title.search` filters,
sources search) and an arXiv Atom feed run on 127.0.0.1 in a thread; faults (429 with Retry-After,
500, a truncated body, an HTML error page) are queued in front of their answers. No test reaches a
real service: every URL points at the loopback server.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
import subprocess
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from peerlint.index.ingest import arxiv, pull
from peerlint.index.ingest.api_client import ApiClient
from peerlint.index.ingest.load import load_papers

REPO = Path(__file__).resolve().parents[1]


# --- the loopback server -------------------------------------------------------------------------------------------


def work(n: int, title: str, refs=(), doi: str | None = None, abstract: str | None = "Words of the abstract",
         year: int = 2020, cited_by: int = 0, venue: str = "Journal of Tests") -> dict:
    """An OpenAlex work object as the API documents it (abstract as an inverted index)."""
    index = None
    if abstract is not None:
        index = {}
        for pos, word in enumerate(abstract.split()):
            index.setdefault(word, []).append(pos)
    return {"id": f"https://openalex.org/W{n}", "doi": f"https://doi.org/{doi}" if doi else None,
            "title": title, "display_name": title, "publication_year": year, "publication_date": f"{year}-03-04",
            "primary_location": {"landing_page_url": f"https://example.org/{n}",
                                 "source": {"id": "https://openalex.org/S1", "display_name": venue}},
            "authorships": [{"author": {"id": "https://openalex.org/A1", "display_name": "Ada Lovelace"}}],
            "abstract_inverted_index": index, "referenced_works": [f"https://openalex.org/W{r}" for r in refs],
            "cited_by_count": cited_by, "type": "article"}


class Api:
    """One loopback server for OpenAlex (/works, /sources) and arXiv (/api/query); `faults` go first.

    Its OpenAlex answers follow the service's own code, not a guess: the 400 rules of
    ourresearch/openalex-elastic-api (core/search.py, core/fields.py, core/filter.py), the cursor of
    core/cursor.py as the real API now sends it (a `next_cursor` on the last non-empty page too, as the
    recordings in tests/data/recordings show), and the keys, credits and 429s of
    ourresearch/openalex-api-proxy (src/index.ts, src/rateLimiter.ts, src/endpointClassifier.ts).
    """

    def __init__(self, works: list[dict], feed_pages: list[str] | None = None, page_size: int = 2,
                 keys: set[str] | None = None, credits: int | None = None) -> None:
        self.works, self.feed_pages, self.page_size = works, feed_pages or [], page_size
        self.keys = keys  # None: any key, or none, is accepted; else the keys the API knows
        self.credits = credits  # None: unmetered; else the credits left today (search 10, list 1)
        self.refused_dois: set[str] = set()  # DOIs answered with a 400 (an injected fault, not an API rule)
        self.faults: list[tuple] = []  # (status, headers, body) or ("truncated",) served before real answers
        self.requests: list[tuple[str, dict]] = []
        self.lock = threading.Lock()
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                url = urllib.parse.urlsplit(self.path)
                params = {k: v[0] for k, v in urllib.parse.parse_qs(url.query).items()}
                with api.lock:
                    api.requests.append((url.path, params))
                    fault = api.faults.pop(0) if api.faults else None
                if fault == ("truncated",):
                    body = json.dumps({"meta": {}, "results": api.works}).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                status, headers, body = fault or api.answer(url.path, params)
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def answer(self, path: str, params: dict) -> tuple[int, dict, bytes]:
        if path == "/api/query":
            page = int(params.get("start", 0)) // int(params.get("max_results", 1))
            text = self.feed_pages[page] if page < len(self.feed_pages) else atom([], total=0)
            return 200, {"Content-Type": "application/atom+xml"}, text.encode()
        refusal = self.gate(path, params)
        if refusal:
            return refusal
        headers = dict(JSON)
        if self.credits is not None:
            headers["X-RateLimit-Remaining"] = str(self.credits)
        if path == "/sources":
            return 200, headers, json.dumps({"meta": {"count": 1}, "results": [
                {"id": "https://openalex.org/S1", "display_name": params.get("search", "")}]}).encode()
        if path != "/works":
            return 404, JSON, b'{"error": "not found"}'
        try:
            clauses = validate(params)
        except Invalid as err:
            return 400, JSON, json.dumps({"error": "Invalid query parameters error.", "message": str(err)}).encode()
        works = self.works
        for key, value in clauses:
            if key == "openalex":
                wanted = {v.upper() for v in value.split("|")}
                works = [w for w in works if w["id"].rsplit("/", 1)[1] in wanted]
            elif key == "doi":
                wanted = {v.lower() for v in value.split("|")}
                if wanted & self.refused_dois:
                    refused = sorted(wanted & self.refused_dois)[0]
                    return 400, JSON, json.dumps({"error": "Invalid query parameters error.",
                                                  "message": f"{refused} is refused"}).encode()
                works = [w for w in works if w["doi"] and w["doi"].lower().removeprefix("https://doi.org/") in wanted]
            elif key == "cites":
                works = [w for w in works if f"https://openalex.org/{value}" in w["referenced_works"]]
            elif key == "title.search":  # every word in the title; ranked by citations, as the API boosts
                works = sorted((w for w in works if tokens(value) <= tokens(w["title"])),
                               key=lambda w: -w["cited_by_count"])
            elif key == "from_publication_date":
                works = [w for w in works if w["publication_date"] >= value]
            elif key == "to_publication_date":
                works = [w for w in works if w["publication_date"] <= value]
            elif key == "from_created_date":
                works = [w for w in works if w.get("created_date", "2026-01-01") >= value]
        if params.get("sort") == "cited_by_count:desc":
            works = sorted(works, key=lambda w: -w["cited_by_count"])
        asked = int(params.get("per-page", 25))
        size = min(asked, self.page_size) if "cursor" in params else asked
        start = 0 if params.get("cursor", "*") == "*" else int(params["cursor"][1:])
        chunk = works[start: start + size]
        # core/cursor.py ends the cursor on a short page, but the live API (recorded in
        # tests/data/recordings/openalex) sets it on every non-empty page: the empty page after ends it
        meta = {"count": len(works), "per_page": size, "next_cursor": f"c{start + size}" if chunk else None}
        return 200, headers, json.dumps({"meta": meta, "results": chunk, "group_by": []}).encode()

    def gate(self, path: str, params: dict) -> tuple[int, dict, bytes] | None:
        """What the proxy answers before the API: a refused key (401), a Premium-only filter (429, no
        Retry-After) and a spent daily budget (429, Retry-After = seconds to midnight UTC)."""
        key = params.get("api_key")
        if key and self.keys is not None and key not in self.keys:
            return 401, JSON, RECORDED_401
        flt = params.get("filter", "")
        if m := re.search(r"(?:from_|to_)?(?:updated|created)_date:[><]?\d{4}-\d{2}-\d{2}", flt):
            return 429, JSON, json.dumps({"error": "Plan upgrade required", "message": f'The "{m.group(0)}" filter '
                                          "requires a Premium, Institutional, or Partner plan. See "
                                          "https://openalex.org/pricing for details."}).encode()
        if self.credits is None:
            return None
        cost = 10 if ("search" in params or ".search:" in flt) else 1
        if self.credits < cost:
            now = dt.datetime.now(dt.timezone.utc)
            midnight = dt.datetime.combine(now.date() + dt.timedelta(days=1), dt.time(), dt.timezone.utc)
            wait = math.ceil((midnight - now).total_seconds())
            message = (f"Insufficient budget. This request costs ${cost / 10000} but you only have "
                       f"${self.credits / 10000} remaining. Resets at midnight UTC. Need more? Add funds at "
                       "https://openalex.org/pricing")
            return 429, {**JSON, "Retry-After": str(wait), "X-RateLimit-Remaining": str(self.credits),
                         "X-RateLimit-Reset": str(wait)}, json.dumps(
                {"error": "Rate limit exceeded", "message": message, "retryAfter": wait}).encode()
        self.credits -= cost
        return None


def tokens(text: str) -> set[str]:
    """The words an analyzer indexes: tags dropped, lower case, split at anything not a letter or digit."""
    return set(re.findall(r"\w+", re.sub(r"<[^>]+>", "", text).lower()))


class Invalid(Exception):
    """What openalex-elastic-api raises as APIQueryParamsError: HTTP 400 with its message."""


FIELDS = {"openalex", "doi", "cites", "title.search", "title_and_abstract.search", "from_publication_date",
          "to_publication_date", "primary_location.source.id", "type", "concepts.id", "title.search.exact",
          "from_created_date"}
RECORDED_401 = json.loads((REPO / "tests/data/recordings/openalex/error_401_unknown_key.json").read_text())["body"]
RECORDED_401 = RECORDED_401.encode()


def validate(params: dict) -> list[tuple[str, str]]:
    """The filter clauses of a /works request, or the 400 the API answers (core/paginate.py, core/utils.py
    map_filter_params, core/filter.py handle_or_query, core/fields.py OpenAlexIDField and SearchField,
    core/search.py validate_wildcards and validate_wildcard_requires_exact)."""
    per_page = params.get("per-page", params.get("per_page", "25"))
    if not per_page.isdigit() or not 1 <= int(per_page) <= 200:
        raise Invalid("per-page parameter must be between 1 and 200.")
    clauses = []
    for clause in filter(None, params.get("filter", "").split(",")):
        key, _, value = clause.partition(":")
        key = key.replace("-", "_") if key.replace("-", "_") in FIELDS else key
        if not value or value.lower() in ("none", "undefined"):
            raise Invalid(f"Invalid filter value for '{key}': value cannot be empty or '{value}'.")
        if key not in FIELDS:
            raise Invalid(f"{key} is not a valid field. Valid fields are underscore or hyphenated versions of: "
                          + ", ".join(sorted(FIELDS)))
        if len(value.split("|")) > 100:
            raise Invalid(f"Maximum number of values exceeded for {key}. Decrease values to 100 or below.")
        if key in ("openalex", "cites"):
            for v in value.split("|"):
                if not re.fullmatch(r"(?:https://openalex\.org/)?[Ww]\d+", v):
                    raise Invalid(f"'{v}' is not a valid OpenAlex ID.")
        if key.endswith(".search"):
            if any(word.startswith("!") for word in value.split()):
                raise Invalid(f"Search filters do not support the ! operator. Problem value: {value}")
            unquoted = re.sub(r'"([^"]*)"', " ", value)
            for word in unquoted.split():
                if len(word) > 1 and word[0] in "*?":
                    raise Invalid(f'Leading wildcards are not supported (too expensive): "{word}". '
                                  "Anchor the wildcard with at least 3 leading characters, e.g. cycle*.")
            if any("*" in word or "?" in word for word in unquoted.split()):
                raise Invalid(f'Wildcards (* or ?) require the exact (no-stem) field. "{key}" is stemmed, so the '
                              "literal text before the wildcard is removed when the work is indexed and the search "
                              f'returns wrong results. Use "{key}.exact" instead, e.g. {key}.exact:{value}.')
        clauses.append((key, value))
    return clauses


JSON = {"Content-Type": "application/json"}
HTML = (200, {"Content-Type": "text/html"}, b"<html><body><h1>502 Bad Gateway</h1></body></html>")


def atom(entries: list[tuple[str, str, str, str]], total: int) -> str:
    """An arXiv API Atom page: entries are (id with version, title, summary, published)."""
    items = "".join(f"""
  <entry>
    <id>http://arxiv.org/abs/{aid}</id><updated>{published}</updated><published>{published}</published>
    <title>{title}</title><summary>  {summary}
    </summary>
    <author><name>Grace Hopper</name></author>
    <arxiv:primary_category xmlns:arxiv="http://arxiv.org/schemas/atom" term="cs.CL" scheme="http://arxiv.org/schemas/atom"/>
    <category term="cs.CL" scheme="http://arxiv.org/schemas/atom"/><category term="cs.LG" scheme="http://arxiv.org/schemas/atom"/>
  </entry>""" for aid, title, summary, published in entries)
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title type="html">ArXiv Query</title><id>http://arxiv.org/api/x</id><updated>2024-01-01T00:00:00-05:00</updated>
  <opensearch:totalResults xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">{total}</opensearch:totalResults>
  <opensearch:startIndex xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">0</opensearch:startIndex>{items}
</feed>"""


@pytest.fixture
def api():
    servers: list[Api] = []

    def make(*args, **kwargs) -> Api:
        servers.append(Api(*args, **kwargs))
        return servers[-1]

    yield make
    for server in servers:
        server.close()


class Sleeps(list):
    """A fake `time.sleep` and the clock it moves: records the waits, so backoff and Retry-After are seen
    without waiting."""

    now = 0.0

    def __call__(self, seconds: float) -> None:
        self.append(round(seconds, 2))
        self.now += seconds

    def clock(self) -> float:
        return self.now


KEY = "test-key-0001"


def run(api: Api, tmp_path: Path, jobs, max_requests: int = 100, max_works: int = 1000, sleeps=None, today=None,
        **kwargs):
    out = kwargs.pop("out", tmp_path / "pulled.jsonl")
    kwargs.setdefault("api_key", KEY)
    plan = pull.PullPlan(out, tuple(jobs), max_works, max_requests, "me@example.org", api.base, f"{api.base}/api/query",
                         **kwargs)
    warnings: list[str] = []
    sleeps = sleeps if sleeps is not None else Sleeps()
    client = ApiClient(max_requests, sleep=sleeps, clock=sleeps.clock)
    return pull.run_pull(plan, warnings.append, show_progress=False, client=client, today=today), warnings


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


TOPIC = pull.OpenAlexJob(topic="graph neural networks, spectral", since="2020")


# --- OpenAlex ----------------------------------------------------------------------------------------------------------


def test_openalex_topic_pages_through_cursors_into_an_indexable_corpus(api, tmp_path):
    gappy = work(3, "Gaps and huge positions")
    gappy["abstract_inverted_index"] = {"Start": [0], "middle": [7], "end": [10**15], "junk": ["x"]}
    server = api([work(1, "First work", refs=[2]), work(2, "No abstract", abstract=None), gappy,
                  work(4, "Fourth work"), work(5, "Fifth work")])
    report, warnings = run(server, tmp_path, [TOPIC])
    assert report.complete and not report.stopped and report.total == 5 and report.added == {"openalex": 5}
    assert report.without_abstract == 1 and report.requests == 3 and warnings == []
    path, params = server.requests[0]
    assert path == "/works" and params["cursor"] == "*" and params["per-page"] == "200"
    assert params["api_key"] == KEY and "mailto" not in params and "abstract_inverted_index" in params["select"]
    assert params["filter"] == ("title_and_abstract.search:graph neural networks spectral,"
                                "from_publication_date:2020-01-01")
    assert [p["cursor"] for _, p in server.requests] == ["*", "c2", "c4"]
    rows = {r["id"]: r for r in records(tmp_path / "pulled.jsonl")}
    assert rows["W1"]["references"] == ["W2"] and rows["W1"]["venue"] == "Journal of Tests"
    assert rows["W1"]["date"] == "2020-03-04" and rows["W1"]["abstract"] == "Words of the abstract"
    assert "abstract" not in rows["W2"] and rows["W3"]["abstract"] == "Start middle end"
    papers = load_papers([tmp_path / "pulled.jsonl"])  # what `index build --corpus` reads
    assert len(papers) == 5 and papers[0].references == ("W2",) and papers[0].date == "2020-03-04"
    state = json.loads((tmp_path / "pulled.jsonl.pull-state.json").read_text())
    assert state["jobs"][TOPIC.key]["done"] is True
    again, _ = run(server, tmp_path, [TOPIC])  # a finished job is not asked again
    assert again.requests == 0 and again.total == 5 and again.before == 5


def test_429_with_retry_after_500_truncated_body_and_html_page_are_retried(api, tmp_path):
    server = api([work(1, "Only work")])
    server.faults = [(429, {"Retry-After": "7"}, b""), (500, JSON, b"{}"), ("truncated",), HTML,
                     (503, {"Content-Type": "text/html"}, b"<html>down</html>")]
    sleeps = Sleeps()
    report, _ = run(server, tmp_path, [TOPIC], sleeps=sleeps)
    assert report.complete and report.total == 1
    assert report.requests == 6 and report.rate_limited == 1 and report.retried == 4
    assert sleeps[:5] == [7.0, 1.0, 2.0, 4.0, 8.0]  # Retry-After, then exponential backoff


def test_html_page_forever_stops_with_a_message_and_keeps_the_file(api, tmp_path):
    server = api([work(1, "Only work")])
    server.faults = [HTML] * 50
    report, _ = run(server, tmp_path, [TOPIC])
    assert not report.complete and "HTML page instead of JSON" in report.stopped and "API base URL" in report.stopped
    assert report.requests == 6 and (tmp_path / "pulled.jsonl").read_text() == ""


def test_429_forever_stops_within_the_budget_keeps_what_it_has_and_resumes(api, tmp_path):
    server = api([work(n, f"Work number {n}") for n in range(1, 6)])
    server.faults = [None] + [(429, {"Retry-After": "1"}, b"")] * 100  # one good page, then 429 for ever
    server.faults[0] = server.answer("/works", {"filter": "", "cursor": "*", "per-page": "200"})
    report, _ = run(server, tmp_path, [TOPIC], max_requests=6)
    assert report.stopped.startswith("the request budget of 6 is used up") and "resume" in report.stopped
    assert report.requests == 6 and report.rate_limited == 5 and report.total == 2
    assert [r["id"] for r in records(tmp_path / "pulled.jsonl")] == ["W1", "W2"]
    state = json.loads((tmp_path / "pulled.jsonl.pull-state.json").read_text())
    assert state["jobs"][TOPIC.key] == {"done": False, "cursor": "c2", "fetched": 2, "newest": "2020-03-04"}
    server.faults = []  # the API recovers: the same command goes on from the cursor
    report, _ = run(server, tmp_path, [TOPIC])
    assert report.complete and report.total == 5 and report.before == 2 and report.added == {"openalex": 3}
    assert server.requests[-2][1]["cursor"] == "c2"


def test_ten_429_in_a_row_stop_even_with_budget_left(api, tmp_path):
    server = api([work(1, "Only work")])
    server.faults = [(429, {}, b"")] * 100
    sleeps = Sleeps()
    report, _ = run(server, tmp_path, [TOPIC], max_requests=1000, sleeps=sleeps)
    assert "429 Too Many Requests 10 times in a row" in report.stopped and report.requests == 10
    assert sleeps == [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 32.0, 32.0, 32.0]  # no Retry-After: backoff


def test_max_works_caps_and_a_larger_limit_goes_on(api, tmp_path):
    server = api([work(n, f"Work number {n}") for n in range(1, 6)])
    report, _ = run(server, tmp_path, [TOPIC], max_works=3)
    assert report.capped and not report.complete and not report.stopped and report.total == 3
    report, _ = run(server, tmp_path, [TOPIC], max_works=10)
    assert report.complete and report.total == 5


def dated(n: int, title: str, date: str) -> dict:
    w = work(n, title, year=int(date[:4]))
    w["publication_date"] = date
    return w


def test_update_reasks_an_overlap_window_and_catches_late_indexed_works(api, tmp_path):
    server = api([dated(1, "Old work", "2020-01-10"), dated(2, "Newer work", "2020-03-04")])
    assert run(server, tmp_path, [TOPIC])[0].total == 2
    # indexed after the first pull: one dated before the newest work held, one after it
    server.works += [dated(3, "Indexed late", "2020-02-20"), dated(4, "Newest work", "2020-06-01")]
    again, _ = run(server, tmp_path, [TOPIC])
    assert again.requests == 0  # without --update a finished job stays finished
    report, _ = run(server, tmp_path, [TOPIC], update=True, today=dt.date(2026, 11, 27))
    assert report.complete and report.added == {"openalex": 2} and report.total == 4
    assert report.duplicates == 1  # W2, inside the window, is asked again and deduplicated
    assert server.requests[-1][1]["filter"].endswith(",from_publication_date:2020-02-03")  # 30 days before
    report, _ = run(server, tmp_path, [TOPIC], update=True, overlap_days=0, today=dt.date(2026, 11, 27))
    assert report.added == {} and server.requests[-1][1]["filter"].endswith(",from_publication_date:2020-06-01")


def test_update_window_starts_no_later_than_today():
    assert pull.update_since("2031-01-01", dt.date(2026, 11, 27), 30) == "2026-10-28"  # a date in the future
    assert pull.update_since("2024-03", dt.date(2026, 11, 27), 7) == "2024-02-23"
    assert pull.update_since("garbage", dt.date(2026, 11, 27), 7) == ""


def test_venue_is_resolved_to_its_source_id(api, tmp_path):
    server = api([work(1, "Only work")])
    report, _ = run(server, tmp_path, [pull.OpenAlexJob(venue="Neural Information Processing Systems",
                                                        filter="type:article", until="2021-02")])
    assert report.complete
    assert server.requests[0] == ("/sources", {"search": "Neural Information Processing Systems", "per-page": "5",
                                               "api_key": KEY})
    assert server.requests[1][1]["filter"] == "type:article,primary_location.source.id:S1,to_publication_date:2021-02-28"


def test_a_rejected_query_is_a_user_error(api, tmp_path):
    server = api([work(1, "Only work")])
    with pytest.raises(pull.QueryRejected, match="HTTP 400: Invalid query parameters error.: bogus is not a valid"):
        run(server, tmp_path, [pull.OpenAlexJob(filter="bogus:1")])
    assert len(server.requests) == 1  # a 400 is not asked again


# --- arXiv --------------------------------------------------------------------------------------------------------------


def test_arxiv_feed_pages_with_three_seconds_between_requests(api, tmp_path, monkeypatch):
    monkeypatch.setattr(arxiv, "PAGE_SIZE", 2)
    pages = [atom([("2401.00001v2", "First  preprint", "An abstract.", "2024-01-02T10:00:00Z"),
                   ("2401.00002v1", "Second preprint", "Another.", "2024-01-03T10:00:00Z")], total=3),
             atom([("2401.00003v1", "Third preprint", "More.", "2024-01-04T10:00:00Z")], total=3)]
    server = api([], feed_pages=pages)
    sleeps = Sleeps()
    report, _ = run(server, tmp_path, [pull.ArxivJob(("cs.CL", "cs.LG"), since="2024-01", until="2024-01-31")],
                    sleeps=sleeps)
    assert report.complete and report.total == 3 and report.added == {"arxiv": 3}
    assert server.requests[0][1]["search_query"] == "(cat:cs.CL OR cat:cs.LG) AND submittedDate:[202401010000 TO 202401312359]"
    assert [p["start"] for _, p in server.requests] == ["0", "2"]
    assert sleeps and all(2.9 <= s <= 3.0 for s in sleeps)
    first = records(tmp_path / "pulled.jsonl")[0]
    assert first == {"id": "arXiv:2401.00001", "title": "First preprint", "abstract": "An abstract.", "venue": "arXiv",
                     "year": 2024, "date": "2024-01-02", "authors": ["Grace Hopper"],
                     "url": "https://arxiv.org/abs/2401.00001", "arxiv_id": "2401.00001", "categories": ["cs.CL", "cs.LG"]}


def test_arxiv_error_entry_is_a_user_error(api, tmp_path):
    error = atom([], total=1).replace("</feed>", """<entry><id>http://arxiv.org/api/errors#incorrect_id_format</id>
      <title>Error</title><summary>incorrect id format for 1234</summary></entry></feed>""")
    server = api([], feed_pages=[error])
    with pytest.raises(pull.QueryRejected, match="^arXiv rejected the query: incorrect id format for 1234; check"):
        run(server, tmp_path, [pull.ArxivJob(("cs.CL",))])


def test_same_work_from_openalex_and_arxiv_is_one_record(api, tmp_path):
    published = work(1, "Attention with gaps and spans", doi="10.5555/pub.1")
    published["locations"] = [{"landing_page_url": "https://arxiv.org/abs/2401.00001v3"}]
    server = api([published], feed_pages=[atom([("2401.00001v1", "Attention with gaps and spans", "Text.",
                                                 "2024-01-02T10:00:00Z")], total=1)])
    report, _ = run(server, tmp_path, [TOPIC, pull.ArxivJob(("cs.CL",))])
    assert report.total == 1 and report.added == {"openalex": 1} and report.merged + report.duplicates == 1
    (row,) = records(tmp_path / "pulled.jsonl")
    assert row["id"] == "W1" and row["doi"] == "10.5555/pub.1" and row["arxiv_id"] == "2401.00001"
    assert set(row["categories"]) == {"cs.CL", "cs.LG"}


# --- a project's bibliography ----------------------------------------------------------------------------------------------

BIB = r"""
@inproceedings{bydoi, title = {Seed found by DOI}, author = {Lovelace, Ada}, year = 2019, doi = {10.1234/SEED.ONE}}
@article{byarxiv, title = {Seed found by arXiv}, author = {Ada Lovelace}, journal = {arXiv preprint arXiv:1901.00002}, year = 2019}
@misc{bytitle, title = {Seed {Found} by its Title}, author = {Ada Lovelace}, year = {2018}}
@book{unknown, title = {A Book OpenAlex Does Not Have}, author = {Nobody}, year = {1970}}
@misc{notitle, author = {Nobody}, year = {1971}}
"""


def neighbourhood() -> list[dict]:
    return [
        work(1, "Seed found by DOI", refs=[10, 11], doi="10.1234/seed.one"),
        work(2, "Seed found by arXiv", refs=[10, 12], doi="10.48550/arxiv.1901.00002"),
        work(3, "Seed Found by its Title", refs=[10]),
        work(10, "Cited by all three seeds", refs=[20]), work(11, "Cited once", refs=[20, 21]),
        work(12, "Cited once too"),
        work(20, "Second hop, cited twice"), work(21, "Second hop, cited once"),
        work(30, "Cites a seed, cited a lot", refs=[1], cited_by=90), work(31, "Cites a seed, rarely cited", refs=[1], cited_by=1),
    ]


def test_bib_neighbourhood_two_hops(api, tmp_path):
    bib = tmp_path / "refs.bib"
    bib.write_text(BIB, encoding="utf-8")
    server = api(neighbourhood())
    report, _ = run(server, tmp_path, [pull.BibJob((bib,), hops=2, citing_per_work=1)])
    assert report.complete
    assert report.bib == {"entries": 5, "by_doi": 1, "by_arxiv": 1, "by_title": 1, "not_found": ["unknown", "notitle"],
                          "rejected": []}
    ids = [r["id"] for r in records(tmp_path / "pulled.jsonl")]
    assert ids[:3] == ["W1", "W2", "W3"]
    assert ids[3] == "W10"  # the frontier is fetched most-cited-by-the-neighbourhood first
    assert set(ids) == {"W1", "W2", "W3", "W10", "W11", "W12", "W30", "W20", "W21"}  # W31: only the top citing work
    filters = [p.get("filter", "") for path, p in server.requests if path == "/works"]
    assert filters[0] == "doi:10.1234/seed.one" and filters[1] == "doi:10.48550/arxiv.1901.00002"
    assert filters[2] == "title.search:Seed Found by its Title"
    assert "cites:W1" in filters and all(f != "title.search:" for f in filters)


def test_bib_neighbourhood_capped_by_max_works(api, tmp_path):
    bib = tmp_path / "refs.bib"
    bib.write_text(BIB, encoding="utf-8")
    report, _ = run(api(neighbourhood()), tmp_path, [pull.BibJob((bib,), hops=2)], max_works=4)
    assert report.capped and report.total == 4
    assert [r["id"] for r in records(tmp_path / "pulled.jsonl")] == ["W1", "W2", "W3", "W10"]


def test_bib_without_dois_goes_by_title(api, tmp_path):
    bib = tmp_path / "plain.bib"
    bib.write_text("@misc{a, title = {Cited once too}}\n@misc{b, title={Not anywhere at all}}\n", encoding="utf-8")
    report, _ = run(api(neighbourhood()), tmp_path, [pull.BibJob((bib,), hops=0)])
    assert report.complete and report.total == 1
    assert report.bib == {"entries": 2, "by_doi": 0, "by_arxiv": 0, "by_title": 1, "not_found": ["b"], "rejected": []}


# --- the command line ---------------------------------------------------------------------------------------------------------


def peerlint(*args: str, **env_vars: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "OPENALEX_API_KEY"}
    env.update({"HF_HUB_OFFLINE": "1", "PEERLINT_MAILTO": "me@example.org", **env_vars})
    return subprocess.run([sys.executable, "-m", "peerlint", *args], capture_output=True, text=True, cwd=REPO,
                          env=env, timeout=120)


def test_cli_pull_then_429_forever_says_how_to_resume(api, tmp_path):
    server = api([work(n, f"Work number {n}") for n in range(1, 4)])
    out = tmp_path / "corpus.jsonl"
    done = peerlint("corpus", "pull", "--topic", "graphs", "--out", str(out), "--openalex-api-base", server.base,
                    "--quiet")
    assert done.returncode == 0, done.stderr
    assert f"{out}: 3 works (0 before, 3 added: 3 openalex; 0 of them without an abstract)" in done.stdout
    assert f"peerlint index build --corpus {out}" in done.stdout
    server.faults = [(429, {"Retry-After": "0"}, b"")] * 100
    stuck = peerlint("corpus", "pull", "--venue", "NeurIPS", "--out", str(out), "--openalex-api-base", server.base,
                     "--max-requests", "3", "--json")
    assert stuck.returncode == 3, stuck.stderr
    summary = json.loads(stuck.stdout)
    assert summary["total"] == 3 and summary["requests"] == 3 and "run the same command again" in summary["stopped"]
    assert "Traceback" not in stuck.stderr


SECRET = "sk-peerlint-test-9f8e7d"


def test_cli_sends_the_key_and_never_prints_or_stores_it(api, tmp_path):
    server = api([work(n, f"Work number {n}") for n in range(1, 4)], keys={SECRET}, credits=10_000)
    out = tmp_path / "corpus.jsonl"
    done = peerlint("corpus", "pull", "--topic", "graphs", "--out", str(out), "--openalex-api-base", server.base,
                    "--json", OPENALEX_API_KEY=SECRET)
    assert done.returncode == 0, done.stderr
    assert all(p["api_key"] == SECRET and "mailto" not in p for _, p in server.requests)
    written = out.read_text() + (tmp_path / "corpus.jsonl.pull-state.json").read_text()
    assert SECRET not in done.stdout + done.stderr + written
    assert json.loads(done.stdout)["budget_left"] == str(10_000 - 2 * 10)
    refused = peerlint("corpus", "pull", "--topic", "other", "--out", str(out), "--openalex-api-base", server.base,
                       "--api-key", "sk-wrong-key")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr
    assert refused.stderr.startswith("peerlint: error: OpenAlex refused the API key (HTTP 401: Invalid or missing "
                                     "API key: API key not found)") and "sk-wrong-key" not in refused.stderr


def test_cli_spent_budget_ends_in_under_5_seconds_with_the_servers_message(api, tmp_path):
    server = api([work(n, f"Work number {n}") for n in range(1, 7)], credits=15)
    out = tmp_path / "corpus.jsonl"
    args = ("corpus", "pull", "--topic", "graphs", "--out", str(out), "--openalex-api-base", server.base)
    t0 = time.perf_counter()
    stuck = peerlint(*args, "--json")
    wall = time.perf_counter() - t0
    assert stuck.returncode == 3, stuck.stderr
    summary = json.loads(stuck.stdout)
    assert summary["total"] == 2 and summary["rate_limited"] == 1 and summary["seconds"] < 5
    assert wall < 15  # the whole process, interpreter start included, on a loaded 2-core machine
    assert "Insufficient budget." in summary["stopped"] and "Resets at midnight UTC" in summary["stopped"]
    again = peerlint(*args, "--quiet")  # the budget is still spent: one line says so and when to resume
    stopped = [line for line in again.stderr.splitlines() if line.startswith("peerlint: stopped:")]
    assert again.returncode == 3 and len(stopped) == 1 and "Insufficient budget." in stopped[0]
    assert "accepts requests again from" in stopped[0] and "--api-key" in stopped[0]
    assert f"{out}: 2 works" in again.stdout


@pytest.mark.parametrize("args, message", [
    ([], "nothing to pull: pass --topic"),
    (["--topic", "x", "--since", "last week"], "--since 'last week': write a date as YYYY"),
    (["--topic", "x", "--until", "2021-02-30"], "--until '2021-02-30': write a date as YYYY"),
    (["--topic", "x", "--max-requests", "0"], "--max-requests must be at least 1"),
    (["--from-bib", "missing.bib"], "--from-bib missing.bib does not exist"),
    (["--openalex", "bogus:1"], "answered HTTP 400"),
    (["--openalex", "from_created_date:2024-01-01"], "filter requires a Premium, Institutional, or Partner plan"),
    (["--topic", "x", "--update-overlap", "-1"], "--update-overlap must be 0 or more days"),
    (["--topic", "x", "--arxiv-api-base", "export.arxiv.org"], "--arxiv-api-base 'export.arxiv.org': give an http"),
])
def test_cli_bad_input_is_one_line_and_exit_2(api, tmp_path, args, message):
    server = api([work(1, "Only work")])
    result = peerlint("corpus", "pull", "--out", str(tmp_path / "c.jsonl"), "--openalex-api-base", server.base, *args)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr


# --- the live services' rules (issue #35) ------------------------------------------------------------------

QUESTIONS = r"""
@inproceedings{clark2019, title = {What Does {BERT} Look at? An Analysis of {BERT}'s Attention}, year = 2019}
@inproceedings{recht2019, title = {Do {ImageNet} Classifiers Generalize to {ImageNet}?}, year = 2019}
@inproceedings{star2020, title = {*Star* {AND} \emph{Bang}! Titles With Query Syntax: "Quoted" (Really) [Yes]}, year = 2020}
@inproceedings{latex2021, title = {{$\alpha$}-Divergence Bounds for \textit{Sparse} Models}, year = 2021}
"""


def test_bib_titles_with_query_syntax_complete(api, tmp_path):
    bib = tmp_path / "q.bib"
    bib.write_text(QUESTIONS, encoding="utf-8")
    server = api([work(1, "What Does BERT Look at? An Analysis of BERT's Attention"),
                  work(2, "Do ImageNet Classifiers Generalize to ImageNet?"),
                  work(3, "*Star* AND <i>Bang</i>! Titles with Query Syntax: “Quoted” (Really) [Yes]"),
                  work(4, "α-Divergence Bounds for <i>Sparse</i> Models")])
    report, warnings = run(server, tmp_path, [pull.BibJob((bib,), hops=0)])
    assert report.complete and report.total == 4 and report.rejected == [] and warnings == []
    assert report.bib["by_title"] == 4
    searched = [p["filter"] for _, p in server.requests]
    assert searched[0] == "title.search:What Does BERT Look at An Analysis of BERT's Attention"
    assert searched[2] == "title.search:Star and Bang Titles With Query Syntax Quoted Really Yes"
    assert all(p["per-page"] == "25" for _, p in server.requests)


def test_the_server_refuses_what_the_old_filter_value_sent(api, tmp_path):
    """The loopback's 400 is the API's own rule: the title the previous version sent is refused."""
    server = api([work(1, "Do ImageNet Classifiers Generalize to ImageNet?")])
    client = ApiClient(5, sleep=Sleeps())
    with pytest.raises(pull.QueryRejected, match=r"Wildcards \(\* or \?\) require the exact"):
        client.get_json(f"{server.base}/works", {"filter": "title.search:Do ImageNet Classifiers Generalize to ImageNet?"})
    with pytest.raises(pull.QueryRejected, match="do not support the ! operator"):
        client.get_json(f"{server.base}/works", {"filter": "title.search:!bang"})


def test_a_title_the_api_refuses_is_skipped_reported_and_not_asked_again(api, tmp_path):
    bib = tmp_path / "two.bib"
    bib.write_text("@misc{bad, title = {A Title The API Refuses}}\n@misc{good, title = {Seed found by DOI}}\n",
                   encoding="utf-8")
    server = api(neighbourhood())
    server.faults = [(400, JSON, b'{"error": "Invalid query parameters error.", "message": "refused for a test"}')]
    report, warnings = run(server, tmp_path, [pull.BibJob((bib,), hops=0)])
    assert report.complete and report.total == 1 and report.bib["by_title"] == 1
    assert report.bib["not_found"] == ["bad"] and report.bib["rejected"] == ["bad"]
    assert report.rejected == ["bib entry 'bad' (title 'A Title The API Refuses'): "
                               "Invalid query parameters error.: refused for a test"]
    assert any("OpenAlex refused bib entry 'bad'" in w for w in warnings)
    asked = len(server.requests)
    again, _ = run(server, tmp_path, [pull.BibJob((bib,), hops=0)])
    assert len(server.requests) == asked and again.bib["rejected"] == ["bad"]  # recorded in the state


def test_a_batch_with_one_refused_value_is_halved_until_it_is_alone(api, tmp_path):
    from peerlint.index.ingest.openalex import OpenAlex

    server = api([work(n, f"Work {n}") for n in (1, 2, 3)])
    refused: list[tuple[str, str]] = []
    client = ApiClient(20, sleep=Sleeps())
    got = OpenAlex(client, server.base).by_filter_values("openalex", ["W1", "W2", "Wxyz", "W3"],
                                                         lambda v, why: refused.append((v, why)))
    assert sorted(w["id"][-2:] for w in got) == ["W1", "W2", "W3"]
    assert refused == [("Wxyz", "Invalid query parameters error.: 'Wxyz' is not a valid OpenAlex ID.")]
    assert [p["filter"] for _, p in server.requests] == [
        "openalex:W1|W2|Wxyz|W3", "openalex:W1|W2", "openalex:Wxyz|W3", "openalex:Wxyz", "openalex:W3"]


def test_a_refused_doi_in_a_batch_is_skipped_and_its_entry_goes_by_title(api, tmp_path):
    bib = tmp_path / "refs.bib"
    bib.write_text(BIB, encoding="utf-8")
    server = api(neighbourhood())
    server.refused_dois = {"10.1234/seed.one"}
    report, _ = run(server, tmp_path, [pull.BibJob((bib,), hops=0)])
    assert report.complete and report.bib["by_arxiv"] == 1 and report.bib["rejected"] == ["bydoi"]
    assert report.bib["by_title"] == 2  # 'bydoi' found again by its title
    assert report.rejected == ["bib entry 'bydoi' (DOI 10.1234/seed.one): Invalid query parameters error.: "
                               "10.1234/seed.one is refused"]


def test_the_last_page_is_known_without_asking_for_an_empty_one(api, tmp_path):
    server = api([work(n, f"Work number {n}") for n in range(1, 5)])  # two full pages of 2
    report, _ = run(server, tmp_path, [TOPIC])
    assert report.complete and report.total == 4 and report.requests == 2  # the count is reached
    bib = tmp_path / "refs.bib"
    bib.write_text(BIB, encoding="utf-8")
    server = api(neighbourhood(), page_size=200)
    report, _ = run(server, tmp_path, [pull.BibJob((bib,), hops=1, citing_per_work=1)], out=tmp_path / "b.jsonl")
    frontier = [p["filter"] for _, p in server.requests if p["filter"].startswith("openalex:")]
    assert len(frontier) == 1  # one request for the batch: its page is short, though it carries a next_cursor


def test_a_rarely_cited_exact_title_is_found_among_25_candidates(api, tmp_path):
    famous = [work(100 + n, f"Attention Is All You Need {n} Times Over", cited_by=1000 - n) for n in range(12)]
    server = api(famous + [work(7, "Attention Is All You Need", cited_by=0)], page_size=200)
    bib = tmp_path / "a.bib"
    bib.write_text("@misc{vaswani, title = {Attention is All you Need}}\n", encoding="utf-8")
    report, _ = run(server, tmp_path, [pull.BibJob((bib,), hops=0)])
    assert report.bib["by_title"] == 1 and [r["id"] for r in records(tmp_path / "pulled.jsonl")] == ["W7"]


def test_a_spent_daily_budget_stops_at_once_with_the_servers_message(api, tmp_path):
    server = api([work(n, f"Work number {n}") for n in range(1, 7)], credits=15)  # one search page, not two
    sleeps = Sleeps()
    report, _ = run(server, tmp_path, [TOPIC], sleeps=sleeps, api_key="")
    assert report.total == 2 and report.requests == 2 and report.rate_limited == 1 and sleeps == [0.11]  # spacing only
    assert "Insufficient budget. This request costs $0.001 but you only have $0.0005 remaining. Resets at " \
           "midnight UTC" in report.stopped
    assert "accepts requests again from" in report.stopped and " 00:00 UTC (in " in report.stopped
    assert report.stopped.endswith(" min); run the same command again then to resume; an OpenAlex API key "
                                   "(--api-key or $OPENALEX_API_KEY) has a larger budget")
    assert report.budget_left == "5"
    server.credits = 100  # the next day: the same command goes on
    report, _ = run(server, tmp_path, [TOPIC])
    assert report.complete and report.total == 6 and report.before == 2


def test_short_429s_still_back_off(api, tmp_path):
    server = api([work(1, "Only work")])
    server.faults = [(429, {"Retry-After": "60"}, b'{"error": "Rate limit exceeded", "message": "Anonymous search '
                            b'is temporarily rate-limited. Please retry in 60s"}')] * 2
    sleeps = Sleeps()
    report, _ = run(server, tmp_path, [TOPIC], sleeps=sleeps)
    assert report.complete and sleeps == [60.0, 60.0]


def test_a_premium_only_filter_is_one_clear_error_not_ten_retries(api, tmp_path):
    server = api([work(1, "Only work")])
    with pytest.raises(pull.QueryRejected, match='"from_created_date:2024-01-01" filter requires a Premium'):
        run(server, tmp_path, [pull.OpenAlexJob(filter="from_created_date:2024-01-01")])
    assert len(server.requests) == 1


def test_a_refused_key_is_one_clear_message(api, tmp_path):
    server = api([work(1, "Only work")], keys={"good-key"})
    with pytest.raises(pull.KeyRefused) as caught:
        run(server, tmp_path, [TOPIC], api_key="not-a-key-42")
    assert str(caught.value).startswith("OpenAlex refused the API key (HTTP 401: Invalid or missing API key: API key "
                                        "not found); check it, or pass --api-key KEY or set $OPENALEX_API_KEY")
    assert "not-a-key-42" not in str(caught.value) and len(server.requests) == 1


def test_arxiv_cat_prefix_is_not_doubled():
    assert pull.plan_jobs(arxiv_categories=["cat:cs.CL", "cs.LG"])[0].query == "(cat:cs.CL OR cat:cs.LG)"
    assert arxiv.search_query(["cat:cs.CL"]) == "cat:cs.CL"


# --- resume states of the previous version --------------------------------------------------------------


def test_a_state_file_of_the_previous_version_resumes(api, tmp_path):
    server = api([work(n, f"Work number {n}") for n in range(1, 6)])
    out = tmp_path / "pulled.jsonl"
    first, _ = run(server, tmp_path, [TOPIC], max_works=2)
    bib = tmp_path / "refs.bib"
    bib.write_text(BIB, encoding="utf-8")
    # what the previous version wrote: no "fetched", no "rejected"
    old = {"version": 1, "jobs": {TOPIC.key: {"done": False, "cursor": "c2", "newest": "2020-03-04"},
                                  pull.BibJob((bib,), hops=0).key: {"done": False, "seeds": {"bydoi": "W1"},
                                                                    "how": {"bydoi": "doi"}, "layer": {"W1": 0},
                                                                    "citing_done": [], "hop_done": []}}}
    (tmp_path / "pulled.jsonl.pull-state.json").write_text(json.dumps(old))
    report, warnings = run(server, tmp_path, [TOPIC], out=out)
    assert report.complete and report.total == 5 and report.before == 2 and warnings == []
    assert server.requests[-2][1]["cursor"] == "c2"  # resumed where it was
    server.works += neighbourhood()[1:3]
    report, warnings = run(server, tmp_path, [pull.BibJob((bib,), hops=0)], out=out)
    assert report.complete and warnings == [] and report.bib["by_doi"] == 1 and report.bib["by_arxiv"] == 1


@pytest.mark.parametrize("state, says", [
    ({"version": 7, "jobs": {}}, "a resume state of another format (version 7"),
    ([1, 2], "a resume state of another format (version 'list'"),
    ({"version": 1, "jobs": {TOPIC.key: {"done": False, "cursor": 12, "fetched": "x"}}}, "is damaged"),
])
def test_a_state_file_it_cannot_use_is_one_warning_and_nothing_is_lost(api, tmp_path, state, says):
    server = api([work(n, f"Work number {n}") for n in range(1, 4)])
    run(server, tmp_path, [TOPIC], max_works=2)
    (tmp_path / "pulled.jsonl.pull-state.json").write_text(json.dumps(state))
    report, warnings = run(server, tmp_path, [TOPIC])
    assert report.complete and report.before == 2 and report.total == 3
    assert len(warnings) == 1 and says in warnings[0]


@pytest.mark.parametrize("base, says", [("foo", "is not an http(s) URL"),
                                        ("http://127.0.0.1:9/a b", "cannot be reached")])
def test_no_failure_message_carries_the_key(base, says):
    client = ApiClient(3, retries=0, sleep=Sleeps())
    with pytest.raises(pull.FetchError) as caught:
        client.get_json(f"{base}/works", {"api_key": SECRET, "filter": "type:article"})
    assert says in str(caught.value) and SECRET not in str(caught.value)


def test_the_summary_offers_to_index_only_what_was_fetched(tmp_path):
    """A pull whose first request failed (no network) holds nothing: no `index build` hint for an empty file."""
    from peerlint.index.ingest.pull_session import PullReport
    from peerlint.server.commands.corpus import summary

    out = tmp_path / "pulled.jsonl"
    empty = PullReport(out=out, state=tmp_path / "s.json", before=0, requests=6, retried=5,
                       stopped="https://api.openalex.org/works cannot be reached")
    assert "index it with" not in summary(empty) and "requests: 6 (0 answered 429, 5 retried" in summary(empty)
    held = PullReport(out=out, state=tmp_path / "s.json", before=0, total=3, added={"openalex": 3}, complete=True)
    assert summary(held).endswith(f"index it with: peerlint index build --corpus {out}")


def test_update_by_created_asks_what_openalex_added_since_the_last_pull(api, tmp_path):
    server = api([dated(1, "Old work", "2020-01-10")])
    first, _ = run(server, tmp_path, [TOPIC], today=dt.date(2026, 10, 1))
    state = json.loads((tmp_path / "pulled.jsonl.pull-state.json").read_text())
    assert state["jobs"][TOPIC.key]["pulled_on"] == "2026-10-01"
    with pytest.raises(pull.QueryRejected, match="requires a Premium"):  # what a key without the plan gets
        run(server, tmp_path, [TOPIC], update=True, update_by="created", overlap_days=7, today=dt.date(2026, 11, 27))
    assert server.requests[-1][1]["filter"].endswith(",from_publication_date:2020-01-01,from_created_date:2026-09-24")
    server.gate = lambda path, params: None  # a Premium key
    server.works += [dict(dated(2, "Indexed in November, dated 2020", "2020-05-05"), created_date="2026-11-02"),
                     dict(dated(3, "Indexed before the last pull", "2020-06-06"), created_date="2026-08-01")]
    report, _ = run(server, tmp_path, [TOPIC], update=True, update_by="created", overlap_days=7,
                    today=dt.date(2026, 11, 27))
    assert report.complete and server.requests[-1][1]["filter"].endswith(",from_created_date:2026-09-24")
    assert report.added == {"openalex": 1} and records(tmp_path / "pulled.jsonl")[-1]["id"] == "W2"
    report, _ = run(server, tmp_path, [TOPIC], update=True, today=dt.date(2026, 11, 28))  # back to published
    assert "created" not in server.requests[-1][1]["filter"]
    assert server.requests[-1][1]["filter"].endswith(",from_publication_date:2020-04-05")  # W2 is the newest


def test_a_429_asking_for_an_hour_stops_now_and_says_when(api, tmp_path):
    server = api([], feed_pages=[atom([("2401.00001v1", "A preprint", "Text.", "2024-01-02T10:00:00Z")], total=1)])
    server.faults = [(429, {"Retry-After": "3600"}, b"")]
    sleeps = Sleeps()
    report, _ = run(server, tmp_path, [pull.ArxivJob(("cs.CL",))], sleeps=sleeps, api_key="")
    assert sleeps == [] and report.requests == 1 and report.total == 0
    assert report.stopped.startswith("http://127.0.0.1:") and "/api/query answered 429: Too Many Requests;" in report.stopped
    assert "(in 1 h 0 min); run the same command again then to resume" in report.stopped
    assert "API key" not in report.stopped  # an OpenAlex key would not help arXiv
