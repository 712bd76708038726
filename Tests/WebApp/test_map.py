"""The map: my position and following it, notes as pins (mine and others'), the popup,
adding notes at my position and by right-click, editing and deleting, and clusters."""

from selenium.webdriver.common.by import By

from support import (
    BrowserTestCase, User, assert_stays, body_data, click, click_map_at, container_point_to_latlng,
    dialog_open, displayed, drag_map, exists, fill, ground_distance, ids_of, isolated_spot, js,
    map_center, map_zoom, marker_colours, note_marker_selector, offset, open_app_as, open_popup,
    save_note_in_dialog, set_position, set_zoom, show_map, text_of, visible_cluster_counts,
    wait_centered_on, wait_dialog, wait_idle, wait_me_marker_at, wait_pin, wait_until,
)


def open_map_at_my_position(test, name):
    """A new user at an isolated spot, the app open on the map with their position shown."""
    user = User.sign_up(name)
    here = isolated_spot()
    driver = open_app_as(test, user, here)
    show_map(driver)
    wait_me_marker_at(driver, here)
    return user, here, driver


def open_map_beside_my_note(test, name, text):
    """A new user with one note 30 m east of them, the map at street zoom around them."""
    me = User.sign_up(name)
    here = isolated_spot()
    note = me.create_note(text, offset(here, east_m=30))
    driver = open_app_as(test, me, here)
    show_map(driver)
    set_zoom(driver, 16, center=here)
    return me, note, driver


class PositionTests(BrowserTestCase):
    def test_my_position_is_followed_until_I_drag_and_the_follow_button_brings_it_back(self):
        _, here, driver = open_map_at_my_position(self, "follow")

        self.assertEqual(body_data(driver, "following"), "true", "the map follows me at first")
        wait_centered_on(driver, here)

        set_zoom(driver, 16)
        moved = offset(here, north_m=300, east_m=200)
        set_position(driver, moved)
        wait_me_marker_at(driver, moved)
        wait_centered_on(driver, moved)

        drag_map(driver, 240, 160)
        wait_until(driver, lambda d: body_data(d, "following") == "false", "a drag stops following")
        wait_idle(driver)  # the drag's inertia has ended and what it shows has loaded
        self.assertEqual(driver.find_element(By.ID, "follow-button").get_attribute("aria-pressed"), "false")
        dragged_centre = map_center(driver)
        self.assertGreater(ground_distance(dragged_centre, moved), 100, "the drag moved the map")

        # The drag moved the view north-west; walk south-east, away from it.
        walked = offset(moved, north_m=-120, east_m=120)
        set_position(driver, walked)
        wait_me_marker_at(driver, walked)
        assert_stays(driver, lambda d: ground_distance(map_center(d), dragged_centre) < 5,
                     "the map moved to my position although I had dragged it away")

        click(driver, "#follow-button")
        wait_until(driver, lambda d: body_data(d, "following") == "true", "#follow-button does not follow again")
        self.assertEqual(driver.find_element(By.ID, "follow-button").get_attribute("aria-pressed"), "true")
        wait_centered_on(driver, walked)


