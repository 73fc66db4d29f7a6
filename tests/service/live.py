"""A served app and a headless Chromium for the browser tests (``test_browser.py``,
``test_document_browser.py``, ``test_report_browser.py``).

Chromium comes from the system (``make setup`` installs Debian's ``chromium``); without it the
tests fail rather than skip, unless ``FACTSCOUT_NO_BROWSER=1`` says to skip them on purpose."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")


def chromium_path() -> str:
    for name in (os.environ.get("FACTSCOUT_CHROMIUM", ""), *CHROMIUM_NAMES):
        found = shutil.which(name) if name else None
        if found:
            return found
    if os.environ.get("FACTSCOUT_NO_BROWSER") == "1":
        pytest.skip("FACTSCOUT_NO_BROWSER=1: browser tests skipped on purpose")
    pytest.fail("no Chromium found (install Debian's chromium: `make setup` does) or set FACTSCOUT_CHROMIUM")


@contextlib.contextmanager
def served(app: Any) -> Iterator[str]:
    """``app`` served by uvicorn on a free loopback port, in a thread; its base URL."""
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", lifespan="on", timeout_graceful_shutdown=1
    )
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    while not srv.started:
        if time.monotonic() > deadline or not thread.is_alive():
            pytest.fail("the test server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        srv.should_exit = True
        thread.join(10)


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium (Playwright) for the module's tests."""
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, headless=True, args=["--no-sandbox"])
        try:
            yield b
        finally:
            b.close()
