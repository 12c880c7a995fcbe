"""Every page of the workspace checked by axe-core (vendored:
``solver/web/static/vendor/axe.min.js``, 4.14.1) in a real headless Chromium, signed in as
each role where the pages differ (the navigation, the buttons a role may use, the
approval forms): no violation of impact ``serious`` or ``critical`` (issue 51, Build 8).

axe's impacts are its own grading of each rule (https://github.com/dequelabs/axe-core/blob/develop/doc/API.md#results-object):
``serious`` and ``critical`` are failures that block or seriously hinder a person using a
screen reader, a keyboard or low vision (contrast under 4.5:1, a control without a name,
a form field without a label).
"""

from __future__ import annotations

from tests.web.conftest import blocking
from tests.web.test_browser import (  # noqa: F401, F811 - fixtures
    _seed_plan,
    _sign_in_as,
    _wait,
    browser,
    server,
    shots,
)


def _pages(base: str, plan: str, role: str) -> list[str]:
    pages = [
        "/",
        "/problems/1",
        f"/plans/{plan}",
        f"/plans/{plan}/approval",
        f"/plans/{plan}/frontier",
        f"/plans/{plan}/two-stage",
        f"/plans/{plan}/alternatives",
        "/jobs",
        "/jobs/1",
        f"/compare?a={plan}&b={plan}",
        "/catalog",
        "/catalog?table=accelerators",
        "/account",
        "/plans/999999",  # the styled error page (404)
    ]
    if role == "admin":
        pages += ["/admin/users", "/admin/audit"]
    else:
        pages += ["/admin/users"]  # the styled 403 page
    return [base + p for p in pages]


def test_no_serious_or_critical_violation_on_any_page_for_any_role(server, browser, shots):  # noqa: F811
    from selenium.webdriver.common.by import By

    d = browser
    d.set_script_timeout(120)
    _sign_in_as(d, server, "ian")
    plan = _seed_plan(d, server)
    found: dict[str, list[dict]] = {}
    for name, role in (("vera", "viewer"), ("ian", "infra"), ("fay", "finance"), ("ada", "admin")):
        _sign_in_as(d, server, name)
        for url in _pages(server, plan, role):
            d.get(url)
            _wait(d, lambda d: d.execute_script("return document.readyState") == "complete", 30)
            bad = blocking(d)
            if bad:
                found[f"{role} {url.removeprefix(server)}"] = bad
            if role == "admin" and url.endswith(("/admin/users", "/account")):
                d.save_screenshot(str(shots / f"{url.rsplit('/', 1)[1]}-page.png"))
    # the sign-in page, signed out
    d.find_element(By.ID, "sign-out").click()
    _wait(d, lambda d: d.find_element(By.ID, "login-name"), 30)
    bad = blocking(d)
    if bad:
        found["signed out /login"] = bad
    assert found == {}, "\n".join(f"{page}: {v}" for page, vs in found.items() for v in vs)