class NoteOnMapTests(BrowserTestCase):
    def test_save_a_note_at_my_position(self):
        user, here, driver = open_map_at_my_position(self, "athere")

        click(driver, "#new-note-button")
        save_note_in_dialog(driver, "Bench with the best view of the bay")
        notes = wait_until(driver, lambda d: user.notes(author="me"), "the note was not saved")
        self.assertEqual(len(notes), 1)
        note = notes[0]
        self.assertEqual(note["body"], "Bench with the best view of the bay")
        self.assertEqual(note["visibility"], "public")
        self.assertLess(ground_distance((note["lat"], note["lng"]), here), 2, "saved at my position")
        wait_pin(driver, note["id"], "mine")

    def test_a_note_of_emoji_counts_characters_as_the_service_does(self):
        user, _, driver = open_map_at_my_position(self, "emoji")
        click(driver, "#new-note-button")
        wait_dialog(driver, "#note-dialog")
        # 400 characters outside the Basic Multilingual Plane: 800 UTF-16 units, which a
        # maxlength of 500 would have cut to 250 characters. (WebDriver types only BMP text.)
        body = "\U0001F30A" * 400
        js(driver, "const t = document.getElementById('note-body'); t.value = arguments[0];"
                   "t.dispatchEvent(new Event('input', {bubbles: true}))", body)
        self.assertEqual(text_of(driver, "#note-count"), "400 / 500")
        click(driver, "#note-save")
        wait_dialog(driver, "#note-dialog", is_open=False)
        notes = wait_until(driver, lambda d: user.notes(author="me"), "the note was not saved")
        self.assertEqual(notes[0]["body"], body)
        # Typing may go as far as the service allows: maxlength counts UTF-16 units.
        self.assertGreaterEqual(int(driver.find_element(By.ID, "note-body").get_attribute("maxLength")), 1000)
        # The pin's label is cut at a character, never inside one (no lone surrogate).
        wait_pin(driver, notes[0]["id"], "mine")
        label = js(driver, "return document.querySelector(arguments[0]).getAttribute('aria-label')",
                   note_marker_selector(notes[0]["id"]))
        self.assertTrue(label.endswith("…"), label)
        # Checked in the page: a lone surrogate would not survive the trip to Python intact.
        self.assertFalse(js(driver, "return /[\\uD800-\\uDBFF](?![\\uDC00-\\uDFFF])|(^|[^\\uD800-\\uDBFF])[\\uDC00-\\uDFFF]/"
                                    ".test(document.querySelector(arguments[0]).getAttribute('aria-label'))",
                            note_marker_selector(notes[0]["id"])), "a lone surrogate in the pin's label")

    def test_save_a_note_by_right_click_on_the_map(self):
        user, here, driver = open_map_at_my_position(self, "rightclick")
        set_zoom(driver, 16)

        size = js(driver, "const s = lrApp.map.getSize(); return [s.x, s.y]")
        spot_px = (size[0] / 2 + 120, size[1] / 2 - 80)
        spot = container_point_to_latlng(driver, *spot_px)
        click_map_at(driver, *spot_px, right=True)
        save_note_in_dialog(driver, "Hidden stairs down to the water", visibility="private")

        notes = wait_until(driver, lambda d: user.notes(author="me"), "the note was not saved")
        note = notes[0]
        self.assertEqual(note["visibility"], "private")
        self.assertLess(ground_distance((note["lat"], note["lng"]), spot), 10,
                        f"saved where I right-clicked ({spot}), not at {note['lat']},{note['lng']}")
        self.assertGreater(ground_distance((note["lat"], note["lng"]), here), 100, "not at my position")
        wait_pin(driver, note["id"], "mine")

    def test_mine_and_others_look_different_and_the_popup_tells_whose(self):
        me, other = User.sign_up("mine"), User.sign_up("other")
        here = isolated_spot()
        mine = me.create_note("My favourite dumplings", offset(here, north_m=40))
        theirs = other.create_note("Free water refill here", offset(here, north_m=121))
        driver = open_app_as(self, me, here)
        show_map(driver)
        set_zoom(driver, 16, center=here)

        wait_pin(driver, mine["id"], "mine")
        wait_pin(driver, theirs["id"], "others")
        self.assertFalse(exists(driver, note_marker_selector(mine["id"], "others")))
        self.assertFalse(exists(driver, note_marker_selector(theirs["id"], "mine")))
        self.assertNotEqual(marker_colours(driver, note_marker_selector(mine["id"])),
                            marker_colours(driver, note_marker_selector(theirs["id"])),
                            "my pins and others' pins have the same colours")

        popup = open_popup(driver, theirs["id"])
        self.assertEqual(text_of(driver, f"{popup} .note-text"), "Free water refill here")
        self.assertIn(other.username, text_of(driver, f"{popup} .note-author"))
        self.assertEqual(text_of(driver, f"{popup} .note-distance"), "120 m")
        self.assertTrue(text_of(driver, f"{popup} .note-time"), "the popup says when")
        self.assertFalse(exists(driver, f"{popup} button.note-edit"), "no edit button on others' notes")
        self.assertFalse(exists(driver, f"{popup} button.note-delete"), "no delete button on others' notes")

        popup = open_popup(driver, mine["id"])
        self.assertEqual(text_of(driver, f"{popup} .note-text"), "My favourite dumplings")
        self.assertIn(me.username, text_of(driver, f"{popup} .note-author"))
        self.assertEqual(text_of(driver, f"{popup} .note-distance"), "40 m")
        self.assertTrue(displayed(driver, f"{popup} button.note-edit"), "an edit button on my note")
        self.assertTrue(displayed(driver, f"{popup} button.note-delete"), "a delete button on my note")

    def test_edit_and_delete_my_note(self):
        me, note, driver = open_map_beside_my_note(self, "editor", "Open till late")

        popup = open_popup(driver, note["id"])
        click(driver, f"{popup} button.note-edit")
        wait_dialog(driver, "#note-dialog")
        self.assertEqual(driver.find_element(By.ID, "note-body").get_attribute("value"), "Open till late",
                         "the dialog starts from the note's text")
        fill(driver, "#note-body", "Open till midnight, closed Mondays")
        click(driver, "#note-save")
        wait_dialog(driver, "#note-dialog", is_open=False)
        wait_until(driver, lambda d: me.get_note(note["id"])["body"] == "Open till midnight, closed Mondays",
                   "the edit was not saved")
        popup = open_popup(driver, note["id"])
        wait_until(driver, lambda d: text_of(d, f"{popup} .note-text") == "Open till midnight, closed Mondays",
                   "the popup still shows the old text")

        click(driver, f"{popup} button.note-delete")
        wait_dialog(driver, "#confirm-dialog")
        click(driver, "#confirm-no")
        wait_dialog(driver, "#confirm-dialog", is_open=False)
        wait_idle(driver)
        self.assertIsNotNone(me.get_note(note["id"]), "'no' keeps the note")
        self.assertTrue(exists(driver, note_marker_selector(note["id"])))

        popup = open_popup(driver, note["id"])
        click(driver, f"{popup} button.note-delete")
        wait_dialog(driver, "#confirm-dialog")
        click(driver, "#confirm-yes")
        wait_until(driver, lambda d: not exists(d, note_marker_selector(note["id"])), "the pin stays after deleting")
        wait_until(driver, lambda d: me.get_note(note["id"]) is None, "the note was not deleted")
        self.assertFalse(dialog_open(driver, "#confirm-dialog"))


    def test_an_edit_made_elsewhere_meanwhile_is_not_overwritten(self):
        me, note, driver = open_map_beside_my_note(self, "twotabs", "Kiosk opens at 8")

        popup = open_popup(driver, note["id"])
        click(driver, f"{popup} button.note-edit")
        wait_dialog(driver, "#note-dialog")
        wait_idle(driver)
        # Meanwhile, on another device, the same user changes the note.
        me.update_note(note["id"], body="Kiosk opens at 7 on weekdays")
        fill(driver, "#note-body", "Kiosk opens at 9")
        click(driver, "#note-save")
        wait_until(driver, lambda d: "changed elsewhere" in (text_of(d, "#note-dialog .dialog-error") or ""),
                   "saving over a newer version is refused and said so")
        self.assertTrue(dialog_open(driver, "#note-dialog"), "the dialog stays open to decide")
        self.assertEqual(driver.find_element(By.ID, "note-body").get_attribute("value"), "Kiosk opens at 7 on weekdays",
                         "the dialog shows the version saved elsewhere")
        self.assertEqual(me.get_note(note["id"])["body"], "Kiosk opens at 7 on weekdays", "nothing was overwritten")

        # Saving again, knowingly, replaces it.
        fill(driver, "#note-body", "Kiosk opens at 9")
        click(driver, "#note-save")
        wait_dialog(driver, "#note-dialog", is_open=False)
        wait_until(driver, lambda d: me.get_note(note["id"])["body"] == "Kiosk opens at 9", "the second save went through")

    def test_a_note_changed_elsewhere_meanwhile_is_not_deleted_unseen(self):
        me, note, driver = open_map_beside_my_note(self, "deleter", "Bench by the pond")

        popup = open_popup(driver, note["id"])
        click(driver, f"{popup} button.note-delete")
        wait_dialog(driver, "#confirm-dialog")
        wait_idle(driver)
        # Meanwhile, on another device, the same user changes the note.
        me.update_note(note["id"], body="Bench by the pond, freshly painted")
        click(driver, "#confirm-yes")
        wait_until(driver, lambda d: "changed elsewhere" in (text_of(d, "#confirm-dialog .dialog-error") or ""),
                   "deleting a version not seen is refused and said so")
        self.assertTrue(dialog_open(driver, "#confirm-dialog"), "the question stays open")
        self.assertIn("freshly painted", text_of(driver, "#confirm-text"), "the question shows the version saved elsewhere")
        self.assertIsNotNone(me.get_note(note["id"]), "nothing was deleted")

        # Confirming again, knowingly, deletes it.
        click(driver, "#confirm-yes")
        wait_until(driver, lambda d: me.get_note(note["id"]) is None, "the second confirm did not delete it")
        wait_dialog(driver, "#confirm-dialog", is_open=False)


