"""Keyboard use, accessible names of every control, and a phone-sized screen."""

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from support import (
    PHONE, BrowserTestCase, User, body_data, choose, click, dialog_open, displayed, exists, find_in_queue,
    isolated_spot, js, log_in, make_moderator, offset, open_app_as, set_tenant, show_map, show_panel, show_tab,
    wait_dialog, wait_for_stream, wait_idle, wait_pin, wait_until,
)

CONTROLS = ("button, input:not([type=hidden]), select, textarea, a[href], [role=button], [role=tab], "
            "[role=checkbox], [role=radio], [role=link], [tabindex]:not([tabindex='-1'])")


def active_id(driver):
    return js(driver, "return document.activeElement ? document.activeElement.id : ''")


def press(driver, *keys):
    ActionChains(driver).send_keys(*keys).perform()


def tab_to(driver, element_id, limit=120):
    """Presses Tab until element_id has the focus, as someone without a mouse would."""
    for _ in range(limit):
        if active_id(driver) == element_id:
            return
        press(driver, Keys.TAB)
    raise AssertionError(f"#{element_id} cannot be reached with Tab ({limit} presses)")


def unnamed_controls(driver):
    """Shown controls whose computed accessible name (Chromium's own) is empty. With a modal
    dialog open, the rest of the page is inert (and nameless to Chromium): the dialog's only.
    The map redraws its markers as data arrives, so a scan that meets a replaced element
    starts again (a handful of times) on the page as it now is."""
    for _ in range(5):
        try:
            return _unnamed_controls_once(driver)
        except StaleElementReferenceException:
            wait_idle(driver)
    return _unnamed_controls_once(driver)


def _unnamed_controls_once(driver):
    missing = []
    # A dialog opened over another (the suspension's over the moderation queue) comes later in the page.
    dialogs = driver.find_elements(By.CSS_SELECTOR, "dialog[open]")
    root = dialogs[-1] if dialogs else driver
    for element in root.find_elements(By.CSS_SELECTOR, CONTROLS):
        if not element.is_displayed():
            continue
        if not (element.accessible_name or "").strip():
            missing.append(js(driver, "return arguments[0].outerHTML.slice(0, 160)", element))
    return missing


class KeyboardTests(BrowserTestCase):
    def test_the_note_dialog_opens_fills_and_saves_with_the_keyboard_only(self):
        me = User.sign_up("keyboard")
        driver = open_app_as(self, me, isolated_spot())
        show_map(driver)
        js(driver, "document.activeElement && document.activeElement.blur()")

        tab_to(driver, "new-note-button")
        press(driver, Keys.ENTER)
        wait_dialog(driver, "#note-dialog")
        wait_until(driver, lambda d: active_id(d) == "note-body", "the dialog does not put the focus in #note-body")
        press(driver, "Tea kiosk, keyboard only")
        tab_to(driver, "note-save", limit=10)
        press(driver, Keys.ENTER)
        wait_dialog(driver, "#note-dialog", is_open=False)
        notes = wait_until(driver, lambda d: me.notes(author="me"), "the note was not saved")
        self.assertEqual(notes[0]["body"], "Tea kiosk, keyboard only")
        wait_pin(driver, notes[0]["id"], "mine")

        # Escape closes the dialog and saves nothing.
        tab_to(driver, "new-note-button")
        press(driver, Keys.ENTER)
        wait_dialog(driver, "#note-dialog")
        press(driver, "Not this one")
        press(driver, Keys.ESCAPE)
        wait_dialog(driver, "#note-dialog", is_open=False)
        self.assertEqual(len(me.notes(author="me")), 1, "Escape saved the note")


