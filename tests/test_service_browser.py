"""The service's page in a real browser: headless Chromium (Debian's chromium + chromium-driver) via selenium."""
import os
import shutil

import httpx
import pytest

from pipeline.service import ServiceSettings, create_app
from serving import served_in_thread

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1100,700",
                  "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"]   # any non-loopback fetch fails


def require_chromium() -> None:
    """CI installs the packages (.ci/run), so there a missing browser is a failure, elsewhere a skip."""
    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if not shutil.which(path)]
    if missing:
        message = f"{' and '.join(missing)} not found: apt-get install chromium chromium-driver"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module")
def server_url(tiny_engine):
    """The app under a real uvicorn server on 127.0.0.1, in a thread of this process."""
    with served_in_thread(create_app(tiny_engine, ServiceSettings())) as url:
        yield url


@pytest.fixture(scope="module")
def two_way_url(tiny_engine, tiny_it_en_engine):
    """An app serving both tiny runs, English -> Italian and Italian -> English."""
    with served_in_thread(create_app([tiny_engine, tiny_it_en_engine], ServiceSettings())) as url:
        yield url


@pytest.fixture
def browser(tmp_path):
    require_chromium()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS + [f"--user-data-dir={tmp_path / 'profile'}"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def test_page_translates_a_typed_sentence(browser, server_url, tiny_engine, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    sentence = "Where is the station?"
    browser.get(server_url + "/")
    assert browser.title == "English → Italian"
    WebDriverWait(browser, 30).until(lambda d: "backend" in d.find_element(By.ID, "model").text)  # /health answered
    browser.find_element(By.ID, "english").send_keys(sentence)
    browser.find_element(By.ID, "translate").click()
    WebDriverWait(browser, 60).until(lambda d: d.find_element(By.ID, "italian").text.strip())
    italian = browser.find_element(By.ID, "italian").text
    assert italian == tiny_engine.translate([sentence])[0] and italian != sentence
    assert " ms (service " in browser.find_element(By.ID, "time").text
    assert browser.find_element(By.ID, "error").text == ""
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert errors == [], errors                     # nothing failed to load: the page needs no network
    screenshot = tmp_path / "page.png"
    assert browser.save_screenshot(str(screenshot))
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_page_shows_a_service_error(browser, server_url):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(server_url + "/")
    browser.find_element(By.ID, "english").send_keys("x" * 1001)
    browser.find_element(By.ID, "translate").click()
    WebDriverWait(browser, 30).until(lambda d: d.find_element(By.ID, "error").text)
    assert browser.find_element(By.ID, "error").text == "413: text 0 has 1001 characters; the limit is 1000"
    assert httpx.get(server_url + "/health", timeout=5).status_code == 200


def test_page_uploads_a_glossary_and_translates_with_it(browser, server_url, tiny_engine, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    terms = tmp_path / "house style.tsv"
    terms.write_text("english\titalian\nstation\tstazione ferroviaria\nTom\tTom\n", encoding="utf-8")
    sentence = "Where is the station?"
    browser.get(server_url + "/")
    WebDriverWait(browser, 30).until(lambda d: "backend" in d.find_element(By.ID, "model").text)
    browser.find_element(By.ID, "glossary-file").send_keys(str(terms))
    WebDriverWait(browser, 30).until(lambda d: "house style.tsv" in d.find_element(By.ID, "glossary").text)
    menu = Select(browser.find_element(By.ID, "glossary"))
    assert menu.first_selected_option.text == "house style.tsv (2)"            # the upload is picked
    assert browser.find_element(By.ID, "time").text == "glossary house style.tsv: 2 terms"
    browser.find_element(By.ID, "english").send_keys(sentence)
    browser.find_element(By.ID, "translate").click()
    WebDriverWait(browser, 60).until(lambda d: d.find_element(By.ID, "italian").text.strip())
    glossary = {"station": "stazione ferroviaria", "Tom": "Tom"}
    assert browser.find_element(By.ID, "italian").text == tiny_engine.translate([sentence], glossary=glossary)[0]
    browser.get(server_url + "/")                                              # a new visit lists it again
    WebDriverWait(browser, 30).until(lambda d: "house style.tsv" in d.find_element(By.ID, "glossary").text)
    assert browser.find_element(By.ID, "error").text == ""


def test_page_translates_a_document_and_offers_it_for_download(browser, server_url, tiny_engine, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from pipeline.documents import translate_document

    subtitles = tmp_path / "talk.srt"
    subtitles.write_text("1\n00:00:01,000 --> 00:00:03,000\nWhere is the station?\n\n"
                         "2\n00:00:04,000 --> 00:00:06,500\n<i>It's raining.</i>\n", encoding="utf-8")
    browser.get(server_url + "/")
    WebDriverWait(browser, 30).until(lambda d: "backend" in d.find_element(By.ID, "model").text)
    assert not browser.find_element(By.ID, "document-pane").is_displayed()
    browser.find_element(By.ID, "tab-document").click()
    assert browser.find_element(By.ID, "document-pane").is_displayed()
    assert not browser.find_element(By.ID, "english").is_displayed()
    browser.find_element(By.ID, "document-file").send_keys(str(subtitles))
    link = WebDriverWait(browser, 60).until(
        lambda d: d.find_element(By.ID, "document-link") if d.find_element(By.ID, "document-link").is_displayed()
        else None)
    assert link.text == "download talk.it.srt" and link.get_attribute("download") == "talk.it.srt"
    fetched = browser.execute_async_script(      # what the link holds: read back the blob it points to
        "const done = arguments[arguments.length - 1];"
        "fetch(arguments[0]).then(r => r.text()).then(done, e => done('failed: ' + e));", link.get_attribute("href"))
    default_beam = httpx.get(server_url + "/health", timeout=5).json()["default_beam"]
    assert fetched == translate_document(tiny_engine, subtitles, beam=default_beam).decode("utf-8")
    assert "00:00:04,000 --> 00:00:06,500\n<i>" in fetched
    assert browser.find_element(By.ID, "document-status").text.startswith("translated in ")
    assert browser.find_element(By.ID, "error").text == ""


def test_page_of_two_runs_translates_the_pair_chosen(browser, two_way_url, tiny_engine, tiny_it_en_engine):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    browser.get(two_way_url + "/")
    assert browser.title == "English → Italian, Italian → English"
    WebDriverWait(browser, 30).until(lambda d: "backend" in d.find_element(By.ID, "model").text)
    pair = Select(browser.find_element(By.ID, "pair"))
    assert [option.text for option in pair.options] == ["English → Italian", "Italian → English"]
    assert browser.find_element(By.ID, "source-name").text == "English"
    pair.select_by_visible_text("Italian → English")
    assert browser.find_element(By.ID, "source-name").text == "Italian"
    assert browser.find_element(By.ID, "target-name").text == "English"
    sentence = "Dov'è la stazione?"
    browser.find_element(By.ID, "english").send_keys(sentence)
    browser.find_element(By.ID, "translate").click()
    WebDriverWait(browser, 60).until(lambda d: d.find_element(By.ID, "italian").text.strip())
    assert browser.find_element(By.ID, "italian").text == tiny_it_en_engine.translate([sentence])[0]
    pair.select_by_visible_text("English → Italian")
    browser.find_element(By.ID, "english").clear()
    browser.find_element(By.ID, "english").send_keys("Where is the station?")
    browser.find_element(By.ID, "translate").click()
    WebDriverWait(browser, 60).until(lambda d: d.find_element(By.ID, "italian").text.strip())
    assert browser.find_element(By.ID, "italian").text == tiny_engine.translate(["Where is the station?"])[0]
    assert browser.find_element(By.ID, "error").text == ""
    assert [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"] == []
