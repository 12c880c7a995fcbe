"""The meeting's questions from the problem page in a real headless Chromium (issue 51,
Must show): "EU only" chosen from the form gives an EU plan; a failure-domain variant from
the form; a field changed updates the total without a reload; 'Show alternatives' on the
plan page runs as a job and shows the plans side by side.

On tests/web/test_meeting.py's tiny problem (figures worked there): base $58,400 in
us-east; EU only $73,000 in eu-north; surviving the loss of a region $131,400; demand
x 1.5 $87,600 (+$29,200). Each test runs in seconds.
"""

from __future__ import annotations

import yaml

from tests.web import test_browser as real_browser
from tests.web.test_analysis_jobs import FRONTIER_PROBLEM
from tests.web.test_browser import _sign_in_as, _solve_and_open_plan, _wait

# the real Chromium and the tiny catalog's server of tests/web/test_browser.py, by name
pytestmark = real_browser.pytestmark
browser = real_browser.browser
shots = real_browser.shots
tiny_server = real_browser.tiny_server


def _problem_page(d, server: str) -> str:
    """The tiny problem's page (stored on the first call, its base solved)."""
    from selenium.webdriver.common.by import By

    _sign_in_as(d, server, "ian")
    d.get(server + "/")
    links = d.find_elements(By.CSS_SELECTOR, 'a[href^="/problems/"]')
    if links:
        d.get(links[0].get_attribute("href"))
        return d.current_url
    box = d.find_element(By.ID, "yaml_text")
    d.execute_script("arguments[0].value = arguments[1];", box, yaml.safe_dump(FRONTIER_PROBLEM))
    d.find_element(By.ID, "add-problem").click()
    _wait(d, lambda d: "/problems/" in d.current_url)
    url = d.current_url
    _solve_and_open_plan(d, "base", None, None)  # type: ignore[arg-type]
    assert d.find_element(By.ID, "total").text == "$58,400"  # 20 x $4 x 730 h
    d.get(url)
    return url


def _plan_regions(d, plan_id: str) -> set[str]:
    """The regions of the plan's lines with units, from its JSON (as the page fetches)."""
    script = (
        "const done = arguments[arguments.length - 1];"
        f"fetch('/api/plans/{plan_id}').then(r => r.json())"
        ".then(p => done(p.line_items.filter(i => i.units > 0).map(i => i.region)));"
    )
    return set(d.execute_async_script(script))


def test_eu_only_from_the_form_gives_an_eu_plan(tiny_server, browser, shots):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    d = browser
    url = _problem_page(d, tiny_server)
    d.find_element(By.ID, "name").send_keys("eu-only")
    groups = Select(d.find_element(By.ID, "region_group"))
    assert [o.text for o in groups.options] == ["all regions", "EU only", "US only"]
    groups.select_by_visible_text("EU only")
    d.save_screenshot(str(shots / "variant-form-eu-only.png"))
    d.find_element(By.ID, "add-variant").click()
    _wait(d, lambda d: d.current_url == url)
    plan_id = _solve_and_open_plan(d, "eu-only", shots, None)
    assert d.find_element(By.ID, "total").text == "$73,000"  # 20 x $5 x 730 h
    assert _plan_regions(d, plan_id) == {"eu-north"}


def test_failure_domain_variant_from_the_form(tiny_server, browser, shots):
    from selenium.webdriver.common.by import By

    d = browser
    url = _problem_page(d, tiny_server)
    d.find_element(By.ID, "name").send_keys("survive-a-region")
    d.find_element(By.ID, "survive_region").click()
    d.find_element(By.ID, "add-variant").click()
    _wait(d, lambda d: d.current_url == url)
    plan_id = _solve_and_open_plan(d, "survive-a-region", shots, None)
    assert d.find_element(By.ID, "total").text == "$131,400"  # 20 units in each region
    assert _plan_regions(d, plan_id) == {"us-east", "eu-north"}