class AccessibleNameTests(BrowserTestCase):
    def test_every_control_has_an_accessible_name(self):
        me = User.sign_up("names")
        driver = self.open_browser(position=isolated_spot())
        self.assertEqual(unnamed_controls(driver), [], "signed out, on the login form")
        click(driver, "#show-signup")
        wait_until(driver, lambda d: displayed(d, "#signup-form"), "no sign-up form")
        self.assertEqual(unnamed_controls(driver), [], "signed out, on the sign-up form")
        click(driver, "#show-login")
        wait_until(driver, lambda d: displayed(d, "#login-form"), "no login form")

        log_in(driver, me)
        wait_for_stream(driver)
        for tab in ("map", "list", "places"):
            show_tab(driver, tab)
            self.assertEqual(unnamed_controls(driver), [], f"signed in, the {tab} tab")

        show_panel(driver, "map")
        click(driver, "#new-note-button")
        wait_dialog(driver, "#note-dialog")
        self.assertEqual(unnamed_controls(driver), [], "the note dialog")
        click(driver, "#note-cancel")
        wait_dialog(driver, "#note-dialog", is_open=False)

        show_panel(driver, "places")
        click(driver, "#new-place-button")
        wait_dialog(driver, "#place-dialog")
        self.assertEqual(unnamed_controls(driver), [], "the place dialog")
        press(driver, Keys.ESCAPE)
        wait_dialog(driver, "#place-dialog", is_open=False)

    def test_the_safety_dialogs_have_accessible_names(self):
        me, writer, reporter = User.sign_up("a11ymod"), User.sign_up("a11ywriter"), User.sign_up("a11yreporter")
        make_moderator(self, me)
        here = isolated_spot()
        note = writer.create_note("Reported for the names test", offset(here, north_m=30))
        reporter.report("note", note["id"], "spam")
        # The terms, once the note is written (writing needs them accepted).
        set_tenant(self, "terms_version", "2026-11-a11y", restore="")
        set_tenant(self, "terms_required", "true", restore="false")
        set_tenant(self, "contact_url", "https://help.example.org/", restore="")
        driver = open_app_as(self, me, here)

        wait_dialog(driver, "#terms-dialog")
        self.assertEqual(unnamed_controls(driver), [], "the terms dialog")
        click(driver, "#terms-accept")
        wait_dialog(driver, "#terms-dialog", is_open=False)
        wait_until(driver, lambda d: displayed(d, "#moderation-button") and displayed(d, "#contact-link"),
                   "no Moderation button or Contact link")
        self.assertEqual(unnamed_controls(driver), [], "the account bar of a moderator")

        click(driver, "#moderation-button")
        wait_dialog(driver, "#moderation-dialog")
        item = f'#moderation-queue li[data-target-id="{note["id"]}"]'
        find_in_queue(driver, item)
        self.assertEqual(unnamed_controls(driver), [], "the moderation queue")
        click(driver, f"{item} button.decide-suspend-author")
        wait_dialog(driver, "#decision-dialog")
        choose(driver, "#decision-duration", "date")
        wait_until(driver, lambda d: displayed(d, "#decision-date"), "no date to choose")
        self.assertEqual(unnamed_controls(driver), [], "the suspension dialog")
        click(driver, "#decision-cancel")
        wait_dialog(driver, "#decision-dialog", is_open=False)
        click(driver, "#moderation-tab-log")
        wait_until(driver, lambda d: exists(d, "#moderation-log li"), "the log is empty")
        self.assertEqual(unnamed_controls(driver), [], "the moderation log")
        click(driver, "#moderation-close")
        wait_dialog(driver, "#moderation-dialog", is_open=False)

        show_panel(driver, "list")
        author = f'#note-list li[data-note-id="{note["id"]}"] button.note-author'
        click(driver, author)
        wait_dialog(driver, "#profile-dialog")
        wait_until(driver, lambda d: displayed(d, "#profile-report"), "the profile did not load")
        self.assertEqual(unnamed_controls(driver), [], "a profile")


class PhoneTests(BrowserTestCase):
    def test_a_phone_sized_screen_shows_the_map_and_usable_tabs(self):
        me = User.sign_up("phone")
        driver = self.open_browser(size=PHONE, position=isolated_spot())
        self.assertLessEqual(js(driver, "return document.documentElement.scrollWidth"), PHONE[0],
                             "the sign-in page scrolls sideways")
        log_in(driver, me)
        wait_for_stream(driver)

        for tab in ("map", "list", "places", "map"):
            show_tab(driver, tab)
            self.assertLessEqual(js(driver, "return document.documentElement.scrollWidth"), PHONE[0],
                                 f"the {tab} tab scrolls sideways")
            for other in ("map", "list", "places"):
                self.assertEqual(driver.find_element(By.ID, f"tab-{other}").get_attribute("aria-selected"),
                                 "true" if other == tab else "false")
        self.assertTrue(all(displayed(driver, f"#tab-{t}") for t in ("map", "list", "places")), "tabs are shown")

        size = js(driver, "const r = document.getElementById('map').getBoundingClientRect(); return [r.width, r.height]")
        self.assertGreaterEqual(size[0], PHONE[0] - 20, "the map takes the phone's width")
        self.assertGreaterEqual(size[1], PHONE[1] * 0.45, "the map takes much of the phone's height")
        leaflet_size = js(driver, "const s = lrApp.map.getSize(); return [s.x, s.y]")
        self.assertEqual([round(v) for v in size], leaflet_size, "Leaflet knows the map's size after switching tabs")
        self.assertTrue(displayed(driver, "#new-note-button"))
        self.assertTrue(displayed(driver, "#follow-button"))
        self.assertTrue(displayed(driver, "#tab-list"))
        for selector in ("#new-note-button", "#tab-list", "#tab-places"):
            box = js(driver, "const r = document.querySelector(arguments[0]).getBoundingClientRect();"
                             "return [r.left, r.top, r.right, r.bottom]", selector)
            self.assertTrue(0 <= box[0] and box[2] <= PHONE[0] and 0 <= box[1] and box[3] <= PHONE[1],
                            f"{selector} is not wholly on the screen: {box}")

        click(driver, "#new-note-button")
        wait_dialog(driver, "#note-dialog")
        width = js(driver, "return document.getElementById('note-dialog').getBoundingClientRect().width")
        self.assertLessEqual(width, PHONE[0], "the note dialog fits the phone")
        click(driver, "#note-cancel")
        wait_dialog(driver, "#note-dialog", is_open=False)
        self.assertFalse(dialog_open(driver, "#note-dialog"))
        self.assertEqual(body_data(driver, "signedIn"), "true")
