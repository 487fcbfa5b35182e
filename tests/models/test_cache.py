"""The sqlite response cache: keys, persistence, concurrency across threads and processes."""

from __future__ import annotations

import asyncio
import multiprocessing
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from runner.models.base import ModelResponse
from runner.models.cache import ResponseCache, cache_key

MSGS = [{"role": "user", "content": "make a button"}]


def _key(**overrides):
    args = {"endpoint": "http://127.0.0.1:8000/v1", "model": "m", "messages": MSGS, "parameters": {"temperature": 0.0}}
    args.update(overrides)
    return cache_key(**args)


def test_key_is_canonical_and_sensitive():
    assert _key() == _key(endpoint="http://127.0.0.1:8000/v1/")  # trailing slash is the same endpoint
    assert _key(parameters={"temperature": 0.0, "max_tokens": 5}) == _key(
        parameters={"max_tokens": 5, "temperature": 0.0}
    )
    assert _key() != _key(parameters={"temperature": 0.7})
    assert _key() != _key(model="other")
    assert _key() != _key(endpoint="http://127.0.0.1:9000/v1")
    assert _key() != _key(messages=[{"role": "user", "content": "make two buttons"}])
    assert len(_key()) == 64


def test_put_get_roundtrip_and_persistence(tmp_path: Path):
    path = tmp_path / "sub" / "cache.db"
    with ResponseCache(path) as cache:
        assert cache.get(_key()) is None
        cache.put(
            _key(), ModelResponse(text="answer", usage={"prompt_tokens": 3, "completion_tokens": 4}, latency_s=2.0)
        )
        hit = cache.get(_key())
        assert hit is not None and hit.text == "answer" and hit.cached
        assert hit.usage == {"prompt_tokens": 3, "completion_tokens": 4}
    with ResponseCache(path) as again:  # survives reopening
        assert again.get(_key()).text == "answer"
        assert len(again) == 1
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_empty_answers_are_not_cached(tmp_path: Path):
    with ResponseCache(tmp_path / "c.db") as cache:
        cache.put(_key(), ModelResponse(text=""))
        cache.put(_key(), ModelResponse(text="  \n"))
        assert cache.get(_key()) is None and len(cache) == 0


def test_concurrent_async_tasks_share_one_cache(tmp_path: Path):
    cache = ResponseCache(tmp_path / "c.db")

    async def worker(i: int) -> str:
        key = _key(messages=[{"role": "user", "content": f"task {i}"}])
        await asyncio.to_thread(cache.put, key, ModelResponse(text=f"answer {i}"))
        got = await asyncio.to_thread(cache.get, key)
        return got.text

    async def main() -> list[str]:
        return await asyncio.gather(*(worker(i) for i in range(50)))

    assert asyncio.run(main()) == [f"answer {i}" for i in range(50)]
    assert len(cache) == 50
    cache.close()


def test_threads_hammering_same_key(tmp_path: Path):
    cache = ResponseCache(tmp_path / "c.db")
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: cache.put(_key(), ModelResponse(text=f"v{i}")), range(100)))
    assert len(cache) == 1 and cache.get(_key()).text.startswith("v")
    cache.close()


def _process_writer(path: str, start: int) -> None:
    cache = ResponseCache(path)
    for i in range(start, start + 25):
        cache.put(_key(messages=[{"role": "user", "content": str(i)}]), ModelResponse(text=f"p{i}"))
    cache.close()


def test_several_processes_write_one_file(tmp_path: Path):
    path = str(tmp_path / "shared.db")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_process_writer, args=(path, n * 25)) for n in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    with ResponseCache(path) as cache:
        assert len(cache) == 75
        assert cache.get(_key(messages=[{"role": "user", "content": "60"}])).text == "p60"


def test_each_repeat_draws_answers_of_its_own(tmp_path: Path) -> None:
    args = dict(endpoint="http://x/v1", model="m", messages=[{"role": "user", "content": "hi"}], parameters={"t": 0})
    first, again, second = (ResponseCache(tmp_path / "c.sqlite", draw=d) for d in (0, 0, 1))
    assert first.key(**args) == again.key(**args) == cache_key(**args)  # repeat 0 keys as before the option
    assert second.key(**args) != first.key(**args)
    first.put(first.key(**args), ModelResponse(text="answer of repeat 0"))
    assert again.get(again.key(**args)).text == "answer of repeat 0"
    assert second.get(second.key(**args)) is None
