"""Watched areas (issue 39): the account's list of areas the user hears about on their iPhone
when someone leaves a note there. The web app cannot receive pushes; it lists, adds, changes
and removes the watches, and the service's answers are checked behind it."""

from support import (
    BrowserTestCase, User, choose, click, exists, fill, ground_distance, http, isolated_spot, ok, open_app_as, text_of,
    wait_dialog, wait_until,
)

ROW = '#watches-list li.watch[data-watch-id="{}"]'


class WatchesTests(BrowserTestCase):
    def watches(self, user):
        return ok(http("GET", "/v1/me/watches", token=user.token), 200)["items"]

    def test_watch_where_i_am_rename_widen_and_stop(self):
        me = User.sign_up("watcher")
        here = isolated_spot()
        driver = open_app_as(self, me, here)

        click(driver, "#watches-button")
        wait_dialog(driver, "#watches-dialog")
        wait_until(driver, lambda d: "no areas" in text_of(d, "#watches-status"), "the empty list says so")
        fill(driver, "#watch-label", "Home")
        choose(driver, "#watch-radius", "500")
        click(driver, "#watch-add")
        wait_until(driver, lambda d: len(self.watches(me)) == 1, "the watch is not made")
        watch = self.watches(me)[0]
        self.assertEqual((watch["label"], watch["radius_m"]), ("Home", 500))
        self.assertLess(ground_distance((watch["lat"], watch["lng"]), here), 5, "watched where I am")
        row = ROW.format(watch["id"])
        wait_until(driver, lambda d: exists(d, row), "the new watch is not listed")

        fill(driver, f"{row} input.watch-label", "Home sweet home")
        choose(driver, f"{row} select.watch-radius", "2000")
        click(driver, f"{row} button.watch-save")
        wait_until(driver, lambda d: self.watches(me)[0]["radius_m"] == 2000, "the radius is not saved")
        self.assertEqual(self.watches(me)[0]["label"], "Home sweet home")

        # Cleared, the name is none.
        wait_until(driver, lambda d: exists(d, row), "the watch is not listed again")
        fill(driver, f"{row} input.watch-label", "")
        click(driver, f"{row} button.watch-save")
        wait_until(driver, lambda d: self.watches(me)[0]["label"] is None, "the name is not cleared")

        wait_until(driver, lambda d: exists(d, row), "the watch is not listed again")
        click(driver, f"{row} button.watch-delete")
        wait_until(driver, lambda d: not exists(d, row), "the stopped watch is still listed")
        self.assertEqual(self.watches(me), [])
        wait_until(driver, lambda d: "no areas" in text_of(d, "#watches-status"), "the empty list says so again")

    def test_the_services_refusal_is_shown(self):
        me = User.sign_up("greedy-watcher")
        here = isolated_spot()
        for index in range(10):
            ok(http("POST", "/v1/me/watches", {"near": f"{here[0]},{here[1]}", "radius_m": 1000, "label": f"Area {index}"},
                    token=me.token), 201)
        driver = open_app_as(self, me, here)
        click(driver, "#watches-button")
        wait_dialog(driver, "#watches-dialog")
        wait_until(driver, lambda d: len(d.find_elements("css selector", "#watches-list li.watch")) == 10, "ten are not listed")
        click(driver, "#watch-add")
        wait_until(driver, lambda d: "at most 10" in text_of(d, "#watches-dialog .dialog-error"), "the limit is not said")
        self.assertEqual(len(self.watches(me)), 10)
