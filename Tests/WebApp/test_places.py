"""Places: the operator's default places and users' custom ones nearest first, naming a
spot as a new place, and the notes at a place."""

from selenium.webdriver.common.by import By

from support import (
    SYDNEY, BrowserTestCase, User, click, dialog_open, displayed, fill, ground_distance, ids_of,
    near, offset, open_app_as, save_note_in_dialog, show_panel, text_of, wait_dialog, wait_until,
)

PLACE_ITEMS = "#place-list li.place-item"


def place_item(place_id):
    return f'{PLACE_ITEMS}[data-place-id="{place_id}"]'


class PlacesTests(BrowserTestCase):
    def test_default_and_custom_places_nearest_first_and_naming_a_spot(self):
        me, other = User.sign_up("placer"), User.sign_up("namer")
        here = offset(SYDNEY, north_m=-150, east_m=-60)
        custom = other.create_place("Ferry wharf kiosk", offset(here, north_m=350))
        driver = open_app_as(self, me, here)
        show_panel(driver, "places")

        expected = [p["id"] for p in me.places(near=near(here), limit=10)]
        self.assertIn(custom["id"], expected)
        wait_until(driver, lambda d: ids_of(d, PLACE_ITEMS)[:len(expected)] == expected,
                   f"places are not nearest first: expected {expected}, shown {ids_of(driver, PLACE_ITEMS)}")
        default = next(p for p in me.places(near=near(here)) if p["kind"] == "default")
        default_kind = text_of(driver, f'{place_item(default["id"])} .place-kind')
        custom_kind = text_of(driver, f'{place_item(custom["id"])} .place-kind')
        self.assertTrue(default_kind and custom_kind, "each place says what kind it is")
        self.assertNotEqual(default_kind, custom_kind, "default and custom places are told apart")
        self.assertEqual(text_of(driver, f'{place_item(custom["id"])} .place-name'), "Ferry wharf kiosk")
        self.assertEqual(text_of(driver, f'{place_item(custom["id"])} .place-distance'), "350 m")

        click(driver, "#new-place-button")
        wait_dialog(driver, "#place-dialog")
        fill(driver, "#place-name", "Bench under the fig tree")
        click(driver, "#place-save")
        wait_dialog(driver, "#place-dialog", is_open=False)
        mine = wait_until(driver, lambda d: [p for p in me.places(near=near(here), limit=3)
                                             if p["name"] == "Bench under the fig tree"], "the place was not saved")[0]
        self.assertEqual(mine["kind"], "custom")
        self.assertLess(ground_distance((mine["lat"], mine["lng"]), here), 2, "the place is where I stand")
        wait_until(driver, lambda d: ids_of(d, PLACE_ITEMS)[:1] == [mine["id"]],
                   "the new place is not first in the list")
        self.assertEqual(text_of(driver, f'{place_item(mine["id"])} .place-name'), "Bench under the fig tree")
        self.assertEqual(text_of(driver, f'{place_item(mine["id"])} .place-distance'), "here")

    def test_notes_of_a_place(self):
        me = User.sign_up("visitor")
        here = offset(SYDNEY, north_m=60)
        places = me.places(near=near(here), limit=20)
        opera = next(p for p in places if p["name"] == "Sydney Opera House")
        quay = next(p for p in places if p["name"] == "Circular Quay")
        note = me.create_note("The acoustics tour is worth it", offset(here, east_m=20), place_id=opera["id"])
        driver = open_app_as(self, me, here)

        # A note saved in the dialog at a place of my choosing.
        show_panel(driver, "map")
        click(driver, "#new-note-button")
        save_note_in_dialog(driver, "Buskers every evening", place_id=quay["id"])
        at_quay = wait_until(driver, lambda d: me.notes(author="me", place_id=quay["id"]),
                             "the note was not saved at the place")
        self.assertEqual(at_quay[0]["body"], "Buskers every evening")

        show_panel(driver, "places")
        for place in (opera, quay):
            expected = {n["id"] for n in me.notes(place_id=place["id"])}
            wait_until(driver, lambda d: displayed(d, place_item(place["id"])), f"{place['name']} is not listed")
            item = driver.find_element(By.CSS_SELECTOR, place_item(place["id"]))
            item.find_element(By.CSS_SELECTOR, ".place-name").click()
            wait_until(driver, lambda d: displayed(d, "#place-notes") and set(ids_of(d, "#place-notes li.note-item")) == expected,
                       f"#place-notes of {place['name']} do not show {expected}: {ids_of(driver, '#place-notes li.note-item')}")
            if place is opera:
                self.assertIn(note["id"], expected)
                self.assertIn("The acoustics tour is worth it", text_of(driver, "#place-notes"))
            show_panel(driver, "places")
            if not displayed(driver, PLACE_ITEMS):
                click(driver, "#place-detail-close")
        self.assertFalse(dialog_open(driver, "#note-dialog"))
