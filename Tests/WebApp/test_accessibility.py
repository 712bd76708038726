"""Keyboard use, accessible names of every control, and a phone-sized screen."""

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from support import (
    PHONE, BrowserTestCase, User, body_data, click, dialog_open, displayed, isolated_spot, js, log_in,
    open_app_as, show_map, show_panel, show_tab, wait_dialog, wait_for_stream, wait_idle, wait_pin, wait_until,
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
    dialogs = driver.find_elements(By.CSS_SELECTOR, "dialog[open]")
    root = dialogs[0] if dialogs else driver
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
