"""Signing up, logging in and out, staying signed in, guests, and API errors shown to people."""

from support import (
    PASSWORD, SYDNEY, BrowserTestCase, User, body_data, click, displayed, fill, http, text_of,
    unique_name, wait_for_ready, wait_signed_in, wait_signed_out, wait_until,
)


class AuthTests(BrowserTestCase):
    def test_sign_up_stay_signed_in_across_reload_log_out_and_log_in_again(self):
        driver = self.open_browser(position=SYDNEY)
        self.assertEqual(body_data(driver, "signedIn"), "false", "a new visitor starts signed out")
        self.assertTrue(displayed(driver, "#login-form"), "the login form is shown first")

        click(driver, "#show-signup")
        wait_until(driver, lambda d: displayed(d, "#signup-form"), "#show-signup did not show the sign-up form")
        username = unique_name("signup")
        fill(driver, "#signup-username", username)
        fill(driver, "#signup-email", f"{username}@example.org")
        fill(driver, "#signup-password", PASSWORD)
        click(driver, "#signup-submit")
        wait_signed_in(driver, username)
        self.assertTrue(displayed(driver, "#logout-button"), "a signed-in user can log out")

        driver.refresh()
        wait_for_ready(driver)
        self.assertEqual(body_data(driver, "signedIn"), "true", "a reload keeps the session")
        self.assertIn(username, text_of(driver, "#whoami"))

        click(driver, "#logout-button")
        wait_signed_out(driver)
        wait_until(driver, lambda d: displayed(d, "#login-form"), "after logging out the login form is shown")
        driver.refresh()
        wait_for_ready(driver)
        self.assertEqual(body_data(driver, "signedIn"), "false", "logging out is not undone by a reload")

        fill(driver, "#login-username", username)
        fill(driver, "#login-password", PASSWORD)
        click(driver, "#login-submit")
        wait_signed_in(driver, username)

    def test_log_in_with_an_account_made_elsewhere(self):
        user = User.sign_up("login")
        driver = self.open_browser(position=SYDNEY)
        fill(driver, "#login-username", user.username)
        fill(driver, "#login-password", user.password)
        click(driver, "#login-submit")
        wait_signed_in(driver, user.username)
        self.assertFalse(displayed(driver, "#alert"), "no error after a good login")

    def test_guest(self):
        driver = self.open_browser(position=SYDNEY)
        click(driver, "#guest-button")
        wait_signed_in(driver, "guest-")

    def test_wrong_password_shows_the_problem_detail(self):
        user = User.sign_up("wrongpw")
        expected = http("POST", "/v1/auth/login", {"username": user.username, "password": "not-the-password-1"}).json
        self.assertEqual(expected["code"], "invalid_credentials")

        driver = self.open_browser(position=SYDNEY)
        self.assertFalse(displayed(driver, "#alert"), "#alert is hidden while there is nothing to say")
        fill(driver, "#login-username", user.username)
        fill(driver, "#login-password", "not-the-password-2")
        click(driver, "#login-submit")
        wait_until(driver, lambda d: displayed(d, "#alert"), "a failed login shows #alert")
        shown = driver.find_element("css selector", "#alert").text
        self.assertIn(expected["detail"], shown, "#alert shows the problem's detail")
        self.assertNotIn("{", shown, "#alert shows text, not JSON")
        self.assertNotIn("invalid_credentials", shown, "#alert shows the detail, not the code")
        self.assertEqual(driver.find_element("css selector", "#alert").get_attribute("role"), "alert")
        self.assertEqual(body_data(driver, "signedIn"), "false")
