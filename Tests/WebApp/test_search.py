"""The list of notes nearest first, its distance hints, the distance preference, and search."""

import secrets

from selenium.webdriver.common.by import By

from support import (
    BrowserTestCase, User, assert_stays, choose, driver_local_storage, fill,
    ground_distance, ids_of, isolated_spot, js, map_center, map_zoom, offset, open_app_as,
    show_panel, text_of, wait_for_ready, wait_for_stream, wait_idle, wait_until,
)

LIST_ITEMS = "#note-list li.note-item"


def wait_list(driver, expected_ids, message):
    """Waits until the list shows exactly expected_ids in that order."""
    expected = [str(i) for i in expected_ids]
    wait_until(driver, lambda d: ids_of(d, LIST_ITEMS) == expected,
               f"{message}: expected {expected}, the list shows {ids_of(driver, LIST_ITEMS)}")


def distance_hints(driver):
    return js(driver, f"return [...document.querySelectorAll('{LIST_ITEMS} .note-distance')]"
                      ".map(e => e.textContent.trim())")


def pick_scope(driver, scope):
    driver.find_element(By.CSS_SELECTOR, f'input[name="scope"][value="{scope}"]').click()


def search_for(driver, text):
    fill(driver, "#search-input", text)


class ListTests(BrowserTestCase):
    def test_list_is_nearest_first_with_distance_hints(self):
        me, other = User.sign_up("lister"), User.sign_up("neighbour")
        # Near 45° latitude the sphere's and the spheroid's metres agree within 0.1 %,
        # so "345 km" holds whichever the app measures with.
        here = (43.5, isolated_spot()[1])
        notes = [
            other.create_note("Three hundred and forty-five kilometres north", offset(here, north_m=345_000)),
            me.create_note("A hundred and twenty metres north", offset(here, north_m=121)),
            me.create_note("Right where I stand", here),
            other.create_note("Three point four kilometres north", offset(here, north_m=3_420)),
        ]
        by_distance = [notes[2], notes[1], notes[3], notes[0]]
        driver = open_app_as(self, me, here)
        choose(driver, "#distance-select", "global")
        show_panel(driver, "list")

        wait_until(driver, lambda d: ids_of(d, LIST_ITEMS)[:4] == [n["id"] for n in by_distance],
                   f"the list is not nearest first: {ids_of(driver, LIST_ITEMS)}")
        self.assertEqual(distance_hints(driver)[:4], ["here", "120 m", "3.4 km", "345 km"])
        first = f'{LIST_ITEMS}[data-note-id="{notes[2]["id"]}"]'
        self.assertEqual(text_of(driver, f"{first} .note-text"), "Right where I stand")
        self.assertIn(me.username, text_of(driver, f"{first} .note-author"))
        last = f'{LIST_ITEMS}[data-note-id="{notes[0]["id"]}"]'
        self.assertIn(other.username, text_of(driver, f"{last} .note-author"))


class DistancePreferenceTests(BrowserTestCase):
    def test_distance_preference_filters_the_list_and_survives_a_reload(self):
        me = User.sign_up("radius")
        here = isolated_spot()
        notes = [me.create_note(f"{metres} metres north", offset(here, north_m=metres))
                 for metres in (500, 5_000, 50_000, 500_000)]
        ids = [n["id"] for n in notes]
        driver = open_app_as(self, me, here)
        show_panel(driver, "list")

        for value, expected in (("1000", ids[:1]), ("10000", ids[:2]), ("100000", ids[:3])):
            choose(driver, "#distance-select", value)
            wait_list(driver, expected, f"within {value}")
            self.assertEqual(driver_local_storage(driver, "lr.distance"), value)
        # Anywhere: mine first, then the other tests' notes, further away.
        choose(driver, "#distance-select", "global")
        wait_until(driver, lambda d: ids_of(d, LIST_ITEMS)[:4] == ids and len(ids_of(d, LIST_ITEMS)) > 4,
                   f"anywhere: the list shows {ids_of(driver, LIST_ITEMS)}")
        self.assertEqual(driver_local_storage(driver, "lr.distance"), "global")

        choose(driver, "#distance-select", "10000")
        wait_list(driver, ids[:2], "within 10 km")
        driver.refresh()
        wait_for_ready(driver)
        wait_for_stream(driver)
        show_panel(driver, "list")
        self.assertEqual(driver.find_element(By.ID, "distance-select").get_attribute("value"), "10000",
                         "the preference is kept across a reload")
        wait_list(driver, ids[:2], "within 10 km after a reload")


