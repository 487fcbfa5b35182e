"""The browser firewall's rules and the check of the helper's report (the rules at work: tests/sandbox/test_docker.py)."""

from __future__ import annotations

import json

import pytest

from runner.sandbox.browser_firewall import IPV6_RULES, FirewallCheckFailed, check_report, expected_listing, ipv4_rules

GATEWAY = "172.30.0.1"


def _report(**changes) -> str:
    report = {
        "iptables": {"restore": 0, "error": "", "listing": expected_listing(ipv4_rules(GATEWAY))},
        "ip6tables": {"restore": 0, "error": "", "listing": expected_listing(IPV6_RULES)},
        "gateway_udp": "refused", "loopback_udp": "sent",
    }
    report.update(changes)
    return "some noise\n" + json.dumps(report) + "\n"


def test_the_rules_drop_by_default_and_pass_only_the_loopback_and_the_gateways_tcp() -> None:
    listing = expected_listing(ipv4_rules(GATEWAY))
    assert listing[:3] == ["-P INPUT DROP", "-P FORWARD DROP", "-P OUTPUT DROP"]
    accepts = [line for line in listing if line.endswith("-j ACCEPT")]
    assert accepts == ["-A INPUT -i lo -j ACCEPT", f"-A INPUT -s {GATEWAY}/32 -p tcp -j ACCEPT",
                       "-A OUTPUT -o lo -j ACCEPT",
                       f"-A OUTPUT -d {GATEWAY}/32 -p tcp -m conntrack --ctstate ESTABLISHED -j ACCEPT"]
    # Docker's resolver is on the loopback but forwards out of the network: dropped before the loopback passes.
    assert listing.index("-A OUTPUT -d 127.0.0.11/32 -j DROP") < listing.index("-A OUTPUT -o lo -j ACCEPT")
    assert expected_listing(IPV6_RULES) == ["-P INPUT DROP", "-P FORWARD DROP", "-P OUTPUT DROP",
                                            "-A INPUT -i lo -j ACCEPT", "-A OUTPUT -o lo -j ACCEPT"]


def test_a_gateway_that_is_no_address_is_refused() -> None:
    with pytest.raises(ValueError):
        ipv4_rules("0.0.0.0/0 -j ACCEPT")


def test_a_report_of_rules_in_place_and_working_passes() -> None:
    check_report(_report(), GATEWAY)


@pytest.mark.parametrize(("changes", "fragment"), [
    ({"gateway_udp": "sent"}, "was not refused"),
    ({"loopback_udp": "error: [Errno 1]"}, "loopback is not open"),
    ({"iptables": {"restore": 1, "error": "Permission denied", "listing": []}}, "iptables-restore failed"),
    ({"ip6tables": {"restore": 0, "error": "", "listing": ["-P INPUT ACCEPT"]}}, "ip6tables rules differ"),
], ids=["udp-left", "loopback-shut", "restore-failed", "rules-differ"])
def test_any_difference_fails_the_check(changes: dict, fragment: str) -> None:
    with pytest.raises(FirewallCheckFailed, match=fragment):
        check_report(_report(**changes), GATEWAY)


def test_a_helper_that_reported_nothing_fails_the_check() -> None:
    with pytest.raises(FirewallCheckFailed, match="reported nothing"):
        check_report("iptables-restore: not found\n", GATEWAY)
