"""The sign-in's defences before a password is checked (solver/web/signin.py): which
client a request is, whether it comes from this site, and the back-off."""

from __future__ import annotations

import pytest

from solver.web.signin import (
    SignInThrottle,
    client_of,
    foreign_origin,
    login_token,
    login_token_ok,
    parse_proxies,
)


def test_forwarded_for_is_read_only_from_a_trusted_proxy():
    proxies = parse_proxies("127.0.0.1, 10.0.0.0/8")
    # no proxy trusted, or the peer is not one: the socket address, whatever the header
    assert client_of("203.0.113.5", ["198.51.100.1"], ()) == "203.0.113.5"
    assert client_of("203.0.113.5", ["198.51.100.1"], proxies) == "203.0.113.5"
    # from the proxy: the right-most hop that is not a trusted proxy (a client cannot
    # choose its key by prepending hops: "1.1.1.1" is what it wrote itself)
    assert client_of("127.0.0.1", ["1.1.1.1, 198.51.100.7, 10.1.2.3"], proxies) == ("198.51.100.7")
    # garbage from a hop stops the walk at the proxy's own address
    assert client_of("127.0.0.1", ["not-an-ip"], proxies) == "127.0.0.1"
    # one IPv6 host holds a whole /64: it is one client
    assert client_of("2001:db8::1", [], ()) == client_of("2001:db8::ffff:2", [], ())
    assert client_of("2001:db8::1", [], ()) == "2001:db8::/64"
    assert client_of("::ffff:192.0.2.9", [], ()) == "192.0.2.9"
    with pytest.raises(ValueError, match="'proxy.example' is not an IP address or network"):
        parse_proxies("127.0.0.1,proxy.example")


def test_origin_must_name_this_host():
    assert foreign_origin("testserver", "http://testserver", None) is None
    assert foreign_origin("ws.example:443", "https://ws.example", None) is None  # default port
    assert foreign_origin("ws.example:8000", "http://ws.example:8000", None) is None
    assert foreign_origin("ws.example:8000", "http://ws.example", None) is not None
    assert foreign_origin("ws.example", "https://evil.example", None) is not None
    assert foreign_origin("ws.example", "null", None) is not None  # a sandboxed frame
    # without Origin the Referer decides; with neither the token alone does
    assert foreign_origin("ws.example", None, "https://evil.example/x") is not None
    assert foreign_origin("ws.example", None, "https://ws.example/login") is None
    assert foreign_origin("ws.example", None, None) is None


def test_the_login_token_belongs_to_its_cookie():
    token = login_token("k" * 64, "cookie-a")
    assert login_token_ok("k" * 64, "cookie-a", token)
    assert not login_token_ok("k" * 64, "cookie-b", token)
    assert not login_token_ok("k" * 64, None, token)
    assert not login_token_ok("other", "cookie-a", token)


def test_back_off_doubles_to_its_cap_and_is_forgotten():
    now = [0.0]
    throttle = SignInThrottle(clock=lambda: now[0])
    waits = []
    for _ in range(16):
        throttle.failed("c", f"name{len(waits)}")  # a different account each time
        waits.append(round(throttle.wait_s("c", "x")[0]))
    # 4 failures free, then 1, 2, 4, ... s after the 5th to 15th, capped at 900 s
    assert waits == [0, 0, 0, 0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900]
    now[0] += 3600.1  # an hour after the last failure: forgotten
    assert throttle.wait_s("c", "x") == (0.0, "")


def test_an_account_under_attack_slows_only_clients_that_failed_on_it():
    now = [0.0]
    throttle = SignInThrottle(clock=lambda: now[0])
    for i in range(12):  # 12 clients, one wrong guess each: 12 failures on the account
        throttle.failed(f"bot{i}", "ada")
    # the account's back-off after 12 failures: 2**(12 - 10) = 4 s for a client that failed
    assert throttle.wait_s("bot0", "ada") == (4.0, "account")
    assert throttle.wait_s("owner", "ada") == (0.0, "")  # no failure there: at once
    throttle.failed("laptop", "ada")  # the owner's typo, then the right password
    now[0] += 8.0
    throttle.succeeded("laptop", "ada")
    throttle.failed("laptop", "ada")  # a known client is not slowed by the account's count
    assert throttle.wait_s("laptop", "ada") == (0.0, "")


def test_records_are_bounded():
    now = [0.0]
    throttle = SignInThrottle(max_keys=100, clock=lambda: now[0])
    for i in range(1000):
        now[0] += 0.001
        throttle.failed(f"c{i}", f"a{i}")
    assert len(throttle._records) <= 100 + 3