class SearchTests(BrowserTestCase):
    def test_two_characters_in_any_script_and_one_letter_over_my_own_notes(self):
        """東京 is a word: over everyone's notes the app searches it (the service's bigram index);
        one character waits for a second there, and over my notes (scope Mine) any text is
        searched, folded as the service folds (夜景, ÇA, one letter)."""
        me, other = User.sign_up("kanjifan"), User.sign_up("kanafan")
        here = isolated_spot()
        tokyo = me.create_note("東京の夜景 and a café", offset(here, north_m=100))
        plain = me.create_note("Plain note", offset(here, north_m=50))
        tower = other.create_note("東京タワー", offset(here, north_m=150))
        driver = open_app_as(self, me, here)
        choose(driver, "#distance-select", "global")
        show_panel(driver, "list")
        wait_until(driver, lambda d: str(tokyo["id"]) in ids_of(d, LIST_ITEMS), "my note is not listed before searching")
        before = ids_of(driver, LIST_ITEMS)
        search_for(driver, "東")
        assert_stays(driver, lambda d: ids_of(d, LIST_ITEMS) == before,
                     "one character over everyone's notes changed the list", seconds=1.0)
        wait_until(driver, lambda d: "2 characters" in (text_of(d, "#search-status") or ""), "no hint to type more")
        search_for(driver, "東京")
        wait_list(driver, [tokyo["id"], tower["id"]], "東京 over everyone's notes, nearest first")
        pick_scope(driver, "mine")
        wait_list(driver, [tokyo["id"]], "東京 over my notes")
        search_for(driver, "夜景")
        wait_list(driver, [tokyo["id"]], "夜景 over my notes")
        search_for(driver, "ÇA")
        wait_list(driver, [tokyo["id"]], "ÇA over my notes, folded to ca (café)")
        search_for(driver, "n")
        wait_list(driver, [plain["id"], tokyo["id"]], "one letter over my notes, nearest first")

    def test_search_by_text_and_username_with_scopes_nearest_first(self):
        me, other = User.sign_up("seeker"), User.sign_up("finder")
        here = isolated_spot()
        word = "kw" + secrets.token_hex(4)
        mine_near = me.create_note(f"Quiet bench {word}", offset(here, north_m=200))
        theirs = other.create_note(f"Busy corner {word.upper()}", offset(here, north_m=800))
        mine_far = me.create_note(f"Old well {word}", offset(here, north_m=2_000))
        their_other = other.create_note("Nothing to search for", offset(here, north_m=300))
        my_other = me.create_note("Plain note", offset(here, north_m=100))
        driver = open_app_as(self, me, here)
        choose(driver, "#distance-select", "global")
        show_panel(driver, "list")
        nearby = [my_other, mine_near, their_other, theirs, mine_far]
        wait_until(driver, lambda d: ids_of(d, LIST_ITEMS)[:5] == [n["id"] for n in nearby],
                   "the list does not show the nearby notes before searching")
        before = ids_of(driver, LIST_ITEMS)

        search_for(driver, word[:1])
        # Past the typing pause (the app's ~250 ms) the list must still be the one before.
        assert_stays(driver, lambda d: ids_of(d, LIST_ITEMS) == before,
                     "one character changed the list", seconds=1.0)
        wait_idle(driver)
        self.assertEqual(ids_of(driver, LIST_ITEMS), before, "one character changed the list")

        search_for(driver, word)
        wait_list(driver, [mine_near["id"], theirs["id"], mine_far["id"]], "searching the text, nearest first")
        self.assertTrue(text_of(driver, "#search-status"), "#search-status says something about the results")
        wait_until(driver, lambda d: ground_distance(map_center(d), (mine_near["lat"], mine_near["lng"])) < 50,
                   f"the map is not on the nearest result (centre {map_center(driver)})")
        self.assertGreaterEqual(map_zoom(driver), 14, "the map is zoomed in on the nearest result")

        pick_scope(driver, "mine")
        wait_list(driver, [mine_near["id"], mine_far["id"]], "scope Mine")
        pick_scope(driver, "others")
        wait_list(driver, [theirs["id"]], "scope Others")
        pick_scope(driver, "all")
        wait_list(driver, [mine_near["id"], theirs["id"], mine_far["id"]], "scope All")

        search_for(driver, other.username)
        wait_list(driver, [their_other["id"], theirs["id"]], "searching a username")

        fill(driver, "#search-input", "")
        wait_until(driver, lambda d: ids_of(d, LIST_ITEMS)[:5] == [n["id"] for n in nearby],
                   "clearing the search does not bring the nearby notes back")
