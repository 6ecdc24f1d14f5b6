"""The demo server's Batch API behaves as the API does (issue 42 §6), over real loopback HTTP: timestamps set once,
metadata kept, ``limit`` and ``after`` on the batch list, files listed and deleted, a failed validation with its
``failed_at``, an upload over the body limit answered 413 (not a reset), and stored files bounded."""

from __future__ import annotations

import json

import httpx

from relgate_tui.demo import DemoServer
from relgate_tui.demo import batches as demo_batches
from relgate_tui.demo.batches import BatchKnobs
from relgate_tui.demo.server import MAX_BODY_BYTES


def _line(i: int) -> bytes:
    body = {"model": "sim-mid", "messages": [{"role": "user", "content": "What is 2 + 2?"}], "seed": i}
    return json.dumps({"custom_id": f"r/i/{i}", "method": "POST", "url": "/v1/chat/completions",
                       "body": body}).encode() + b"\n"


def _upload(client: httpx.Client, data: bytes) -> httpx.Response:
    return client.post("/files", data={"purpose": "batch"}, files={"file": ("b.jsonl", data, "application/jsonl")})


def test_batch_objects_keep_their_timestamps_and_metadata_and_the_list_pages() -> None:
    with DemoServer(batches=BatchKnobs(polls=1)) as server, \
            httpx.Client(base_url=server.base_url, trust_env=False, timeout=30) as client:
        ids = []
        for n in range(3):
            file_id = _upload(client, _line(n)).json()["id"]
            created = client.post("/batches", json={"input_file_id": file_id, "endpoint": "/v1/chat/completions",
                                                    "completion_window": "24h", "metadata": {"round": str(n)}})
            assert created.json()["metadata"] == {"round": str(n)}
            ids.append(created.json()["id"])
        done = client.get(f"/batches/{ids[0]}").json()
        assert done["status"] == "completed" and isinstance(done["completed_at"], int)
        server.batches._batches[ids[0]].ended_at["completed_at"] -= 100  # as if it completed 100 s ago
        again = client.get(f"/batches/{ids[0]}").json()
        assert again["completed_at"] == done["completed_at"] - 100  # read back, never recomputed
        assert again["metadata"] == {"round": "0"}
        page = client.get("/batches", params={"limit": "2"}).json()
        assert [b["id"] for b in page["data"]] == [ids[2], ids[1]] and page["has_more"] is True
        rest = client.get("/batches", params={"limit": "2", "after": ids[1]}).json()
        assert [b["id"] for b in rest["data"]] == [ids[0]] and rest["has_more"] is False
        assert client.get("/batches", params={"limit": "0"}).status_code == 400

        bad = _upload(client, b"not a request line\n").json()["id"]
        failed = client.post("/batches", json={"input_file_id": bad, "endpoint": "/v1/chat/completions",
                                               "completion_window": "24h"}).json()
        assert failed["status"] == "failed" and failed["failed_at"] == failed["created_at"]


def test_files_are_listed_and_deleted_and_an_oversized_upload_is_a_413() -> None:
    with DemoServer() as server, httpx.Client(base_url=server.base_url, trust_env=False, timeout=60) as client:
        file_id = _upload(client, _line(1)).json()["id"]
        listed = client.get("/files").json()
        assert [f["id"] for f in listed["data"]] == [file_id]
        first = client.get(f"/files/{file_id}").json()["created_at"]
        assert client.get(f"/files/{file_id}").json()["created_at"] == first
        gone = client.delete(f"/files/{file_id}")
        assert gone.status_code == 200 and gone.json() == {"id": file_id, "object": "file", "deleted": True}
        assert client.get(f"/files/{file_id}/content").status_code == 404
        assert client.get("/files").json()["data"] == []
        too_big = _upload(client, b" " * (MAX_BODY_BYTES + 1))
        assert too_big.status_code == 413 and "too large" in too_big.json()["error"]["message"]


def test_stored_files_are_bounded(monkeypatch) -> None:
    monkeypatch.setattr(demo_batches, "MAX_STORED_BYTES", 3 * len(_line(0)))
    with DemoServer() as server, httpx.Client(base_url=server.base_url, trust_env=False, timeout=30) as client:
        ids = [_upload(client, _line(i)).json()["id"] for i in range(5)]
        kept = [f["id"] for f in client.get("/files").json()["data"]]
        assert kept == ids[-3:]  # the oldest forgotten first
