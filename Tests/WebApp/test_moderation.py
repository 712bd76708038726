"""The moderators' view (issue 34): the queue of reported targets with the time left on the
24-hour clock, one-click decisions that take the content away for everyone, suspending an
author until a chosen time, and the log of reports and decisions."""

from selenium.webdriver.common.by import By

from support import (
    BrowserTestCase, User, body_data, choose, click, displayed, exists, fill, find_in_queue, http, isolated_spot, js,
    make_moderator, note_marker_selector, offset, ok, open_app_as, set_zoom, show_map, text_of, wait_dialog,
    wait_pin, wait_until,
)

QUEUE_ITEM = '#moderation-queue li.moderation-item[data-target-type="{}"][data-target-id="{}"]'
LOG_ENTRY = '#moderation-log li.moderation-log-entry[data-kind="{}"][data-target-type="{}"][data-target-id="{}"]'


def open_moderation(driver):
    wait_until(driver, lambda d: body_data(d, "moderator") == "true", "the app does not know I moderate")
    click(driver, "#moderation-button")
    wait_dialog(driver, "#moderation-dialog")


def queue_ids(driver):
    return js(driver, "return [...document.querySelectorAll('#moderation-queue li.moderation-item')]"
                      ".map(e => e.dataset.targetType + ' ' + e.dataset.targetId)")