def test_a_field_changed_updates_the_total_without_a_reload(tiny_server, browser, shots):
    from selenium.webdriver.common.by import By

    d = browser
    _problem_page(d, tiny_server)
    d.execute_script("window.notReloaded = true;")
    d.find_element(By.ID, "demand_factor").send_keys("1.5")
    total = lambda d: d.find_element(By.ID, "whatif-total").text  # noqa: E731
    _wait(d, lambda d: total(d) == "$87,600.00", 60)  # 30 x $4 x 730 h
    assert d.find_element(By.ID, "whatif-change").text == "+$29,200.00"
    cells = [c.text for c in d.find_elements(By.CSS_SELECTOR, "#whatif-lines tbody td")]
    assert cells[1:] == ["$58,400.00", "$87,600.00", "+$29,200.00"]
    assert "acme us-east" in cells[0]
    assert d.execute_script("return window.notReloaded === true;")  # the same page
    # a field refused: its message beside the field, the total left as it was
    slo = d.find_element(By.ID, "slo_percentile")
    slo.send_keys("1.5")
    beside = '.whatif-field-error[data-field="slo_percentile"]'
    note = _wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, beside), 60)[0]
    assert "Input should be less than 1" in note.text
    d.save_screenshot(str(shots / "what-if.png"))
    assert d.execute_script("return window.notReloaded === true;")


def test_show_alternatives_side_by_side(tiny_server, browser, shots):
    from selenium.webdriver.common.by import By

    d = browser
    _problem_page(d, tiny_server)
    d.find_element(By.CSS_SELECTOR, "td a[href^='/plans/']").click()  # the base's plan
    _wait(d, lambda d: "/plans/" in d.current_url)
    d.find_element(By.ID, "alternatives-link").click()
    _wait(d, lambda d: d.current_url.endswith("/alternatives"))
    d.find_element(By.ID, "slack").clear()
    d.find_element(By.ID, "slack").send_keys("0.3")
    d.find_element(By.ID, "n").clear()
    d.find_element(By.ID, "n").send_keys("1")
    d.find_element(By.CSS_SELECTOR, "#differ_by option[value='regions']").click()
    d.find_element(By.ID, "run-alternatives").click()
    table = _wait(d, lambda d: d.find_elements(By.ID, "alternatives-table"), 120)[0]
    d.save_screenshot(str(shots / "alternatives.png"))
    heads = [h.text for h in table.find_elements(By.CSS_SELECTOR, "thead th")]
    assert heads == ["measure", "optimum", "alternative 1"]
    first = [
        c.text
        for c in table.find_elements(By.CSS_SELECTOR, "tbody tr")[0].find_elements(
            By.TAG_NAME, "td"
        )
    ]
    assert first == ["$58,400", "$73,000"]  # EU only, reusing no region of the optimum's


def test_the_price_of_each_preference_in_one_table(tiny_server, browser, shots):
    """'Price each preference' on the base plan's page runs as a job; its page shows one
    table (figures worked by hand in tests/web/test_meeting.py: excluding region group us
    costs +$14,600, requiring eu +$730; acme, h100-sxm and on_demand cannot be excluded)."""
    from selenium.webdriver.common.by import By

    from tests.web.conftest import blocking

    d = browser
    _problem_page(d, tiny_server)
    d.find_element(By.CSS_SELECTOR, "td a[href^='/plans/']").click()  # the base's plan
    _wait(d, lambda d: "/plans/" in d.current_url)
    d.find_element(By.ID, "price-preferences").click()
    _wait(d, lambda d: d.current_url.endswith("/preferences"))
    table = _wait(d, lambda d: d.find_elements(By.ID, "preferences-table"), 120)[0]
    d.save_screenshot(str(shots / "preferences.png"))
    rows = {
        tuple(c.text for c in r.find_elements(By.CSS_SELECTOR, "td, th")[:3]): [
            c.text for c in r.find_elements(By.CSS_SELECTOR, "td, th")[3:]
        ]
        for r in table.find_elements(By.CSS_SELECTOR, "tbody tr")
    }
    assert rows[("region group", "us", "exclude it")] == [
        "$73,000",
        "+$14,600",
        "+25.00%",
        "optimal",
    ]
    assert rows[("region group", "eu", "require it")] == ["$59,130", "+$730", "+1.25%", "optimal"]
    assert rows[("provider", "acme", "exclude it")][-1] == "infeasible"
    assert blocking(d) == []  # axe-core: the table of preferences
