"""Reporting a note and blocking its author from its popup, and the account's list of
blocked users (issue 34): the service hides both everywhere; the app takes them off the
screen at once."""

from support import (
    BrowserTestCase, User, click, exists, fill, http, isolated_spot, note_marker_selector, offset, ok,
    open_app_as, open_popup, show_map, set_zoom, text_of, wait_dialog, wait_pin, wait_until,
)
from support import choose


class SafetyTests(BrowserTestCase):
    def test_report_a_note_from_its_popup(self):
        me, other = User.sign_up("reporter"), User.sign_up("writer")
        here = isolated_spot()
        theirs = other.create_note("Something nasty about a neighbour", offset(here, north_m=50))
        kept = other.create_note("Good coffee here", offset(here, east_m=60))
        driver = open_app_as(self, me, here)
        show_map(driver)
        set_zoom(driver, 16, center=here)
        wait_pin(driver, theirs["id"], "others")

        popup = open_popup(driver, theirs["id"])
        self.assertFalse(exists(driver, f"{popup} button.note-edit"))
        click(driver, f"{popup} button.note-report")
        wait_dialog(driver, "#report-dialog")
        self.assertIn(other.username, text_of(driver, "#report-text"))
        choose(driver, "#report-reason", "privacy")
        fill(driver, "#report-detail", "names my neighbour")
        click(driver, "#report-send")
        wait_dialog(driver, "#report-dialog", is_open=False)
        wait_until(driver, lambda d: not exists(d, note_marker_selector(theirs["id"])), "the reported note's pin stays")
        self.assertTrue(exists(driver, note_marker_selector(kept["id"])), "the author's other notes stay")

        reports = ok(http("GET", "/v1/me/reports", token=me.token), 200)["items"]
        self.assertEqual([(r["target"], r["reason"], r["detail"]) for r in reports],
                         [({"type": "note", "id": theirs["id"]}, "privacy", "names my neighbour")])
        self.assertIsNone(me.get_note(theirs["id"]), "the service hides it from me too")
        self.assertIsNotNone(other.get_note(theirs["id"]), "the author still sees it")

    def test_block_an_author_from_a_popup_and_unblock_from_the_account(self):
        me, other = User.sign_up("blocker"), User.sign_up("pest")
        here = isolated_spot()
        first = other.create_note("First of many", offset(here, north_m=40))
        second = other.create_note("Second of many", offset(here, east_m=70))
        mine = me.create_note("My own note", offset(here, north_m=-30))
        driver = open_app_as(self, me, here)
        show_map(driver)
        set_zoom(driver, 16, center=here)
        wait_pin(driver, first["id"], "others")
        wait_pin(driver, second["id"], "others")

        popup = open_popup(driver, first["id"])
        click(driver, f"{popup} button.note-block")
        wait_dialog(driver, "#block-dialog")
        self.assertIn(other.username, text_of(driver, "#block-title"))
        click(driver, "#block-yes")
        wait_dialog(driver, "#block-dialog", is_open=False)
        for note in (first, second):
            wait_until(driver, lambda d, n=note: not exists(d, note_marker_selector(n["id"])),
                       f"the blocked author's note {note['id']} stays on the map")
        self.assertTrue(exists(driver, note_marker_selector(mine["id"])), "my own note stays")
        # Both ways, at the service.
        self.assertNotIn(mine["id"], [n["id"] for n in other.notes()])
        self.assertNotIn(first["id"], [n["id"] for n in me.notes()])

        click(driver, "#blocks-button")
        wait_dialog(driver, "#blocks-dialog")
        row = f'.blocked-user[data-username="{other.username}"]'
        wait_until(driver, lambda d: exists(d, row), "the blocked user is not listed")
        click(driver, f"{row} button.unblock")
        wait_until(driver, lambda d: not exists(d, row), "the unblocked user is still listed")
        wait_until(driver, lambda d: "no one" in text_of(d, "#blocks-status"), "the empty list says so")
        self.assertEqual(ok(http("GET", "/v1/me/blocks", token=me.token), 200)["items"], [])
        self.assertIn(first["id"], [n["id"] for n in me.notes()])
