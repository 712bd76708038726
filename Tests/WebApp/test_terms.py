"""The tenant's terms of use (issue 34): where the operator requires them, the app asks a
user to accept the current version before they post, asks again when the service refuses a
write for a newer version, and shows the tenant's contact in the account bar."""

import secrets

from support import (
    BrowserTestCase, User, body_data, click, dialog_open, displayed, fill, http, isolated_spot, js,
    open_app_as, run_admin, save_note_in_dialog, set_tenant, show_map, TENANT, wait_dialog, wait_for_ready,
    wait_signed_in, wait_until,
)

TERMS_URL = "https://terms.example.org/web"


def attribute(driver, selector, name):
    return js(driver, "const e = document.querySelector(arguments[0]); return e ? e.getAttribute(arguments[1]) : null",
              selector, name)


class SafetyTermsTests(BrowserTestCase):
    def require_terms(self):
        """The tenant requires its terms (a version no other test uses) until the test ends."""
        version = f"2026-11-{secrets.token_hex(3)}"
        # Restored in the reverse order: not required first, then no version (a required
        # version may not be empty).
        set_tenant(self, "terms_version", version, restore="")
        set_tenant(self, "terms_url", TERMS_URL, restore="")
        set_tenant(self, "contact_email", "help@example.org", restore="")
        set_tenant(self, "terms_required", "true", restore="false")
        return version

    def test_posting_waits_for_the_terms_and_a_new_version_asks_again(self):
        version = self.require_terms()
        me = User.sign_up("terms")
        here = isolated_spot()
        refused = http("POST", "/v1/notes", {"body": "Too soon", "lat": here[0], "lng": here[1]}, token=me.token)
        self.assertEqual((refused.status, refused.json["code"]), (403, "terms_not_accepted"))

        driver = open_app_as(self, me, here)
        wait_dialog(driver, "#terms-dialog")
        self.assertEqual(attribute(driver, "#terms-link", "href"), TERMS_URL)
        self.assertIn(version, driver.find_element("css selector", "#terms-version").text)
        self.assertEqual(attribute(driver, "#contact-link", "href"), "mailto:help@example.org")
        self.assertTrue(displayed(driver, "#contact-link"))

        # Not now: reading goes on, posting asks again instead of opening the note dialog.
        click(driver, "#terms-later")
        wait_dialog(driver, "#terms-dialog", is_open=False)
        show_map(driver)
        click(driver, "#new-note-button")
        wait_dialog(driver, "#terms-dialog")
        self.assertFalse(dialog_open(driver, "#note-dialog"), "the note dialog opened before the terms were accepted")
        self.assertIsNone(me.me()["terms_version"])

        # Accepting goes on to the note it was asked for.
        click(driver, "#terms-accept")
        wait_dialog(driver, "#terms-dialog", is_open=False)
        save_note_in_dialog(driver, "Accepted, then posted")
        self.assertEqual(me.me()["terms_version"], version)
        wait_until(driver, lambda d: [n["body"] for n in me.notes(author="me")] == ["Accepted, then posted"],
                   "the note was not saved after accepting")

        # The operator publishes a new version while the page is open: saving meets 403, the
        # prompt opens over the note dialog, and saving again after accepting works.
        newer = f"{version}-b"
        run_admin("tenant", "set", TENANT, "terms_version", newer)
        click(driver, "#new-note-button")
        wait_dialog(driver, "#note-dialog")
        fill(driver, "#note-body", "After the new terms")
        click(driver, "#note-save")
        wait_dialog(driver, "#terms-dialog")
        wait_until(driver, lambda d: newer in d.find_element("css selector", "#terms-version").text,
                   "the prompt does not show the new version")
        self.assertTrue(dialog_open(driver, "#note-dialog"), "the note being written was lost")
        click(driver, "#terms-accept")
        wait_dialog(driver, "#terms-dialog", is_open=False)
        click(driver, "#note-save")
        wait_dialog(driver, "#note-dialog", is_open=False)
        self.assertEqual(me.me()["terms_version"], newer)
        wait_until(driver, lambda d: len(me.notes(author="me")) == 2, "the note was not saved after accepting again")

        # A page loaded with a session asks too, when the terms changed since.
        newest = f"{version}-c"
        run_admin("tenant", "set", TENANT, "terms_version", newest)
        driver.refresh()
        wait_for_ready(driver)
        wait_signed_in(driver, me.username)
        wait_dialog(driver, "#terms-dialog")
        wait_until(driver, lambda d: body_data(d, "terms") == "pending", "the app does not know the terms are pending")

    def test_no_prompt_where_the_terms_are_not_required(self):
        set_tenant(self, "contact_url", "https://help.example.org/", restore="")
        me = User.sign_up("noterms")
        driver = open_app_as(self, me, isolated_spot())
        wait_until(driver, lambda d: body_data(d, "terms") == "accepted", "the app did not read the tenant's terms")
        self.assertFalse(dialog_open(driver, "#terms-dialog"))
        self.assertEqual(attribute(driver, "#contact-link", "href"), "https://help.example.org/")
        show_map(driver)
        click(driver, "#new-note-button")
        wait_dialog(driver, "#note-dialog")
        self.assertFalse(dialog_open(driver, "#terms-dialog"))
