"""Keep the crawler off private networks (SSRF): check every address it connects to.

Search results are untrusted input: a result, or a redirect from a result, can point at
``http://169.254.169.254/`` (cloud metadata), ``http://10.0.0.5/admin`` or a name whose DNS
record says ``127.0.0.1``. The crawler must never connect to such an address unless the user
explicitly allows it (``--allow-host 127.0.0.1`` for a test server).

The check sits where the connection is made, not in front of the URL: the HTTP client's
network backend (:class:`GuardedBackend`, an ``httpcore`` backend) resolves the host name
itself, checks *every* address the name resolves to, and then connects to one of the checked
addresses by IP. There is no second DNS look-up between the check and the connection, so a
DNS-rebinding server cannot answer a public address to the check and a private one to the
connect. Because the check runs on every new connection, it also covers each hop of a
redirect chain (the crawler follows redirects itself, a bounded number of hops) and the
``robots.txt`` fetch. TLS still verifies the certificate against the host name: only the TCP
connection goes to the IP.

An address is refused unless it is globally routable: private (RFC 1918, ULA), loopback,
link-local (which holds 169.254.169.254), shared (CGNAT), reserved, multicast, unspecified and
documentation ranges are all refused, and IPv4 addresses hidden in IPv6 ones (IPv4-mapped
``::ffff:127.0.0.1``, 6to4, Teredo) are checked as the IPv4 address they carry. A name that
resolves to several addresses is refused when any one of them is refused.

The allow-list is explicit and empty by default. An entry is a host name (every address it
resolves to is allowed), an IP address, or a network in CIDR form (``10.1.0.0/16``).

Environment proxies are never used by the guarded client (``trust_env=False``): a proxy would
resolve names itself and defeat the check.

Written here because httpx has no resolver hook: the backend is handed to httpcore's
connection pool, which :class:`GuardedTransport` installs in place of the pool
``httpx.HTTPTransport`` builds (the one private attribute this module touches; a test fails if
httpx moves it).
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
import typing
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import httpcore
import httpx

from factscout.errors import FactscoutError, InputError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], Sequence[str]]


class BlockedAddress(FactscoutError):
    """A connection to a private, loopback, link-local or otherwise non-public address was refused."""


def system_resolver(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (``getaddrinfo``, TCP), in the resolver's order."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise httpcore.ConnectError(f"cannot resolve {host!r}: {exc}") from None
    seen: list[str] = []
    for info in infos:
        address = str(info[4][0]).split("%", 1)[0]  # drop an IPv6 zone id
        if address not in seen:
            seen.append(address)
    return seen


def _embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return ip.ipv4_mapped
        if ip.sixtofour is not None:
            return ip.sixtofour
        if ip.teredo is not None:
            return ip.teredo[1]
    return None


def why_not_public(ip: IPAddress) -> str | None:
    """Why ``ip`` is not a public address (``"loopback"``, ``"private"``...), or None when it is."""
    inner = _embedded_ipv4(ip)
    if inner is not None:
        reason = why_not_public(inner)
        return f"{reason} (inside {ip})" if reason else None
    for name in ("unspecified", "loopback", "link_local", "multicast", "private", "reserved"):
        if getattr(ip, f"is_{name}"):
            return name.replace("_", "-")
    if not ip.is_global:
        return "not globally routable"
    return None


@dataclass(frozen=True)
class AddressPolicy:
    """Which addresses the crawler may connect to: public ones, plus an explicit allow-list."""

    allow_hosts: frozenset[str] = frozenset()
    allow_networks: tuple[IPNetwork, ...] = ()
    resolver: Resolver = field(default=system_resolver, compare=False)

    @classmethod
    def allowing(cls, entries: Iterable[str] = (), *, resolver: Resolver | None = None) -> AddressPolicy:
        """A policy from allow-list entries: host names, IP addresses or CIDR networks."""
        hosts: set[str] = set()
        networks: list[IPNetwork] = []
        for raw in entries:
            entry = str(raw).strip().lower().rstrip(".")
            if entry.startswith("[") and entry.endswith("]"):
                entry = entry[1:-1]
            if not entry:
                raise InputError(f"allow-host entry must be a host name, IP address or CIDR network, got {raw!r}")
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
                continue
            except ValueError:
                pass
            if "/" in entry or ":" in entry or " " in entry:
                raise InputError(f"allow-host entry {raw!r} is neither a host name nor an IP address/network")
            hosts.add(entry)
        return cls(frozenset(hosts), tuple(networks), resolver or system_resolver)

    def _allowed_ip(self, ip: IPAddress) -> bool:
        candidates = [ip] + ([inner] if (inner := _embedded_ipv4(ip)) is not None else [])
        return any(c in net for c in candidates for net in self.allow_networks if c.version == net.version)

    def check(self, host: str, port: int) -> list[str]:
        """Resolve ``host`` and return its addresses when all may be connected to; else raise
        :class:`BlockedAddress` naming the host, the address and why."""
        name = host.strip().lower().rstrip(".")
        if name.startswith("[") and name.endswith("]"):
            name = name[1:-1]
        try:
            literal: IPAddress | None = ipaddress.ip_address(name)
        except ValueError:
            literal = None
        addresses = [str(literal)] if literal is not None else list(self.resolver(name, port))
        if not addresses:
            raise httpcore.ConnectError(f"{host!r} resolves to no address")
        if name in self.allow_hosts:
            return addresses
        for address in addresses:
            ip = ipaddress.ip_address(address)
            reason = why_not_public(ip)
            if reason is not None and not self._allowed_ip(ip):
                shown = host if literal is not None else f"{host} ({address})"
                raise BlockedAddress(
                    f"refused to connect to {shown}: {reason} address; allow it explicitly (--allow-host) if intended"
                )
        return addresses

    def check_url(self, url: str | httpx.URL) -> None:
        """Refuse URLs that are not http(s), have no host, or name a refused IP literal (a cheap
        check before any request; names are resolved and checked when connecting)."""
        parsed = httpx.URL(url) if isinstance(url, str) else url
        if parsed.scheme not in ("http", "https"):
            raise BlockedAddress(f"refused {str(parsed)!r}: only http and https URLs are crawled")
        if not parsed.host:
            raise BlockedAddress(f"refused {str(parsed)!r}: no host")
        try:
            ipaddress.ip_address(parsed.host.strip("[]"))
        except ValueError:
            return
        self.check(parsed.host, parsed.port or (443 if parsed.scheme == "https" else 80))


class GuardedBackend(httpcore.NetworkBackend):
    """An httpcore network backend that connects only to addresses :class:`AddressPolicy` allows,
    by the IP it checked (no second resolution)."""

    def __init__(self, policy: AddressPolicy, inner: httpcore.NetworkBackend | None = None) -> None:
        self.policy = policy
        self._inner = inner if inner is not None else httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.NetworkStream:
        addresses = self.policy.check(host, port)
        problem: Exception | None = None
        for address in addresses:
            try:
                return self._inner.connect_tcp(address, port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                problem = exc
        assert problem is not None  # addresses is never empty (check raises)
        raise problem

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: typing.Iterable[typing.Any] | None = None
    ) -> httpcore.NetworkStream:
        raise BlockedAddress(f"refused to connect to the unix socket {path!r}")

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class GuardedTransport(httpx.HTTPTransport):
    """``httpx.HTTPTransport`` whose connection pool uses a :class:`GuardedBackend` and no proxy."""

    def __init__(self, policy: AddressPolicy, *, verify: ssl.SSLContext | bool = True) -> None:
        super().__init__(verify=verify, trust_env=False)
        if not isinstance(getattr(self, "_pool", None), httpcore.ConnectionPool):
            raise RuntimeError("httpx.HTTPTransport no longer keeps its pool in _pool; update GuardedTransport")
        self._pool.close()
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(verify=verify, trust_env=False),
            max_connections=20,
            max_keepalive_connections=10,
            keepalive_expiry=5.0,
            network_backend=GuardedBackend(policy),
        )
        self.policy = policy


def guarded_client(policy: AddressPolicy, *, timeout: httpx.Timeout, headers: dict[str, str]) -> httpx.Client:
    """An httpx client that refuses non-public addresses (see the module docstring); redirects
    are not followed (the caller follows them, checking each hop)."""
    return httpx.Client(
        transport=GuardedTransport(policy),
        timeout=timeout,
        headers=headers,
        follow_redirects=False,
        trust_env=False,
    )
