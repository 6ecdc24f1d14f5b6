"""The sampler's run-store writer (engine/certification/pipeline.StoreWriter, issue 32 §6): samples of one turn of
the event loop in one write, each on disk before any event after it is seen, and a failed write never lost."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from relgate_tui.demo import DemoServer
from relgate_tui.engine.certification.certify import CertifyConfig, prepare
from relgate_tui.engine.certification.pipeline import Done, Sampling, StoreWriter, run
from relgate_tui.engine.records import StoredSample
from relgate_tui.engine.transport.sampler import SampleDone


def test_every_sample_is_on_disk_before_its_event_and_writes_are_batched(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path))
    with DemoServer(honour_n=False) as server:
        cfg = CertifyConfig(task="bigbench-3digit-addition", endpoint=server.base_url, model="sim-mid", limit=12,
                            k_max=6, stopping="none", concurrency=6, run_dir=str(tmp_path / "runs"),
                            cache_dir=str(tmp_path / "cache")).validate()
        prepared = prepare(cfg)
        writes: list[int] = []
        append = prepared.store.append_samples

        def counting(samples, **kw):
            batch = list(samples)
            writes.append(len(batch))
            return append(batch, **kw)

        monkeypatch.setattr(prepared.store, "append_samples", counting)
        samples_file = prepared.store.path / "samples.jsonl"
        seen: list[tuple[str, int]] = []

        async def consume() -> list:
            events = []
            async for event in run(prepared):
                events.append(event)
                if isinstance(event, Sampling) and isinstance(event.event, SampleDone):
                    seen.append((event.event.item_id, event.event.index))
                    on_disk = samples_file.read_bytes().count(b"\n")
                    assert on_disk >= len(seen)  # this sample (and every one seen before it) is in the file
            return events

        try:
            events = asyncio.run(consume())
        finally:
            prepared.close()
    assert isinstance(events[-1], Done) and len(seen) == 72 == sum(writes)
    assert len(writes) < 72  # some turns of the loop carried several samples: one write each


def test_a_failed_write_is_raised_by_the_next_persist_and_by_flush() -> None:
    class Full:
        def append_samples(self, samples, **kw):
            raise OSError(28, "No space left on device")

    writer = StoreWriter(Full())  # type: ignore[arg-type]
    sample = StoredSample.trusted("q1", 0, "7", "7", {"prompt_tokens": 1, "completion_tokens": 1}, "f" * 16)

    async def main() -> None:
        writer(sample)  # queued for the loop's next turn
        loop = asyncio.get_running_loop()
        written = loop.create_future()
        loop.call_soon(written.set_result, None)  # callbacks run in order: this one after the queued write
        await written
        assert isinstance(writer.error, OSError)  # the write ran and failed
        with pytest.raises(OSError, match="No space"):
            writer(sample)
        with pytest.raises(OSError, match="No space"):
            writer.flush()

    asyncio.run(main())
