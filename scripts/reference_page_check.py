"""Opens placement-api's API reference page in headless Chromium, as a
person would, and checks its version picker (scripts/reference-page-check.sh
runs it):

- at 1.0 the page shows the 1.0 document, without /allocation_candidates
  (added in 1.10) and with /resource_providers;
- switched to 1.39, it shows /allocation_candidates, and the page's
  address says ?version=1.39;
- every request the browser made went to the server (nothing fetched from
  anywhere else), and the browser logged no error (no refused load, no
  script error).

    reference_page_check.py BASE_URL SCREENSHOT_DIR

Prints one line per check and "N passed, N failed"; exit status 1 when a
check fails.
"""

import json
import sys
import tempfile

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WAIT_SECONDS = 30


def browser(profile_dir):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1280,2000",
        f"--user-data-dir={profile_dir}",
    ):
        options.add_argument(flag)
    # Every request the page makes, and the console.
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    return webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))


def shown_version(driver):
    """The version Swagger UI shows in the document's title, if any."""
    found = driver.find_elements(By.CSS_SELECTOR, ".information-container .info .title pre.version")
    return found[0].text.strip() if found else None


def paths(driver):
    return {
        e.get_attribute("data-path")
        for e in driver.find_elements(By.CSS_SELECTOR, ".opblock-summary-path[data-path]")
    }


def main():
    base, shots = sys.argv[1].rstrip("/"), sys.argv[2]
    results = []

    def check(name, ok, detail=""):
        results.append(ok)
        print(("ok: " if ok else "FAILED: ") + name + ("" if ok or not detail else f" ({detail})"))

    def wait_for(driver, version):
        try:
            WebDriverWait(driver, WAIT_SECONDS).until(
                lambda d: shown_version(d) == version and len(paths(d)) > 0
            )
            return True
        except TimeoutException:
            return False

    with tempfile.TemporaryDirectory(prefix="chromium-profile.") as profile:
        driver = browser(profile)
        try:
            driver.get(f"{base}/api-ref")
            check("the page opens at 1.39", wait_for(driver, "1.39"), f"shows {shown_version(driver)}")
            picker = Select(driver.find_element(By.ID, "mv-version"))
            offered = [o.get_attribute("value") for o in picker.options]
            check(
                "the picker offers 1.0 to 1.39 and the whole range",
                offered == [f"1.{m}" for m in range(40)] + ["all"],
                f"offers {offered}",
            )

            picker.select_by_value("1.0")
            check("switched to 1.0, the 1.0 document is shown", wait_for(driver, "1.0"),
                  f"shows {shown_version(driver)}")
            at_1_0 = paths(driver)
            check("at 1.0, /resource_providers is listed", "/resource_providers" in at_1_0, sorted(at_1_0))
            check("at 1.0, /allocation_candidates is absent", "/allocation_candidates" not in at_1_0,
                  sorted(at_1_0))
            driver.save_screenshot(f"{shots}/reference-1.0.png")

            picker.select_by_value("1.39")
            check("switched to 1.39, the 1.39 document is shown", wait_for(driver, "1.39"),
                  f"shows {shown_version(driver)}")
            try:
                WebDriverWait(driver, WAIT_SECONDS).until(lambda d: "/allocation_candidates" in paths(d))
                appeared = True
            except TimeoutException:
                appeared = False
            check("at 1.39, /allocation_candidates appears", appeared, sorted(paths(driver)))
            check("the address names 1.39", driver.current_url.endswith("/api-ref?version=1.39"),
                  driver.current_url)
            driver.save_screenshot(f"{shots}/reference-1.39.png")

            requested = []
            for entry in driver.get_log("performance"):
                message = json.loads(entry["message"])["message"]
                if message["method"] == "Network.requestWillBeSent":
                    requested.append(message["params"]["request"]["url"])
            # Over the network (not data: or the browser's own chrome:
            # pages), only to the server.
            network = [u for u in requested if u.split(":", 1)[0] in ("http", "https", "ws", "wss", "ftp")]
            elsewhere = [u for u in network if not u.startswith(base + "/")]
            check("the page loaded its files and both documents from the server",
                  f"{base}/api-ref/swagger-ui-bundle.js" in requested
                  and f"{base}/openapi.json?version=1.0" in requested
                  and f"{base}/openapi.json?version=1.39" in requested,
                  network)
            check("nothing was fetched from anywhere else", not elsewhere, elsewhere)
            errors = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
            check("the browser logged no error", not errors, errors)
        finally:
            driver.quit()

    passed = sum(results)
    print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
