"""The app's guards against other web pages in the same browser: a request naming another host (DNS rebinding)
is refused while it listens on loopback, and a write from another origin (a cross-site form post, a generated
site in the arena's frames on another port) is refused."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from runner.view.app import ViewState, create_app, serve
from runner.view.catalog import Catalog


def _status(url: str, *, method: str = "GET", headers: dict[str, str] | None = None) -> int:
    request = urllib.request.Request(url, method=method, headers=headers or {}, data=b"{}" if method == "POST" else None)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


@pytest.fixture(scope="module")
def base_url() -> str:
    with serve(create_app(ViewState(Catalog([])))) as url:
        yield url


def test_a_request_naming_another_host_is_refused_on_loopback(base_url: str) -> None:
    assert _status(base_url + "/") == 200
    port = base_url.rsplit(":", 1)[1]
    assert _status(base_url + "/", headers={"Host": f"localhost:{port}"}) == 200
    assert _status(base_url + "/", headers={"Host": f"attacker.example:{port}"}) == 421
    assert _status(base_url + "/static/view.css", headers={"Host": "attacker.example"}) == 421


def test_a_write_from_another_origin_is_refused(base_url: str) -> None:
    other_port = int(base_url.rsplit(":", 1)[1]) + 1
    refused = _status(base_url + "/annotate/api/labels", method="POST",
                      headers={"Origin": f"http://127.0.0.1:{other_port}", "Content-Type": "application/json"})
    assert refused == 403
    # the same write from the app's own origin passes the guard (and meets the app: no such mode here, 404)
    own = _status(base_url + "/annotate/api/labels", method="POST",
                  headers={"Origin": base_url, "Content-Type": "application/json"})
    assert own == 404
