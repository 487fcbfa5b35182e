"""The browser container's firewall: its network namespace passes its own loopback and the runner, nothing else.

A browser container sits on the sandbox's `internal` Docker network so that the runner (on the host) reaches
its Playwright server and, for the readiness probe, the artifact server that shares its namespace. `internal`
only stops forwarding beyond the bridge: the bridge's gateway is an address of the host, so without more a
page's UDP (WebRTC's STUN/TURN) or TCP reached every service the host listens on, through the gateway and
through the host's other addresses (measured: STUN binding requests arrived at a UDP listener on 0.0.0.0).

So the runner installs rules in the browser container's own namespace, where the page (no capabilities)
cannot change them, and checks them before any page is loaded:

- OUTPUT: the loopback (the page and its artifact server), except Docker's embedded resolver on 127.0.0.11
  (it forwards queries out of the network); the answers of TCP connections the gateway opened; nothing else.
- INPUT: the loopback, and TCP from the gateway (the runner's Playwright connection, the readiness probe).
- IPv6: nothing but the loopback (Docker leaves IPv6 off in these containers; this keeps it so).

A helper container of the build image (it has iptables) joins the namespace with CAP_NET_ADMIN only for that,
installs the rules, reads them back and sends a UDP datagram to the gateway, which must be refused on the spot
(EPERM: the rule drops it before it leaves the namespace). Any difference fails the browser's start (infra).
The rules live and die with the namespace: a browser container started again (engine restart) gets them anew.
"""

from __future__ import annotations

import ipaddress
import json

# Docker's embedded DNS server, reached on the container's loopback (DNAT to a port of the daemon's).
DOCKER_RESOLVER = "127.0.0.11"


def ipv4_rules(gateway: str) -> str:
    """The iptables-restore input for the browser namespace whose network's gateway (the host) is `gateway`."""
    host = ipaddress.IPv4Address(gateway)  # a bad address is an error here, not a hole in the rules
    return "\n".join([
        "*filter",
        ":INPUT DROP [0:0]",
        ":FORWARD DROP [0:0]",
        ":OUTPUT DROP [0:0]",
        "-A INPUT -i lo -j ACCEPT",
        f"-A INPUT -s {host}/32 -p tcp -j ACCEPT",
        f"-A OUTPUT -d {DOCKER_RESOLVER}/32 -j DROP",
        "-A OUTPUT -o lo -j ACCEPT",
        f"-A OUTPUT -d {host}/32 -p tcp -m conntrack --ctstate ESTABLISHED -j ACCEPT",
        "COMMIT",
        "",
    ])


IPV6_RULES = "\n".join([
    "*filter",
    ":INPUT DROP [0:0]",
    ":FORWARD DROP [0:0]",
    ":OUTPUT DROP [0:0]",
    "-A INPUT -i lo -j ACCEPT",
    "-A OUTPUT -o lo -j ACCEPT",
    "COMMIT",
    "",
])


def expected_listing(rules: str) -> list[str]:
    """What `iptables -S` prints once `rules` (iptables-restore input of the filter table) are in place."""
    listing = []
    for line in rules.splitlines():
        if line.startswith(":"):
            chain, policy = line[1:].split()[:2]
            listing.append(f"-P {chain} {policy}")
        elif line.startswith("-A "):
            listing.append(line)
    return listing


# Runs in the helper container (python3 of the build image, as root with CAP_NET_ADMIN only) in the browser's
# namespace; prints one JSON line. argv: the gateway address.
HELPER_SCRIPT = r"""
import errno, json, os, socket, subprocess, sys
gateway = sys.argv[1]
out = {}
for tool, rules in (("iptables", os.environ["GENUI_RULES_V4"]), ("ip6tables", os.environ["GENUI_RULES_V6"])):
    done = subprocess.run([tool + "-restore"], input=rules, capture_output=True, text=True)
    listing = subprocess.run([tool, "-S"], capture_output=True, text=True)
    out[tool] = {"restore": done.returncode, "error": (done.stderr + listing.stderr)[-2000:],
                 "listing": listing.stdout.splitlines()}
probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    probe.sendto(b"genui firewall check", (gateway, 9))
    out["gateway_udp"] = "sent"
except OSError as exc:
    out["gateway_udp"] = "refused" if exc.errno == errno.EPERM else "error: %s" % exc
loop = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    loop.sendto(b"genui firewall check", ("127.0.0.1", 9))
    out["loopback_udp"] = "sent"
except OSError as exc:
    out["loopback_udp"] = "error: %s" % exc
print(json.dumps(out))
"""


class FirewallCheckFailed(RuntimeError):
    """The rules could not be installed, or are not what was installed, or do not stop a packet."""


def check_report(report_text: str, gateway: str) -> None:
    """Raise FirewallCheckFailed unless the helper's report shows the rules in place and working."""
    lines = [line for line in report_text.splitlines() if line.startswith("{")]
    if not lines:
        raise FirewallCheckFailed(f"the firewall helper reported nothing: {report_text[-2000:]}")
    report = json.loads(lines[-1])
    for tool, rules in (("iptables", ipv4_rules(gateway)), ("ip6tables", IPV6_RULES)):
        result = report[tool]
        if result["restore"] != 0:
            raise FirewallCheckFailed(f"{tool}-restore failed ({result['restore']}): {result['error']}")
        if result["listing"] != expected_listing(rules):
            raise FirewallCheckFailed(f"{tool} rules differ from those installed: {result['listing']}")
    if report["gateway_udp"] != "refused":
        raise FirewallCheckFailed(f"a UDP datagram to the gateway {gateway} was not refused: {report['gateway_udp']}")
    if report["loopback_udp"] != "sent":
        raise FirewallCheckFailed(f"the loopback is not open: {report['loopback_udp']}")
