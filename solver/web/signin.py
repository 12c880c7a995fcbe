"""Who is signing in, from where, and how fast: the sign-in's defences that come before a
password is checked.

- :func:`client_of`: the client a request comes from: the socket's address, or (only
  when the operator named the reverse proxies, ``procure serve --trusted-proxies``) the
  nearest address in ``X-Forwarded-For`` that is not one of them. An IPv6 client is its
  /64 network (one host holds a whole /64). Without trusted proxies the header is ignored,
  so twelve ``X-Forwarded-For`` values from one socket address are one client.
- :func:`foreign_origin`: a sign-in posted from another site (login CSRF): its ``Origin``
  (or, without one, its ``Referer``) must name this host.
- :func:`login_token`: the sign-in form's pre-session token, an HMAC of a random cookie
  set with the form (OWASP CSRF Prevention Cheat Sheet, "login CSRF": pre-sessions).
- :class:`SignInThrottle`: exponential back-off per client and per account, never a
  lock-out: a stranger's wrong passwords slow the stranger's own client, and on an
  account under attack they slow every client that has failed on it, while a client with
  no failure there (the owner elsewhere) still gets its attempt at once.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import math
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

#: the pre-session cookie of the sign-in form (path /login, SameSite=Strict)
LOGIN_COOKIE = "procure_login"

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_proxies(text: str | Iterable[str] | None) -> tuple[Network, ...]:
    """``127.0.0.1,10.0.0.0/8`` (or a list) as networks; empty for None.

    Raises
    ------
    ValueError
        An entry is not an IP address or network (the message names it).
    """
    if text is None:
        return ()
    parts = text.split(",") if isinstance(text, str) else list(text)
    out = []
    for part in (p.strip() for p in parts):
        if part:
            try:
                out.append(ipaddress.ip_network(part, strict=False))
            except ValueError:
                raise ValueError(f"{part!r} is not an IP address or network") from None
    return tuple(out)


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None


def is_trusted(address: str, proxies: tuple[Network, ...]) -> bool:
    """Whether ``address`` is one of the operator's reverse proxies."""
    ip = _ip(address)
    return ip is not None and any(ip in net for net in proxies)


def _key(address: str) -> str:
    ip = _ip(address)
    if ip is None:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def client_of(peer: str, forwarded_for: list[str], proxies: tuple[Network, ...]) -> str:
    """The client key of a request from socket address ``peer`` with the
    ``X-Forwarded-For`` header values ``forwarded_for``: the peer unless it is a trusted
    proxy; then the right-most forwarded address that is not a trusted proxy."""
    if not proxies or not is_trusted(peer, proxies):
        return _key(peer)
    hops = [h.strip() for value in forwarded_for for h in value.split(",") if h.strip()]
    for hop in reversed(hops):
        if _ip(hop) is None:
            break  # a proxy we trust wrote nothing unreadable: stop at garbage
        if not is_trusted(hop, proxies):
            return _key(hop)
    return _key(peer)


def _host_port(url: str) -> tuple[str, int | None] | None:
    """The host (lower case) and port of a URL, the scheme's default port when none is
    written (None for a scheme without one); None when unreadable."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        return None
    if not parts.hostname:
        return None
    return parts.hostname.lower(), port or {"http": 80, "https": 443}.get(parts.scheme)


def foreign_origin(host: str, origin: str | None, referer: str | None) -> str | None:
    """Why a sign-in posted with these headers comes from another site, else None.
    ``host``: this server's host as the browser addressed it (``Host``, or the trusted
    proxy's ``X-Forwarded-Host``; without a port, one of the default ports 80 and 443
    is expected, the scheme being unknown behind a proxy that ends TLS). Without
    ``Origin`` the ``Referer`` decides; a request with neither (a script, not a browser
    form) is left to the pre-session token."""
    own = _host_port("//" + host.strip()) if host else None
    for name, value in (("Origin", origin), ("Referer", referer)):
        if value is None:
            continue
        theirs = _host_port(value.strip())
        same = own is not None and theirs is not None and theirs[0] == own[0]
        if same and own[1] is not None:
            same = theirs[1] == own[1]
        elif same:
            same = theirs[1] in (80, 443)
        if not same:
            return f"a sign-in from another site ({name} {value.strip()[:100]!r}) is refused"
        return None
    return None


def login_token(secret: str, cookie: str) -> str:
    """The sign-in form's token for the pre-session cookie ``cookie``."""
    return hmac.new(secret.encode(), ("login:" + cookie).encode(), hashlib.sha256).hexdigest()


