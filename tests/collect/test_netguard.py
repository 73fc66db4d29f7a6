"""SSRF guard: address classification, the explicit allow-list, and connections by checked IP."""

from __future__ import annotations

import ipaddress

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from factscout.collect.netguard import AddressPolicy, BlockedAddress, guarded_client, why_not_public
from factscout.errors import InputError

from .conftest import FakeWeb

BLOCKED = [
    "127.0.0.1",
    "127.8.9.10",
    "10.0.0.7",
    "172.16.5.4",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",  # shared address space (CGNAT)
    "0.0.0.0",
    "192.0.2.10",  # documentation
    "224.0.0.1",
    "255.255.255.255",
    "::1",
    "::",
    "fe80::1",
    "fc00::5",
    "::ffff:127.0.0.1",  # IPv4-mapped loopback
    "::ffff:169.254.169.254",
    "2002:a00:7::1",  # 6to4 carrying 10.0.0.7
    "2001:db8::1",
]
PUBLIC = ["8.8.8.8", "93.184.215.14", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"]


@pytest.mark.parametrize("address", BLOCKED)
def test_non_public_addresses_are_named(address):
    assert why_not_public(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_pass(address):
    assert why_not_public(ipaddress.ip_address(address)) is None


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_ipv4_mapped_ipv6_gets_the_ipv4_verdict(n):
    v4 = ipaddress.IPv4Address(n)
    mapped = ipaddress.IPv6Address(f"::ffff:{v4}")
    assert (why_not_public(mapped) is None) == (why_not_public(v4) is None)


def test_link_local_metadata_address_is_refused_by_default():
    with pytest.raises(BlockedAddress, match=r"169\.254\.169\.254.*link-local"):
        AddressPolicy().check("169.254.169.254", 80)


def test_a_name_is_refused_when_any_of_its_addresses_is_private():
    policy = AddressPolicy.allowing([], resolver=lambda host, port: ["93.184.215.14", "10.0.0.7"])
    with pytest.raises(BlockedAddress, match=r"rebind\.test \(10\.0\.0\.7\): private"):
        policy.check("rebind.test", 443)


def test_allow_list_entries_host_ip_and_network():
    policy = AddressPolicy.allowing(
        ["Intranet.Example.", "127.0.0.1", "10.1.0.0/16", "[::1]"],
        resolver=lambda host, port: {
            "intranet.example": ["10.9.9.9"],
            "svc.test": ["10.1.2.3"],
            "other.test": ["10.2.0.1"],
        }[host],
    )
    assert policy.check("intranet.example", 80) == ["10.9.9.9"]  # the name is allowed, whatever it resolves to
    assert policy.check("svc.test", 80) == ["10.1.2.3"]  # inside an allowed network
    assert policy.check("127.0.0.1", 80) == ["127.0.0.1"]
    assert policy.check("[::1]", 80) == ["::1"]
    with pytest.raises(BlockedAddress):
        policy.check("other.test", 80)
    with pytest.raises(BlockedAddress):
        policy.check("127.0.0.2", 80)


@pytest.mark.parametrize("entry", ["", "  ", "http://x/y", "a b"])
def test_bad_allow_list_entries_are_input_errors(entry):
    with pytest.raises(InputError):
        AddressPolicy.allowing([entry])


def test_check_url_refuses_other_schemes_and_private_literals():
    policy = AddressPolicy()
    for url in ["file:///etc/passwd", "ftp://example.org/x", "http://10.0.0.1/", "http://[::ffff:127.0.0.1]:8080/"]:
        with pytest.raises(BlockedAddress):
            policy.check_url(url)
    policy.check_url("https://example.org/page")  # names are checked when connecting, not here


def _client(policy: AddressPolicy) -> httpx.Client:
    return guarded_client(policy, timeout=httpx.Timeout(5.0), headers={})


def test_loopback_server_is_refused_unless_allow_listed(web: FakeWeb):
    web.page("/hello.html", b"<html><body>hello</body></html>")
    with _client(AddressPolicy()) as client, pytest.raises(BlockedAddress, match="loopback"):
        client.get(web.base + "/hello.html")
    assert web.requests == []  # refused before connecting
    with _client(AddressPolicy.allowing(["127.0.0.1"])) as client:
        assert client.get(web.base + "/hello.html").status_code == 200


def test_localhost_is_refused_after_dns_resolution(web: FakeWeb):
    with _client(AddressPolicy()) as client, pytest.raises(BlockedAddress, match=r"localhost \(.*\): loopback"):
        client.get(f"http://localhost:{web.server_address[1]}/")
    assert web.requests == []


def test_the_client_connects_to_the_address_it_checked():
    """A name no system DNS knows reaches the server through the one resolution the guard did
    (so there is no second look-up a rebinding DNS server could answer differently)."""
    server = FakeWeb("127.0.0.2")
    calls: list[str] = []

    def resolver(host: str, port: int) -> list[str]:
        calls.append(host)
        return ["127.0.0.2"]

    try:
        server.page("/x.html", b"<html><body>ok</body></html>")
        policy = AddressPolicy.allowing(["127.0.0.2"], resolver=resolver)
        with _client(policy) as client:
            response = client.get(f"http://site.invalid:{server.server_address[1]}/x.html")
        assert response.status_code == 200
        assert calls == ["site.invalid"]
        assert server.requests[0]["headers"]["Host"] == f"site.invalid:{server.server_address[1]}"
    finally:
        server.stop()


def test_the_guarded_client_ignores_environment_proxies(monkeypatch, web: FakeWeb):
    monkeypatch.setenv("HTTP_PROXY", "http://10.0.0.1:3128")
    monkeypatch.setenv("ALL_PROXY", "http://10.0.0.1:3128")
    web.page("/p.html", b"<html><body>direct</body></html>")
    with _client(AddressPolicy.allowing(["127.0.0.1"])) as client:
        assert client.get(web.base + "/p.html").text == "<html><body>direct</body></html>"
