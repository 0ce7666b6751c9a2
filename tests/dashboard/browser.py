"""A real headless Chromium (Debian's chromium and chromedriver; nothing is downloaded) driven by Selenium, and a
`fairstream dashboard` process to point it at."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from fairstream.connectors.broker import free_port

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
FLAGS = (
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--window-size=1400,2000",
)  # fmt: skip
"""Headless, and no connections of Chromium's own: the machine's network is closed to them."""


def new_browser() -> Any:
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        pytest.skip(f"no Chromium here ({CHROMIUM}, {CHROMEDRIVER}): .ci/run installs Debian's chromium and chromium-driver where apt-get runs as root")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--user-data-dir={tempfile.mkdtemp(prefix='chromium-')}"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


@dataclass
class Dashboard:
    url: str
    process: subprocess.Popen

    def stderr(self) -> str:
        """What the process wrote to stderr (it is stopped first)."""
        self.process.terminate()
        return self.process.communicate(timeout=10)[1]


@contextlib.contextmanager
def dashboard(*args: str) -> Iterator[Dashboard]:
    """`fairstream dashboard ARGS` on a free port, once it answers."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "fairstream.cli", "dashboard", *args, "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(url + "api/snapshot", timeout=2).read()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"the dashboard did not start: {process.communicate()[1]}") from None
                time.sleep(0.2)
        yield Dashboard(url, process)
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=10)


def wait_for(browser: Any, condition: Callable[[Any], Any], timeout: float = 30, what: str = "") -> Any:
    """Poll `condition(browser)` until it is truthy; fail with `what` and the page's status line otherwise."""
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        return WebDriverWait(browser, timeout, poll_frequency=0.25).until(condition)
    except Exception as err:
        raise AssertionError(f"not seen within {timeout} s: {what}; status: {status(browser)!r}; error: {page_error(browser)!r}") from err


def texts(browser: Any, selector: str) -> list[str]:
    """The text of every element `selector` finds, read in one script (the page redraws between separate reads)."""
    return browser.execute_script("return [...document.querySelectorAll(arguments[0])].map(e => e.textContent)", selector)


def status(browser: Any) -> str:
    return " ".join(texts(browser, "#status"))


def page_error(browser: Any) -> str:
    return browser.execute_script("return document.getElementById('error').hidden ? '' : document.getElementById('error').textContent")


def alert_ids(browser: Any) -> list[str]:
    return browser.execute_script("return [...document.querySelectorAll('tr[data-alert-id]')].map(row => row.dataset.alertId)")
