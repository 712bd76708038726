"""Reporting notes, places and users and blocking users (issue 34): from a note's popup,
a place's panel and a user's profile (opened from an author's name), and the account's list
of blocked users. The service hides what was reported or blocked everywhere; the app takes
it off the screen at once."""

from support import (
    BrowserTestCase, User, body_data, choose, click, dialog_open, displayed, exists, fill, http, isolated_spot,
    near, note_marker_selector, offset, ok, open_app_as, open_popup, set_tenant, set_zoom, show_map, show_panel, text_of,
    wait_dialog, wait_pin, wait_until,
)

LIST_ITEM = '#note-list li.note-item[data-note-id="{}"]'
PLACE_ITEM = '#place-list li.place-item[data-place-id="{}"]'


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

    def test_report_a_place_from_its_panel(self):
        me, other = User.sign_up("placereporter"), User.sign_up("placenamer")
        here = isolated_spot()
        theirs = other.create_place("Definitely not a scam shop", offset(here, north_m=80))
        mine = me.create_place("My favourite bench", offset(here, east_m=40))
        driver = open_app_as(self, me, here)
        show_panel(driver, "places")

        # My own place has nothing to report.
        click(driver, f'{PLACE_ITEM.format(mine["id"])} .place-name')
        wait_until(driver, lambda d: "My favourite bench" in (text_of(d, "#place-notes-heading") or ""), "my place did not open")
        self.assertFalse(displayed(driver, "#place-report"), "my own place offers Report")
        click(driver, "#place-detail-close")

        click(driver, f'{PLACE_ITEM.format(theirs["id"])} .place-name')
        wait_until(driver, lambda d: "Definitely not a scam shop" in (text_of(d, "#place-notes-heading") or ""),
                   "their place did not open")
        click(driver, "#place-report")
        wait_dialog(driver, "#report-dialog")
        self.assertEqual(text_of(driver, "#report-title"), "Report this place")
        self.assertIn(other.username, text_of(driver, "#report-text"))
        choose(driver, "#report-reason", "spam")
        click(driver, "#report-send")
        wait_dialog(driver, "#report-dialog", is_open=False)
        wait_until(driver, lambda d: not exists(d, PLACE_ITEM.format(theirs["id"])), "the reported place is still listed")
        self.assertFalse(displayed(driver, "#place-detail"), "the reported place's panel stays open")
        self.assertFalse(exists(driver, f'.place-marker[data-place-id="{theirs["id"]}"]'), "its marker stays on the map")
        self.assertTrue(exists(driver, PLACE_ITEM.format(mine["id"])))

        self.assertEqual([(r["target"], r["reason"]) for r in me.reports()], [({"type": "place", "id": theirs["id"]}, "spam")])
        self.assertIsNone(me.get_place(theirs["id"]), "the service hides it from me too")
        self.assertIsNotNone(other.get_place(theirs["id"]), "its creator still sees it")

    def test_a_profile_from_a_popup_reports_its_user(self):
        me, other = User.sign_up("profiler"), User.sign_up("profiled")
        here = isolated_spot()
        first = other.create_note("One of mine", offset(here, north_m=40))
        second = other.create_note("Another of mine", offset(here, east_m=60))
        other.create_note("A private one", offset(here, east_m=-60), visibility="private")
        driver = open_app_as(self, me, here)
        show_map(driver)
        set_zoom(driver, 16, center=here)
        wait_pin(driver, first["id"], "others")
        wait_pin(driver, second["id"], "others")
        # Only moderators see the moderation button.
        wait_until(driver, lambda d: body_data(d, "moderator") == "false", "the app did not find out whether I moderate")
        self.assertFalse(displayed(driver, "#moderation-button"))

        popup = open_popup(driver, first["id"])
        click(driver, f"{popup} button.note-author")
        wait_dialog(driver, "#profile-dialog")
        self.assertEqual(text_of(driver, "#profile-title"), other.username)
        wait_until(driver, lambda d: displayed(d, "#profile-facts"), "the profile did not load")
        self.assertEqual(text_of(driver, "#profile-notes"), "2", "the profile counts public notes")
        click(driver, "#profile-report")
        wait_dialog(driver, "#report-dialog")
        self.assertEqual(text_of(driver, "#report-title"), "Report this user")
        choose(driver, "#report-reason", "harassment")
        click(driver, "#report-send")
        wait_dialog(driver, "#report-dialog", is_open=False)
        wait_dialog(driver, "#profile-dialog", is_open=False)
        for note in (first, second):
            wait_until(driver, lambda d, n=note: not exists(d, note_marker_selector(n["id"])),
                       f"the reported user's note {note['id']} stays on the map")

        self.assertEqual([(r["target"], r["reason"]) for r in me.reports()], [({"type": "user", "id": other.id}, "harassment")])
        self.assertEqual([n for n in me.notes(near=near(here), radius_m=1000) if n["author"]["id"] == other.id], [],
                         "the service hides their notes from me")
        self.assertEqual(http("GET", f"/v1/users/{other.username}", token=me.token).status, 404)

    def test_a_profile_from_the_list_blocks_its_user_and_says_when_it_is_gone(self):
        me, pest, shy = User.sign_up("lister"), User.sign_up("pest"), User.sign_up("shy")
        here = isolated_spot()
        pests = pest.create_note("Buy my stuff", offset(here, north_m=30))
        shys = shy.create_note("Quiet corner", offset(here, north_m=60))
        mine = me.create_note("Mine", offset(here, north_m=90))
        driver = open_app_as(self, me, here)
        show_panel(driver, "list")
        for note in (pests, shys, mine):
            wait_until(driver, lambda d, n=note: exists(d, LIST_ITEM.format(n["id"])), f"note {note['id']} is not listed")

        # My own profile: no Report, no Block.
        click(driver, f'{LIST_ITEM.format(mine["id"])} button.note-author')
        wait_dialog(driver, "#profile-dialog")
        wait_until(driver, lambda d: displayed(d, "#profile-facts"), "my profile did not load")
        self.assertFalse(displayed(driver, "#profile-report") or displayed(driver, "#profile-block"))
        click(driver, "#profile-close")
        wait_dialog(driver, "#profile-dialog", is_open=False)

        click(driver, f'{LIST_ITEM.format(pests["id"])} button.note-author')
        wait_dialog(driver, "#profile-dialog")
        self.assertFalse(dialog_open(driver, "#note-dialog"))
        click(driver, "#profile-block")
        wait_dialog(driver, "#block-dialog")
        self.assertIn(pest.username, text_of(driver, "#block-title"))
        click(driver, "#block-yes")
        wait_dialog(driver, "#block-dialog", is_open=False)
        wait_dialog(driver, "#profile-dialog", is_open=False)
        wait_until(driver, lambda d: not exists(d, LIST_ITEM.format(pests["id"])), "the blocked user's note is still listed")
        self.assertEqual([u["username"] for u in ok(http("GET", "/v1/me/blocks", token=me.token), 200)["items"]], [pest.username])

        # Someone who blocked me since their note was listed: their profile is not found.
        shy.block(me.username)
        click(driver, f'{LIST_ITEM.format(shys["id"])} button.note-author')
        wait_dialog(driver, "#profile-dialog")
        wait_until(driver, lambda d: "not available" in (text_of(d, "#profile-status") or ""),
                   "a profile I may not see does not say so")
        self.assertFalse(displayed(driver, "#profile-facts"))
        self.assertFalse(displayed(driver, "#profile-report") or displayed(driver, "#profile-block"))

    def test_held_notes_and_places_say_so_to_their_author(self):
        set_tenant(self, "report_threshold", "1", restore="3")  # one report holds a target
        writer, reporter = User.sign_up("heldwriter"), User.sign_up("heldreporter")
        here = isolated_spot()
        held = writer.create_note("Reported once, held", offset(here, north_m=30))
        kept = writer.create_note("Not reported", offset(here, north_m=60))
        place = writer.create_place("Reported corner", offset(here, east_m=40))
        reporter.report("note", held["id"], "spam")
        reporter.report("place", place["id"], "spam")
        self.assertEqual(writer.get_note(held["id"])["moderation"], "pending")

        driver = open_app_as(self, writer, here)
        show_panel(driver, "list")
        wait_until(driver, lambda d: exists(d, LIST_ITEM.format(held["id"])) and exists(d, LIST_ITEM.format(kept["id"])),
                   "my notes are not listed")
        self.assertEqual(text_of(driver, f'{LIST_ITEM.format(held["id"])} .badge.held'), "waiting for review")
        self.assertFalse(exists(driver, f'{LIST_ITEM.format(kept["id"])} .badge.held'))
        show_map(driver)
        set_zoom(driver, 16, center=here)
        popup = open_popup(driver, held["id"])
        self.assertEqual(text_of(driver, f"{popup} .badge.held"), "waiting for review")
        show_panel(driver, "places")
        wait_until(driver, lambda d: exists(d, f'{PLACE_ITEM.format(place["id"])} .badge.held'),
                   "my held place does not say so")
