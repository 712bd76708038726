"""Screenshots for the documentation (scripts/test-web.sh --screenshots): the map, the list
and search results at phone and desktop sizes, around Circular Quay in Sydney."""

import os
import unittest

from support import (
    DESKTOP, PHONE, BrowserTestCase, User, choose, fill, ids_of, js, offset, open_app_as,
    set_zoom, show_panel, wait_idle, wait_pin, wait_until,
)

SHOTS = os.environ.get("LR_WEB_SCREENSHOTS") == "1"
FOLDER = os.environ.get("LR_WEB_SCREENSHOT_DIR", os.path.join(os.getcwd(), "docs", "screenshots"))
CIRCULAR_QUAY = (-33.8612, 151.2109)

# (author, text, metres north, metres east of Circular Quay)
DEMO_NOTES = [
    ("maya", "Ferry to Manly leaves from wharf 3, sit on the right for the Opera House", 15, 5),
    ("maya", "Gelato by the water, the pistachio is the one", -60, 140),
    ("maya", "Harbour view from the top deck of the overseas terminal", 120, -180),
    ("liam", "Free harbour walk meets here at 11 every Saturday", -30, -60),
    ("liam", "Quiet bench in the shade, good for lunch", 210, 260),
    ("noor", "Street musicians most evenings near the station stairs", -140, 20),
    ("noor", "The Rocks markets on weekends: try the dumplings", 300, -320),
]


@unittest.skipUnless(SHOTS, "screenshots only with scripts/test-web.sh --screenshots")
class ScreenshotTests(BrowserTestCase):
    @classmethod
    def setUpClass(cls):
        users = {}
        for author, text, north, east in DEMO_NOTES:
            if author not in users:
                users[author] = User.sign_up(author, exact=True)
            users[author].create_note(text, offset(CIRCULAR_QUAY, north_m=north, east_m=east))
        cls.viewer = users["maya"]
        os.makedirs(FOLDER, exist_ok=True)

    def shoot(self, driver, name):
        wait_idle(driver)
        js(driver, "document.activeElement?.blur()")  # no focus ring in the pictures
        driver.save_screenshot(os.path.join(FOLDER, f"{name}.png"))

    def screens(self, size, suffix):
        driver = open_app_as(self, self.viewer, offset(CIRCULAR_QUAY, north_m=40, east_m=30), size=size)
        show_panel(driver, "list")
        choose(driver, "#distance-select", "1000")
        show_panel(driver, "map")
        set_zoom(driver, 16)
        mine = [n["id"] for n in self.viewer.notes(author="me")]
        for note_id in mine:
            wait_pin(driver, note_id, "mine")
        self.shoot(driver, f"map-{suffix}")

        show_panel(driver, "list")
        wait_until(driver, lambda d: len(ids_of(d, "#note-list li.note-item")) >= len(DEMO_NOTES), "the list is short")
        self.shoot(driver, f"list-{suffix}")

        fill(driver, "#search-input", "harbour")
        wait_until(driver, lambda d: 0 < len(ids_of(d, "#note-list li.note-item")) < len(DEMO_NOTES),
                   "no search results")
        self.shoot(driver, f"search-{suffix}")

    def test_phone(self):
        self.screens(PHONE, "phone")

    def test_desktop(self):
        self.screens(DESKTOP, "desktop")
