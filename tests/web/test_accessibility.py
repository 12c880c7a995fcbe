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

from conftest import ROOT
from tests.web.conftest import blocking
from tests.web.test_browser import (  # noqa: F401, F811 - fixtures
    _seed_plan,
    _sign_in_as,
    _wait,
    browser,
    server,
    shots,
    tiny_server,
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
        f"/plans/{plan}/replay",
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


def _done(d, kind: str) -> bool:
    """The jobs page lists a job of ``kind`` (its words) that has finished."""
    from selenium.webdriver.common.by import By

    d.get(d.current_url.split("/", 3)[0] + "//" + d.current_url.split("/", 3)[2] + "/jobs")
    rows = [r.text for r in d.find_elements(By.CSS_SELECTOR, "tr")]
    return any(kind in r and not any(s in r for s in ("queued", "running")) for r in rows)


def test_no_serious_or_critical_violation_on_the_pages_with_results(tiny_server, browser, shots):  # noqa: F811
    """The pages as they are once something has run, on tests/web/test_meeting.py's tiny
    problem (each job takes seconds): the what-if panel with a result, the plan page after
    its sensitivity run and its price watch (against tests/data/prices/lambda/vms.csv
    uploaded from the problem page), the alternatives and the preferences pages with their
    results, and the page of every job of each kind run (solve, sensitivity, price upload,
    watch, alternatives, preferences)."""
    from selenium.webdriver.common.by import By

    from tests.web.test_browser_meeting import _problem_page

    d = browser
    d.set_script_timeout(120)
    found: dict[str, list[dict]] = {}

    def check(name: str) -> None:
        _wait(d, lambda d: d.execute_script("return document.readyState") == "complete", 30)
        bad = blocking(d)
        if bad:
            found[name] = bad

    problem = _problem_page(d, tiny_server)
    d.find_element(By.ID, "demand_factor").send_keys("1.5")
    _wait(d, lambda d: d.find_element(By.ID, "whatif-total").text == "$87,600.00", 60)
    check("the what-if panel with a result")  # 30 x $4 x 730 h
    d.get(problem)  # a price snapshot uploaded from the page, for the watch below
    d.find_element(By.CSS_SELECTOR, "#price-source option[value='skypilot']").click()
    vms = ROOT / "tests" / "data" / "prices" / "lambda" / "vms.csv"
    d.find_element(By.ID, "price-file").send_keys(str(vms))
    d.execute_script("document.getElementById('price-date').value = '2026-10-15';")
    d.find_element(By.ID, "price-provider").send_keys("lambda")
    d.find_element(By.ID, "upload-prices-button").click()
    _wait(d, lambda d: _done(d, "price snapshot upload"), 120)
    d.get(problem)
    d.find_element(By.CSS_SELECTOR, "td a[href^='/plans/']").click()  # the base's plan
    _wait(d, lambda d: "/plans/" in d.current_url)
    plan = d.current_url
    d.find_element(By.ID, "analyse").click()

    def analysed(d) -> bool:
        d.get(plan)
        return bool(d.find_elements(By.ID, "sensitivity"))

    _wait(d, analysed, 120)
    d.find_element(By.ID, "watch").click()
    _wait(d, lambda d: _done(d, "price watch"), 120)
    d.get(plan)
    assert d.find_elements(By.ID, "price-watch")  # the watch's result on the plan page
    d.get(plan)
    check("the plan page after its sensitivity run and price watch")
    for page, button, table in (
        ("alternatives", "run-alternatives", "alternatives-table"),
        ("preferences", "run-preferences", "preferences-table"),
    ):
        d.get(f"{plan}/{page}")
        if page == "alternatives":  # one plan within 30% on other regions (test_meeting.py)
            d.find_element(By.ID, "slack").clear()
            d.find_element(By.ID, "slack").send_keys("0.3")
            d.find_element(By.ID, "n").clear()
            d.find_element(By.ID, "n").send_keys("1")
            d.find_element(By.CSS_SELECTOR, "#differ_by option[value='regions']").click()
        if not d.find_elements(By.ID, table):
            d.find_element(By.ID, button).click()
            _wait(d, lambda d, table=table: d.find_elements(By.ID, table), 120)
        check(f"the {page} page with results")
    d.get(tiny_server + "/jobs")
    jobs = {
        a.get_attribute("href")
        for a in d.find_elements(By.CSS_SELECTOR, "a[href*='/jobs/']")
        if a.get_attribute("href").rsplit("/", 1)[1].isdigit()
    }
    for url in sorted(jobs):
        d.get(url)
        check(f"job page {url.removeprefix(tiny_server)}")
    assert len(jobs) >= 6  # solve, sensitivity, upload, watch, alternatives, preferences
    assert found == {}, "\n".join(f"{page}: {v}" for page, vs in found.items() for v in vs)
