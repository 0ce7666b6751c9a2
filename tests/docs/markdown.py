"""Reading the documentation's Markdown: fenced blocks, inline code, and the `fairstream` command lines they show."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks(text: str, language: str) -> list[str]:
    """The fenced code blocks of a Markdown text whose fence names `language` ("" for a bare fence)."""
    found, current, fence = [], None, None
    for line in text.splitlines():
        if line.strip().startswith("```"):
            if current is None:
                fence, current = line.strip()[3:].strip(), []
            else:
                if fence == language:
                    found.append("\n".join(current) + "\n")
                current = None
        elif current is not None:
            current.append(line)
    return found


def shell_lines(block: str) -> list[str]:
    """The logical lines of a shell block: continuations joined, comments, prompts and a trailing `&` dropped."""
    lines, pending = [], ""
    for raw in block.splitlines():
        line = raw.strip()
        if not pending and (line.startswith("#") or not line):
            continue
        line = line.removeprefix("$ ")
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = re.sub(r"\s+#\s.*$", "", pending + line).strip().removesuffix("&").strip()
        lines.append(line)
        pending = ""
    return lines


def command_lines() -> list[tuple[str, str]]:
    """The `fairstream …` command lines of the shell blocks of the README and the docs, as (page, line): commands to run."""
    return [
        (page.name, line)
        for page in PAGES
        for language in ("bash", "console")
        for block in blocks(page.read_text(), language)
        for line in shell_lines(block)
        if line.startswith("fairstream ")
    ]


def command_mentions() -> list[tuple[str, str]]:
    """The `fairstream …` inline code of the README and the docs, as (page, text): synopses and names of commands."""
    return [
        (page.name, " ".join(span.replace("\\|", "|").split()))
        for page in PAGES
        for span in re.findall(r"`(fairstream [^`]+)`", page.read_text())
    ]


def normalized(line: str) -> str:
    """A console line with its table rules and runs of spaces reduced to single spaces, to compare printed and shown."""
    return " ".join(line.replace("│", " ").replace("┃", " ").split())


def bench(command: str, *options: str, cwd: Path) -> str:
    """What `fairstream bench <command>` prints, plain and wide."""
    done = subprocess.run(
        [sys.executable, "-m", "fairstream.cli", "bench", command, *options], capture_output=True, text=True, cwd=cwd,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}, timeout=3600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def table_rows(printed: str) -> list[str]:
    """The printed tables' body rows as a page's Markdown rows."""
    return ["| " + " | ".join(cell.strip() for cell in line.split("│")) + " |" for line in printed.splitlines() if "│" in line]