class ClusterTests(BrowserTestCase):
    def test_clusters_when_zoomed_out_split_as_I_zoom_in(self):
        me = User.sign_up("clusters")
        here = isolated_spot()
        groups = [offset(here), offset(here, north_m=900, east_m=1100), offset(here, north_m=-800, east_m=-900)]
        ids = set()
        for g, centre in enumerate(groups):
            for i in range(4):
                ids.add(me.create_note(f"Group {g} note {i}", offset(centre, north_m=25 * i, east_m=15 * i))["id"])
        driver = open_app_as(self, me, here)
        show_map(driver)

        def wait_markers(zoom):
            """Sets the zoom; returns how many markers (clusters, and pins for lone notes) show."""
            set_zoom(driver, zoom, center=here)
            if zoom >= 14:
                wait_until(driver, lambda d: set(ids_of(d, "#map .note-marker")) >= ids,
                           f"not every note is a pin at zoom {zoom}")
                self.assertEqual(visible_cluster_counts(driver), [], f"clusters at zoom {zoom}")
                return len(ids)
            # A cluster of one note is drawn as that note's pin.
            pins = lambda d: set(ids_of(d, "#map .note-marker"))  # noqa: E731
            wait_until(driver, lambda d: sum(visible_cluster_counts(d)) + len(pins(d)) == len(ids) and pins(d) <= ids,
                       f"at zoom {zoom} the clusters' data-count and lone pins do not add up to {len(ids)}: "
                       f"{visible_cluster_counts(driver)} and {pins(driver)}")
            self.assertTrue(visible_cluster_counts(driver), f"no cluster at zoom {zoom}")
            for element in driver.find_elements(By.CSS_SELECTOR, "#map .cluster-marker"):
                self.assertEqual(element.text.strip(), element.get_attribute("data-count"), "a cluster shows its count")
            return len(visible_cluster_counts(driver)) + len(pins(driver))

        far = wait_markers(10)
        self.assertLess(far, len(ids), "zoomed out, notes are grouped")
        middle = wait_markers(13)
        self.assertGreaterEqual(middle, max(far, 2), "zooming in splits clusters")
        self.assertEqual(wait_markers(14), len(ids), "from zoom 14 on, each note is a pin")

        # Tapping a cluster zooms in on it.
        set_zoom(driver, 10, center=here)
        wait_until(driver, lambda d: visible_cluster_counts(d), "clusters did not come back")
        driver.find_element(By.CSS_SELECTOR, "#map .cluster-marker").click()
        wait_until(driver, lambda d: map_zoom(d) > 10, "tapping a cluster does not zoom in")