def login_token_ok(secret: str, cookie: str | None, given: str | None) -> bool:
    return bool(cookie) and bool(given) and hmac.compare_digest(login_token(secret, cookie), given)


@dataclass
class _Record:
    failures: int = 0
    last_s: float = 0.0
    known: list[str] = field(default_factory=list)


class SignInThrottle:
    """Exponential back-off of failed sign-ins (OWASP Authentication Cheat Sheet:
    throttling that slows guessing without locking accounts out).

    - Per client: the first ``free_client`` failures cost nothing; from then on each
      failure makes the client wait ``base_s * 2**(n - free_client)`` seconds (1, 2, 4,
      ... up to ``max_s``) before its next attempt, whichever account it tries.
    - Per account: once it has ``free_account`` failures (from any clients), a client
      that has failed on it waits ``base_s * 2**(n - free_account)`` seconds (up to
      ``max_s``) after its last failure there. A client with no failure on the account,
      or one that signed in to it before, is not slowed by the account's count: a
      stranger cannot lock the owner out.
    - Failures are forgotten ``forget_s`` after the last one; a success clears the
      client's failures on that account (not its own count). At most ``max_keys``
      records are kept (the oldest go first).
    """

    def __init__(
        self,
        free_client: int = 5,
        free_account: int = 10,
        base_s: float = 1.0,
        max_s: float = 900.0,
        forget_s: float = 3600.0,
        max_keys: int = 100_000,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.free_client, self.free_account = free_client, free_account
        self.base_s, self.max_s, self.forget_s = base_s, max_s, forget_s
        self.max_keys, self.clock = max_keys, clock
        self._records: dict[str, _Record] = {}
        self._lock = threading.Lock()

    def _delay_s(self, failures: int, free: int) -> float:
        if failures < free:
            return 0.0
        return min(self.base_s * 2.0 ** min(failures - free, 60), self.max_s)

    def _get(self, key: str, now: float) -> _Record:
        record = self._records.get(key)
        if record is None or now - record.last_s > self.forget_s:
            known = record.known if record is not None else []
            record = _Record(known=known)
            self._records[key] = record
        return record

    def _peek(self, key: str, now: float) -> _Record:
        """The record of ``key`` without keeping a new one (a refused attempt adds none)."""
        record = self._records.get(key)
        if record is None or now - record.last_s > self.forget_s:
            return _Record(known=record.known if record is not None else [])
        return record

    def wait_s(self, client: str, account: str) -> tuple[float, str]:
        """Seconds ``client`` must wait before trying ``account`` (0: go ahead), and
        whose back-off it is (``client`` or ``account``)."""
        with self._lock:
            now = self.clock()
            mine = self._peek("c:" + client, now)
            wait = mine.last_s + self._delay_s(mine.failures, self.free_client) - now
            if mine.failures and wait > 0:
                return wait, "client"
            acct = self._peek("a:" + account, now)
            pair = self._peek(f"p:{client}\n{account}", now)
            if pair.failures == 0 or client in acct.known:
                return 0.0, ""
            wait = pair.last_s + self._delay_s(acct.failures, self.free_account) - now
            return (wait, "account") if wait > 0 else (0.0, "")

    def failed(self, client: str, account: str) -> None:
        with self._lock:
            now = self.clock()
            for key in ("c:" + client, "a:" + account, f"p:{client}\n{account}"):
                record = self._get(key, now)
                record.failures += 1
                record.last_s = now
            self._prune(now)

    def succeeded(self, client: str, account: str) -> None:
        with self._lock:
            self._records.pop(f"p:{client}\n{account}", None)
            acct = self._get("a:" + account, self.clock())
            if client not in acct.known:
                acct.known = [*acct.known[-19:], client]

    def _prune(self, now: float) -> None:
        if len(self._records) <= self.max_keys:
            return
        stale = [k for k, r in self._records.items() if now - r.last_s > self.forget_s]
        for key in stale:
            del self._records[key]
        if len(self._records) > self.max_keys:
            oldest = sorted(self._records, key=lambda k: self._records[k].last_s)
            for key in oldest[: len(oldest) // 2]:
                del self._records[key]


def retry_after(wait_s: float) -> str:
    """The ``Retry-After`` value (whole seconds, at least 1) for a wait."""
    return str(max(1, math.ceil(wait_s)))
