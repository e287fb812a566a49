"""`kgmem serve`'s JSON API, driven with httpx against a server process on the sample
build: answers as the CLI's `--json`, each naming its snapshot; bad requests get 4xx
JSON naming the field and leave the server up; a bearer token guards every route."""

from __future__ import annotations

import json

import httpx
import pytest

from benchmarks.serve_process import running_server
from kgmem.cli import main

QUESTION = "Where does Priya Natarajan work?"


@pytest.fixture(scope="module")
def server(sample_build):
    workspace = sample_build[0]
    with running_server(workspace.root, "--mcp", "off") as running:
        yield workspace, running


def test_query_returns_what_kgmem_query_json_prints(server, capsys):
    workspace, running = server
    response = httpx.post(f"{running.url}/query", json={"text": QUESTION, "k": 3})
    assert response.status_code == 200
    served = response.json()
    assert main(["query", QUESTION, "-k", "3", "--json", "--home", str(workspace.root)]) == 0
    printed = json.loads(capsys.readouterr().out)
    del printed["explanation"]  # served only with explain
    assert served == printed
    assert response.headers["X-Kgmem-Snapshot"] == served["snapshot_id"]
    explained = httpx.post(f"{running.url}/query", json={"text": QUESTION, "explain": True})
    assert "explanation" in explained.json()


def test_facts_entities_and_snapshots_name_their_snapshot(server, capsys):
    workspace, running = server
    snapshots = httpx.get(f"{running.url}/snapshots").json()
    assert main(["snapshots", "--json", "--home", str(workspace.root)]) == 0
    assert snapshots["snapshots"] == json.loads(capsys.readouterr().out)
    served = snapshots["snapshot_id"]
    facts = httpx.get(f"{running.url}/facts", params={"entity": "Priya Natarajan"}).json()
    assert main(["facts", "Priya Natarajan", "--json", "--home", str(workspace.root)]) == 0
    assert facts["facts"] == json.loads(capsys.readouterr().out)
    assert facts["snapshot_id"] == served and facts["facts"]
    entity = httpx.get(f"{running.url}/entities/Natarajan").json()
    assert entity["snapshot_id"] == served
    assert entity["entity"]["name"] == "Priya Natarajan"
    assert "Natarajan" in entity["entity"]["aliases"]
    assert httpx.get(f"{running.url}/health").json()["snapshot_id"] == served


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "field"),
    [
        ("post", "/query", {"text": "x", "strategy": "nope"}, 422, "strategy"),
        ("post", "/query", {"text": "x", "k": 0}, 422, "k"),
        ("post", "/query", {"text": "x", "k": 1001}, 422, "k"),
        ("post", "/query", {"text": "x", "valid_at": "last Tuesday"}, 422, "valid_at"),
        ("post", "/query", {"text": "x", "snapshot": "snap-000000000000"}, 404, "snapshot"),
        ("post", "/query", {"text": "x", "colour": "red"}, 422, "colour"),
        ("post", "/query", {"text": "x", "options": {"bogus": 1}}, 422, "options"),
        ("post", "/query", {"text": "x" * 70_000}, 413, "body"),
        ("post", "/query", b"{not json", 400, "body"),
        ("get", "/facts?entity=Priya%20Natarajan&known_at=2024-13-45", None, 422, "known_at"),
        ("get", "/facts", None, 422, "entity"),
        ("get", "/entities/Priya%20Natarajan?snapshot=snap-nope", None, 404, "snapshot"),
    ],
)
def test_bad_requests_get_4xx_naming_the_field(server, method, path, body, status, field):
    _, running = server
    if isinstance(body, bytes):
        response = httpx.request(method, f"{running.url}{path}", content=body)
    else:
        response = httpx.request(method, f"{running.url}{path}", json=body)
    assert response.status_code == status, response.text
    assert response.json()["field"] == field
    assert "Traceback" not in response.text
    assert httpx.get(f"{running.url}/health").status_code == 200  # still up


def test_openapi_document_and_docs_page_are_served(server):
    _, running = server
    document = httpx.get(f"{running.url}/openapi.json").json()
    assert document["openapi"].startswith("3.")
    assert {"/query", "/facts", "/entities/{name}", "/snapshots", "/health"} <= set(
        document["paths"]
    )
    query = document["components"]["schemas"]["QueryRequest"]["properties"]
    assert query["k"]["maximum"] == 1000
    assert "openapi.json" in httpx.get(f"{running.url}/docs").text


def test_bearer_token_guards_every_route(sample_build, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("s3cret-token\n")
    home = sample_build[0].root
    with running_server(home, "--token-file", str(token_file), token="s3cret-token") as running:
        for path in ("/health", "/snapshots", "/openapi.json", "/mcp"):
            assert httpx.get(f"{running.url}{path}").status_code == 401
        wrong = {"Authorization": "Bearer wrong"}
        assert (
            httpx.post(f"{running.url}/query", json={"text": "x"}, headers=wrong).status_code == 401
        )
        right = {"Authorization": "Bearer s3cret-token"}
        answered = httpx.post(f"{running.url}/query", json={"text": QUESTION}, headers=right)
        assert answered.status_code == 200 and answered.json()["hits"]


def test_non_loopback_bind_without_token_is_refused(sample_build, capsys):
    home = str(sample_build[0].root)
    assert main(["serve", "--home", home, "--host", "0.0.0.0", "--port", "0"]) == 2
    error = capsys.readouterr().err
    assert "--host 0.0.0.0 is not a loopback address" in error
    assert len(error.strip().splitlines()) == 1


def test_bench_drive_counts_every_request_within_its_bounds(server):
    from benchmarks.serve_latency import drive

    _, running = server
    latencies, failed, wall = drive(running.url, "dense", [QUESTION], 4, 12, 60.0)
    assert (len(latencies), failed) == (12, 0)
    assert 0 < max(latencies) <= wall
    latencies, failed, _ = drive(running.url, "no-such-strategy", [QUESTION], 2, 4, 60.0)
    assert (len(latencies), failed) == (0, 4)
