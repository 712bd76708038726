"""Live updates: two people in two browsers; what one does reaches the other's map and
list by itself (the page is never reloaded; within LIVE_WAIT, a deadline generous enough for
a loaded machine), and a private note never reaches anyone else."""

import time

from support import (
    LIVE_WAIT, BrowserTestCase, User, click, exists, fill, isolated_spot, js, note_marker_selector,
    offset, open_app_as, open_popup, set_zoom, show_panel, text_of, wait_dialog, wait_until,
)

LIST_ITEM = '#note-list li.note-item[data-note-id="{}"]'


def shown_note_ids(driver):
    """Ids of notes on the map and in the list (present in the page, shown or not)."""
    return set(js(driver, "return [...document.querySelectorAll('.note-marker[data-note-id], #note-list li.note-item[data-note-id]')]"
                          ".map(e => e.dataset.noteId)"))


def on_map_and_in_list(driver, note_id):
    return exists(driver, note_marker_selector(note_id)) and exists(driver, LIST_ITEM.format(note_id))


def within_live_wait(driver, started, condition, message):
    """Waits for condition until LIVE_WAIT seconds after `started` (a time.monotonic())."""
    remaining = max(0.05, LIVE_WAIT - (time.monotonic() - started))
    return wait_until(driver, condition, f"{message} (within {LIVE_WAIT} s of the change)", timeout=remaining)


class LiveUpdateTests(BrowserTestCase):
    def setUp(self):
        self.here = isolated_spot()
        self.alice, self.bob = User.sign_up("alice"), User.sign_up("bob")
        self.a = open_app_as(self, self.alice, self.here)
        self.b = open_app_as(self, self.bob, offset(self.here, north_m=-50))
        for driver in (self.a, self.b):
            show_panel(driver, "map")
            set_zoom(driver, 16, center=self.here)

    def test_a_public_note_is_created_edited_and_deleted_on_the_other_page(self):
        a, b = self.a, self.b
        before = shown_note_ids(b)

        click(a, "#new-note-button")
        wait_dialog(a, "#note-dialog")
        fill(a, "#note-body", "Street food market tonight")
        started = time.monotonic()
        click(a, "#note-save")
        new_ids = within_live_wait(b, started, lambda d: shown_note_ids(d) - before,
                                   "Alice's new note is not on Bob's page")
        note_id = next(iter(new_ids))
        within_live_wait(b, started, lambda d: on_map_and_in_list(d, note_id),
                         "Alice's new note is not both on Bob's map and in his list")
        self.assertEqual([n["id"] for n in self.alice.notes(author="me")], [note_id])
        self.assertTrue(exists(b, note_marker_selector(note_id, "others")), "on Bob's map it is someone else's")
        self.assertEqual(text_of(b, LIST_ITEM.format(note_id) + " .note-text"), "Street food market tonight")

        popup = open_popup(a, note_id)
        click(a, f"{popup} button.note-edit")
        wait_dialog(a, "#note-dialog")
        fill(a, "#note-body", "Street food market tonight, cash only")
        started = time.monotonic()
        click(a, "#note-save")
        within_live_wait(b, started,
                         lambda d: text_of(d, LIST_ITEM.format(note_id) + " .note-text") == "Street food market tonight, cash only",
                         "Bob's list does not show Alice's edit")
        self.assertTrue(exists(b, note_marker_selector(note_id, "others")), "the pin stays after an edit")

        popup = open_popup(a, note_id)
        click(a, f"{popup} button.note-delete")
        wait_dialog(a, "#confirm-dialog")
        started = time.monotonic()
        click(a, "#confirm-yes")
        within_live_wait(b, started, lambda d: note_id not in shown_note_ids(d),
                         "Alice's deleted note is still on Bob's map or in his list")

    def test_a_private_note_never_reaches_anyone_else(self):
        b = self.b
        seen = set()

        def record(driver):
            seen.update(shown_note_ids(driver))
            return seen

        record(b)
        secret = self.alice.create_note("My locker code is 4711", offset(self.here, east_m=40), visibility="private")
        started = time.monotonic()
        public = self.alice.create_note("Public toilets behind the library", offset(self.here, east_m=-40))
        within_live_wait(b, started, lambda d: public["id"] in record(d),
                         "Alice's public note, made after her private one, did not reach Bob")
        self.assertNotIn(secret["id"], record(b), "Bob's page showed Alice's private note")

        # Made public later, it reaches Bob as a new note; private again, it leaves.
        started = time.monotonic()
        self.alice.update_note(secret["id"], visibility="public")
        within_live_wait(b, started, lambda d: on_map_and_in_list(d, secret["id"]),
                         "a note made public did not reach Bob")
        started = time.monotonic()
        self.alice.update_note(secret["id"], visibility="private")
        within_live_wait(b, started, lambda d: secret["id"] not in shown_note_ids(d),
                         "a note made private again stayed on Bob's page")
