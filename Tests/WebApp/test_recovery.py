"""Verified emails and password reset in the browser (issue 35): the banner that asks for the
mailed code, "Forgot your password?" from the log-in form, and the page a mailed link opens,
with the messages read from the test's mail catcher (a real SMTP server with TLS)."""

import glob
import json
import os
import re
import time

from support import (
    BASE_URL, BrowserTestCase, PASSWORD, User, click, displayed, fill, http, log_in, ok, text_of, unique_name,
    wait_for_ready, wait_signed_in, wait_until,
)

MAILDIR = os.environ.get("LR_WEB_MAILDIR", "")


def mail_to(address, count=1, timeout=60):
    """The messages the catcher took for `address`, oldest first, once there are `count`."""
    deadline = time.monotonic() + timeout
    while True:
        found = []
        for path in sorted(glob.glob(os.path.join(MAILDIR, "new", "*.json"))):
            with open(path) as f:
                message = json.load(f)
            if address in message["rcpt_tos"]:
                found.append(message)
        if len(found) >= count or time.monotonic() > deadline:
            if len(found) < count:
                raise AssertionError(f"expected {count} message(s) to {address}, the catcher has {len(found)}")
            return found


def code_in(message):
    return re.search(r"\b([0-9]{6})\b", message["text"]).group(1)


class RecoveryTests(BrowserTestCase):
    def test_the_banner_verifies_the_email_with_the_mailed_code(self):
        username = unique_name("verify")
        email = f"{username}@example.test"
        tokens = ok(http("POST", "/v1/auth/signup", {"username": username, "password": PASSWORD, "email": email}), 201)
        user = User(username, PASSWORD, tokens)
        driver = self.open_browser()
        log_in(driver, user)
        wait_until(driver, lambda d: displayed(d, "#verify-banner"), "the verification banner did not show")
        self.assertIn(email, text_of(driver, "#verify-text"))
        fill(driver, "#verify-code", code_in(mail_to(email)[0]))
        click(driver, "#verify-submit")
        wait_until(driver, lambda d: not displayed(d, "#verify-banner"), "the banner stayed after the code")
        self.assertTrue(user.me()["email_verified"])

    def verified_user(self, prefix):
        username = unique_name(prefix)
        email = f"{username}@example.test"
        tokens = ok(http("POST", "/v1/auth/signup", {"username": username, "password": PASSWORD, "email": email}), 201)
        code = code_in(mail_to(email)[0])
        ok(http("POST", "/v1/me/email/verify", {"code": code}, token=tokens["access_token"]), 200)
        return User(username, PASSWORD, tokens), email

    def test_forgot_password_from_the_log_in_form(self):
        user, email = self.verified_user("forgot")
        driver = self.open_browser()
        wait_for_ready(driver)
        fill(driver, "#login-username", user.username)
        click(driver, "#show-forgot")
        self.assertEqual(driver.find_element("css selector", "#forgot-login").get_attribute("value"), user.username)
        click(driver, "#forgot-submit")
        wait_until(driver, lambda d: displayed(d, "#reset-fields"), "the code fields did not show")
        self.assertIn("If that account has a verified email", text_of(driver, "#forgot-status"))
        fill(driver, "#reset-code", code_in(mail_to(email, count=2)[1]))
        fill(driver, "#reset-password", "A-new-harbour-at-dawn-7")
        click(driver, "#reset-submit")
        wait_signed_in(driver, user.username)
        # The old password is gone, the new one logs in.
        self.assertEqual(http("POST", "/v1/auth/login", {"username": user.username, "password": PASSWORD}).status, 401)
        ok(http("POST", "/v1/auth/login", {"username": user.username, "password": "A-new-harbour-at-dawn-7"}), 200)

    def test_the_mailed_link_opens_a_page_that_changes_nothing_until_the_tap(self):
        user, email = self.verified_user("link")
        ok(http("POST", "/v1/auth/password/forgot", {"login": email}), 202)
        message = mail_to(email, count=2)[1]
        link = re.search(r"(http://\S+/links/reset#t=\S+)", message["text"]).group(1)
        self.assertTrue(link.startswith(BASE_URL))
        driver = self.open_browser()
        driver.get(link)
        wait_until(driver, lambda d: displayed(d, "#reset-form"), "the link page did not ask for a password")
        # Opening it changed nothing: the old password still logs in.
        ok(http("POST", "/v1/auth/login", {"username": user.username, "password": PASSWORD}), 200)
        fill(driver, "#new-password", "Linked-harbour-at-noon-9")
        click(driver, "#reset-form button[type=submit]")
        wait_until(driver, lambda d: "password is set" in (text_of(d, "#link-text") or ""), "the page did not confirm")
        ok(http("POST", "/v1/auth/login", {"username": user.username, "password": "Linked-harbour-at-noon-9"}), 200)
        # The same link again (a new load: only the fragment would not reload the page): used.
        driver.get("about:blank")
        driver.get(link)
        wait_until(driver, lambda d: displayed(d, "#reset-form"), "the link page did not load again")
        fill(driver, "#new-password", "Third-harbour-at-night-3")
        click(driver, "#reset-form button[type=submit]")
        wait_until(driver, lambda d: "used already" in (text_of(d, "#link-text") or ""), "a used link was not refused")
