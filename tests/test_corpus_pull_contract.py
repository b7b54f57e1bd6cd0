"""`peerlint corpus pull` against recorded real responses of OpenAlex and arXiv (tests/data/recordings).

Each recording is served, byte for byte with its status and content type, from the loopback server of
test_corpus_pull.py, in front of its own answers; the request the pull makes is compared with the one
that was recorded. What these tests cannot show (today's 400 rules, budgets and 429s as the live services
apply them) is reproduced by that server from the services' code and tested in test_corpus_pull.py.
"""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

import pytest
from test_corpus_pull import JSON, Sleeps, api, records, run  # noqa: F401  (api is a fixture)

from peerlint.index.ingest import arxiv, pull
from peerlint.index.ingest.api_client import ApiClient
from peerlint.index.ingest.openalex import OpenAlex, work_to_paper
from peerlint.index.ingest.records import BadRecord

RECORDINGS = Path(__file__).resolve().parent / "data" / "recordings"


def recording(name: str) -> dict:
    return json.loads((RECORDINGS / f"{name}.json").read_text(encoding="utf-8"))


def served(name: str) -> tuple[int, dict, bytes]:
    """A recording as the loopback server's (status, headers, body)."""
    rec = recording(name)
    headers = {"Content-Type": rec["headers"].get("content-type", "application/json")}
    if "retry-after" in rec["headers"]:
        headers["Retry-After"] = rec["headers"]["retry-after"]
    return rec["status"], headers, rec["body"].encode("utf-8")


def recorded_params(name: str) -> dict[str, str]:
    query = urllib.parse.urlsplit(recording(name)["request"]).query
    return {k: v[0] for k, v in urllib.parse.parse_qs(query).items()}


ALL = sorted(str(p.relative_to(RECORDINGS).with_suffix("")) for p in RECORDINGS.glob("*/*.json"))


def test_the_recordings_are_small_and_documented():
    assert len(ALL) >= 10 and sum((RECORDINGS / f"{n}.json").stat().st_size for n in ALL) < 400_000
    source = (RECORDINGS / "SOURCE.md").read_text(encoding="utf-8")
    for name in ALL:
        assert Path(name).name + ".json" in source, f"{name} is not in SOURCE.md"
        assert recording(name)["origin"].split("@")[0] in source


@pytest.mark.parametrize("name", [n for n in ALL if n.startswith("openalex/")])
def test_every_recorded_openalex_response_parses(api, name):
    server = api([])
    server.faults = [served(name)]
    status = recording(name)["status"]
    client = OpenAlex(ApiClient(5, sleep=Sleeps()), server.base, api_key="k")
    if status == 401:
        with pytest.raises(pull.KeyRefused, match=r"^OpenAlex refused the API key \(HTTP 401: Invalid or missing API "
                                                  r"key: API key not found\)"):
            client.page("type:article")
    elif status == 400:
        with pytest.raises(pull.QueryRejected, match=r"HTTP 400: Invalid query parameters error\.: DOESNTEXIST is "
                                                     r"not a valid (select )?field"):
            client.page("type:article")
    elif "/works/W" in recording(name)["request"]:  # a single work, not a page
        work = json.loads(recording(name)["body"])
        with pytest.raises(BadRecord, match="no title and no abstract"):
            work_to_paper(work)
    else:
        page = client.page("type:article")
        body = json.loads(recording(name)["body"])
        assert len(page.works) == len(body["results"]) and page.count == body["meta"]["count"]
        papers = [work_to_paper(w) for w in page.works]
        assert all(p.id.startswith("W") and p.title and p.year and p.doi for p in papers)
        assert page.last  # short pages, though the API gave them a next_cursor
        assert (page.next_cursor is None) == (not page.works)


@pytest.mark.parametrize("name", [n for n in ALL if n.startswith("arxiv/")])
def test_every_recorded_arxiv_response_parses(api, name):
    rec = recording(name)
    server = api([])
    server.faults = [served(name)]
    feed_api = arxiv.ArxivApi(ApiClient(5, sleep=Sleeps()), f"{server.base}/api/query")
    if rec["status"] == 400:
        with pytest.raises(pull.QueryRejected) as caught:
            feed_api.page("cat:cs.CL", 0)
        assert str(caught.value) == ("arXiv rejected the query: incorrect id format for abc; check the categories "
                                     "(e.g. cs.CL) and the dates")
        assert "<" not in str(caught.value)
        return
    feed = feed_api.page("cat:cs.CL", 0)
    entries = rec["body"].count("<entry>")
    assert feed.entries == entries and len(feed.papers) == entries
    assert all(p.arxiv_id and p.title and p.abstract and p.date and p.authors and p.categories for p in feed.papers)


def test_a_batch_of_ids_is_one_request_though_the_api_sends_a_next_cursor(api, tmp_path):
    """The recorded exchange cost two requests (the second page empty); the pull makes one."""
    server = api([])
    server.faults = [served("openalex/works_openalex_two_ids_page1"), served("openalex/works_openalex_two_ids_page2_empty")]
    wanted = recorded_params("openalex/works_openalex_two_ids_page1")["filter"]
    report, _ = run(server, tmp_path, [pull.OpenAlexJob(filter=wanted)])
    assert report.complete and report.total == 2 and report.requests == 1
    ((path, params),) = server.requests
    assert path == "/works" and params["filter"] == wanted and params["cursor"] == "*" and params["per-page"] == "200"
    rows = {r["id"]: r for r in records(tmp_path / "pulled.jsonl")}
    assert rows["W3045921891"]["arxiv_id"] == "2007.14454"  # its DOI is arXiv's DataCite DOI
    assert rows["W3046863325"]["date"] == "2020-08-01" and rows["W3046863325"]["abstract"]


def test_a_recorded_citing_page_keeps_works_without_abstracts(api, tmp_path):
    server = api([])
    server.faults = [served("openalex/works_cites_two_ids_page1")]
    wanted = recorded_params("openalex/works_cites_two_ids_page1")["filter"]
    report, _ = run(server, tmp_path, [pull.OpenAlexJob(filter=wanted)])
    assert report.complete and report.requests == 1 and report.total == 5 and report.without_abstract == 2
    assert {r["id"] for r in records(tmp_path / "pulled.jsonl")} >= {"W4387316167", "W4415603090"}


def test_a_recorded_400_ends_the_pull_with_the_servers_message(api, tmp_path):
    server = api([])
    server.faults = [served("openalex/error_400_unknown_filter")]
    with pytest.raises(pull.QueryRejected) as caught:
        run(server, tmp_path, [pull.OpenAlexJob(filter="DOESNTEXIST:1")])
    assert "answered HTTP 400: Invalid query parameters error.: DOESNTEXIST is not a valid field." in str(caught.value)
    assert len(str(caught.value)) < 500  # the server's list of every field is cut


def test_the_loopback_answers_in_the_recorded_layout(api):
    """The loopback server's own pages have the keys and types of the recorded ones."""
    server = api([], page_size=200)
    mine = json.loads(server.answer("/works", {"filter": "openalex:W1", "per-page": "200", "cursor": "*"})[2])
    real = json.loads(recording("openalex/works_openalex_two_ids_page1")["body"])
    assert set(mine) <= set(real) and set(mine["meta"]) <= set(real["meta"])
    assert json.loads(server.answer("/works", {"filter": "DOESNTEXIST:1"})[2]).keys() == \
        json.loads(recording("openalex/error_400_unknown_filter")["body"]).keys()