class SafetyModerationTests(BrowserTestCase):
    def test_a_moderator_removes_a_reported_note_for_everyone_and_the_log_says_so(self):
        moderator, writer, reporter = User.sign_up("moderator"), User.sign_up("writer"), User.sign_up("reporter")
        make_moderator(self, moderator)
        here = isolated_spot()
        nasty = writer.create_note("You all smell, signed your neighbour", offset(here, north_m=40))
        fine = writer.create_note("Lovely sunset from here", offset(here, east_m=50))
        reporter.report("note", nasty["id"], "harassment")

        # The author's own page shows the note until a moderator removes it.
        author_page = open_app_as(self, writer, here)
        show_map(author_page)
        set_zoom(author_page, 16, center=here)
        wait_pin(author_page, nasty["id"], "mine")

        driver = open_app_as(self, moderator, here)
        show_map(driver)
        set_zoom(driver, 16, center=here)
        wait_pin(driver, nasty["id"], "others")
        open_moderation(driver)
        item = QUEUE_ITEM.format("note", nasty["id"])
        find_in_queue(driver, item)
        self.assertEqual(text_of(driver, f"{item} .moderation-content"), nasty["body"])
        self.assertIn(writer.username, text_of(driver, f"{item} .moderation-author"))
        self.assertEqual(text_of(driver, f"{item} .moderation-count"), "1 report")
        self.assertEqual(text_of(driver, f"{item} .moderation-reasons"), "Harassment")
        clock = text_of(driver, f"{item} .moderation-clock")
        self.assertRegex(clock, r"^2[34] h \d+ min left$", "a report made a moment ago has about 24 hours left")
        self.assertTrue(exists(driver, f"{item} button.decide-suspend-author"))

        click(driver, f"{item} button.decide-remove")
        wait_until(driver, lambda d: not exists(d, item), "the decided note stays in the queue")
        wait_until(driver, lambda d: not exists(d, note_marker_selector(nasty["id"])), "the removed note stays on my map")
        wait_until(author_page, lambda d: not exists(d, note_marker_selector(nasty["id"])),
                   "the removed note stays on its author's map")
        self.assertTrue(exists(author_page, note_marker_selector(fine["id"])), "the author's other note went too")
        for user in (writer, reporter, moderator):
            self.assertIsNone(user.get_note(nasty["id"]), f"{user.username} still sees the removed note")
        self.assertEqual([r["state"] for r in reporter.reports()], ["actioned"])

        click(driver, "#moderation-tab-log")
        decision = LOG_ENTRY.format("decision", "note", nasty["id"])
        report = LOG_ENTRY.format("report", "note", nasty["id"])
        wait_until(driver, lambda d: exists(d, decision) and exists(d, report), "the log does not show the report and the decision")
        self.assertIn(f"Removed by {moderator.username}", text_of(driver, f"{decision} .moderation-what"))
        self.assertEqual(text_of(driver, f"{decision} .moderation-content"), nasty["body"], "the log keeps the text as it was")
        self.assertIn("Harassment", text_of(driver, f"{report} .moderation-what"))
        self.assertNotIn(reporter.username, text_of(driver, "#moderation-log"), "the log names a reporter")

    def test_a_moderator_suspends_a_reported_user_until_a_chosen_time(self):
        moderator, troll, reporter = User.sign_up("moderator"), User.sign_up("troll"), User.sign_up("reporter")
        make_moderator(self, moderator)
        here = isolated_spot()
        troll.create_note("Nothing to see", offset(here, north_m=30))
        reporter.report("user", troll.id, "spam")

        driver = open_app_as(self, moderator, here)
        open_moderation(driver)
        item = QUEUE_ITEM.format("user", troll.id)
        find_in_queue(driver, item)
        self.assertEqual(text_of(driver, f"{item} .moderation-content"), troll.username)
        self.assertFalse(exists(driver, f"{item} button.decide-remove"), "a user cannot be removed, only suspended or banned")

        click(driver, f"{item} button.decide-suspend-author")
        wait_dialog(driver, "#decision-dialog")
        self.assertIn(troll.username, text_of(driver, "#decision-title"))
        choose(driver, "#decision-duration", "3")
        fill(driver, "#decision-note", "spam across town")
        click(driver, "#decision-confirm")
        wait_dialog(driver, "#decision-dialog", is_open=False)
        wait_until(driver, lambda d: not exists(d, item), "the suspended user stays in the queue")
        self.assertTrue(displayed(driver, "#moderation-dialog"), "the queue closed after a decision")

        self.assertEqual(http("GET", "/v1/me", token=troll.token).status, 401, "the suspended user is still signed in")
        self.assertEqual(http("GET", f"/v1/users/{troll.username}", token=reporter.token).status, 404)
        entries = ok(http("GET", "/v1/moderation/log", token=moderator.token), 200)["items"]
        decision = next(e for e in entries if e["kind"] == "decision" and e["target"] == {"type": "user", "id": troll.id})
        self.assertEqual((decision["action"], decision["note"]), ("suspend_author", "spam across town"))
        days = js(driver, "return (Date.parse(arguments[0]) - Date.now()) / 86400000", decision["until"])
        self.assertTrue(2.9 < days <= 3, f"suspended for {days} days, not 3")

        click(driver, "#moderation-tab-log")
        entry = LOG_ENTRY.format("decision", "user", troll.id)
        wait_until(driver, lambda d: exists(d, entry), "the log does not show the suspension")
        self.assertIn("Suspended the author", text_of(driver, f"{entry} .moderation-what"))
        self.assertIn("spam across town", text_of(driver, entry))
        self.assertIn("until", text_of(driver, entry))

    def test_the_queue_pages_with_its_cursor(self):
        moderator, writer = User.sign_up("moderator"), User.sign_up("prolific")
        reporters = [User.sign_up("reporter") for _ in range(3)]  # 17 reports each, within the hourly limit
        make_moderator(self, moderator)
        here = isolated_spot()
        notes = [writer.create_note(f"Spam number {i}", offset(here, north_m=10 * i)) for i in range(51)]
        for i, note in enumerate(notes):
            reporters[i % 3].report("note", note["id"], "spam")
        mine = [f"note {n['id']}" for n in notes]
        # The queue is the tenant's: these are not left for later tests to page through.
        self.addCleanup(lambda: [http("POST", f"/v1/moderation/targets/note/{n['id']}/decision", {"action": "dismiss"},
                                      token=moderator.token) for n in notes])

        driver = open_app_as(self, moderator, here)
        open_moderation(driver)
        wait_until(driver, lambda d: len(queue_ids(d)) == 50 and displayed(d, "#moderation-queue-more"),
                   f"the first page is not 50 items with more to show: {len(queue_ids(driver))}")
        find_in_queue(driver, QUEUE_ITEM.format("note", notes[-1]["id"]))
        wait_until(driver, lambda d: not displayed(d, "#moderation-queue-more") and (d.find_element(
            By.CSS_SELECTOR, "#moderation-queue-status").text.endswith("the longest waiting first")), "the queue is still loading")
        shown = queue_ids(driver)
        self.assertEqual(len(shown), len(set(shown)), "a page repeated an item")
        self.assertEqual([i for i in shown if i in mine], mine, "the reports are not the longest waiting first")

    def test_the_clock_says_how_long_a_report_is_overdue(self):
        # No report here is a day old; the queue's clock words for a due time past and one ahead.
        driver = self.open_browser()
        words = driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            import('/js/format.js').then((f) => {
              const now = Date.now();
              done([f.timeLeft(now - (26 * 60 + 5) * 60000, now), f.timeLeft(now + (3 * 60 + 10) * 60000 + 30000, now),
                    f.timeLeft(now - 20000, now)]);
            });""")
        self.assertEqual(words, [{"text": "overdue by 1 d 2 h", "overdue": True},
                                 {"text": "3 h 10 min left", "overdue": False},
                                 {"text": "overdue by less than a minute", "overdue": True}])
