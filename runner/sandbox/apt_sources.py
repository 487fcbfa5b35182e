"""The machine's own Debian package sources, for the offline base image (images/bootstrap.sh).

debootstrap needs a mirror, and the image's apt needs a sources.list. Both come from this machine's apt
configuration (one-line `/etc/apt/sources.list`, `sources.list.d/*.list`, and deb822 `sources.list.d/*.sources`),
so a machine behind its own mirror or a snapshot builds its images from that same mirror; no host name is
written into the project. `DEBIAN_MIRROR` and `DEBIAN_SECURITY_MIRROR` override what is found.

Standard library only: bootstrap.sh runs this file with the system python3, before any venv exists.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path

SOURCES_LIST = Path("/etc/apt/sources.list")
SOURCES_PARTS = Path("/etc/apt/sources.list.d")
MIRROR_ENV = "DEBIAN_MIRROR"
SECURITY_ENV = "DEBIAN_SECURITY_MIRROR"


@dataclass(frozen=True)
class AptSource:
    uri: str
    suite: str
    components: tuple[str, ...]
    origin: Path  # the file it was read from


def parse_one_line(text: str, origin: Path) -> list[AptSource]:
    """`deb [options] URI SUITE COMPONENT...` lines; deb-src, comments and blank lines are skipped."""
    found = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line.startswith("deb "):
            continue
        words = line[4:].strip()
        if words.startswith("["):  # [arch=amd64 signed-by=...]
            words = words.split("]", 1)[1] if "]" in words else ""
        parts = words.split()
        if len(parts) >= 2:
            found.append(AptSource(parts[0].rstrip("/"), parts[1], tuple(parts[2:]), origin))
    return found


def parse_deb822(text: str, origin: Path) -> list[AptSource]:
    """deb822 stanzas (Types/URIs/Suites/Components, `Enabled: no` skipped) as one AptSource per URI and suite."""
    found = []
    for stanza in _stanzas(text):
        if "deb" not in stanza.get("types", "").split() or stanza.get("enabled", "yes").lower() == "no":
            continue
        components = tuple(stanza.get("components", "").split())
        for uri in stanza.get("uris", "").split():
            for suite in stanza.get("suites", "").split():
                found.append(AptSource(uri.rstrip("/"), suite, components, origin))
    return found


def _stanzas(text: str) -> list[dict[str, str]]:
    stanzas: list[dict[str, str]] = []
    current: dict[str, str] = {}
    key = None
    for raw in text.splitlines() + [""]:
        if raw.startswith("#"):
            continue
        if not raw.strip():
            if current:
                stanzas.append(current)
            current, key = {}, None
        elif raw[0] in " \t" and key is not None:  # a folded continuation line
            current[key] += " " + raw.strip()
        elif ":" in raw:
            key, value = raw.split(":", 1)
            key = key.strip().lower()
            current[key] = value.strip()
    return stanzas


def machine_sources(sources_list: Path = SOURCES_LIST, parts: Path = SOURCES_PARTS) -> list[AptSource]:
    """Every enabled `deb` source of this machine, in apt's reading order."""
    found = []
    if sources_list.is_file():
        found += parse_one_line(sources_list.read_text(), sources_list)
    if parts.is_dir():
        for path in sorted(parts.iterdir()):
            if path.suffix == ".list":
                found += parse_one_line(path.read_text(), path)
            elif path.suffix == ".sources":
                found += parse_deb822(path.read_text(), path)
    return found


def _first_uri(sources: list[AptSource], suite: str) -> str | None:
    return next((source.uri for source in sources if source.suite == suite and "main" in source.components), None)


def image_sources(suite: str, sources: list[AptSource], env: dict[str, str] | None = None) -> tuple[str, str]:
    """(sources.list text for the image, mirror for debootstrap): `suite`, `suite-updates` and
    `suite-security` (main) from this machine's sources or the environment's overrides."""
    env = dict(os.environ) if env is None else env
    mirror = env.get(MIRROR_ENV) or _first_uri(sources, suite)
    if not mirror:
        read = ", ".join(sorted({str(s.origin) for s in sources})) or f"{SOURCES_LIST}, {SOURCES_PARTS}/"
        raise LookupError(f"no apt source for '{suite} main' in {read}; set {MIRROR_ENV}=<Debian mirror URL>")
    lines = [f"deb {mirror.rstrip('/')} {suite} main"]
    updates = env.get(MIRROR_ENV) or _first_uri(sources, f"{suite}-updates")
    if updates:
        lines.append(f"deb {updates.rstrip('/')} {suite}-updates main")
    security = env.get(SECURITY_ENV) or _first_uri(sources, f"{suite}-security")
    if security:
        lines.append(f"deb {security.rstrip('/')} {suite}-security main")
    return "\n".join(lines) + "\n", mirror.rstrip("/")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="This machine's Debian sources for the offline base image.")
    parser.add_argument("what", choices=["mirror", "sources"], help="the debootstrap mirror, or the sources.list text")
    parser.add_argument("--suite", default="bookworm")
    args = parser.parse_args(argv)
    try:
        text, mirror = image_sources(args.suite, machine_sources())
    except LookupError as error:
        print(f"apt_sources: {error}", file=sys.stderr)
        return 2
    sys.stdout.write(mirror + "\n" if args.what == "mirror" else text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
