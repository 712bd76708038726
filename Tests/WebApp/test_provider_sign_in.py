"""Signing in with an OpenID Connect provider: the provider's own page in the same tab, then
back to the app with an ID token in the URL's fragment (the test identity provider plays
Google or Apple; the flow is the same)."""

import json
import os
from urllib.parse import parse_qs, urlparse

from support import (
    BASE_URL, SYDNEY, BrowserTestCase, body_data, click, displayed, driver_local_storage, fill, http, text_of,
    unique_name, wait_for_ready, wait_signed_in, wait_until,
)

PROVIDER = os.environ.get("LR_WEB_IDENTITY_PROVIDER", "")


class ProviderSignInTests(BrowserTestCase):
    def test_sign_in_at_the_provider_and_come_back_signed_in(self):
        driver = self.open_browser(position=SYDNEY)
        self.assertTrue(displayed(driver, "#provider-oidc-test"), "the configured provider is offered")
        self.assertEqual(text_of(driver, "#provider-oidc-test"), "Sign in with Test ID")

        click(driver, "#provider-oidc-test")
        wait_until(driver, lambda d: d.current_url.startswith(PROVIDER + "/authorize?"), "the tab goes to the provider's page")
        asked = driver.current_url
        self.assertIn("client_id=web-app", asked)
        self.assertIn("response_type=id_token", asked)
        self.assertIn("state=", asked)
        self.assertIn("nonce=", asked)

        name = unique_name("oidc")
        fill(driver, "#provider-subject", name)
        click(driver, "#provider-approve")
        # The account is named after the token's name claim, folded to the username alphabet.
        username = name.replace("-", ".")
        wait_signed_in(driver, username)
        token = json.loads(driver_local_storage(driver, "lr.session"))["access_token"]
        me = http("GET", "/v1/me", token=token).json
        self.assertEqual(me["username"], username)
        self.assertEqual([identity["provider"] for identity in me["identities"]], ["oidc:test"])
        self.assertFalse(me["has_password"], "an account without a password")
        # The token came in the fragment and is gone from the address (and so from history).
        self.assertEqual(driver.current_url.rstrip("/"), BASE_URL, "the fragment is removed")
        self.assertFalse(displayed(driver, "#alert"), "no error after signing in")

        driver.refresh()
        wait_for_ready(driver)
        self.assertEqual(body_data(driver, "signedIn"), "true", "a reload keeps the session")
        self.assertIn(username, text_of(driver, "#whoami"))

    def test_a_return_this_tab_did_not_start_signs_no_one_in(self):
        # Someone else's token (or a link crafted to sign the visitor in to an account of the
        # crafter's choosing) arrives with a state this tab never made.
        driver = self.open_browser(path="/#id_token=eyJhbGciOiJSUzI1NiJ9.e30.c2ln&state=forged", position=SYDNEY)
        wait_for_ready(driver)
        wait_until(driver, lambda d: displayed(d, "#alert"), "the refusal is shown")
        self.assertIn("did not start here", text_of(driver, "#alert"))
        self.assertEqual(body_data(driver, "signedIn"), "false")
        self.assertNotIn("id_token", driver.current_url, "the fragment is removed")

    def test_the_provider_saying_no_is_shown_as_words(self):
        driver = self.open_browser(position=SYDNEY)
        click(driver, "#provider-oidc-test")
        wait_until(driver, lambda d: d.current_url.startswith(PROVIDER + "/authorize?"), "the tab goes to the provider's page")
        state = parse_qs(urlparse(driver.current_url).query)["state"][0]
        # The person cancels there; the provider sends them back saying so.
        driver.get(f"{BASE_URL}/#error=access_denied&error_description=The%20user%20cancelled&state={state}")
        wait_for_ready(driver)
        wait_until(driver, lambda d: displayed(d, "#alert"), "the provider's refusal is shown")
        self.assertIn("The user cancelled", text_of(driver, "#alert"))
        self.assertEqual(body_data(driver, "signedIn"), "false")

    def test_words_in_a_link_this_tab_did_not_start_are_not_shown(self):
        driver = self.open_browser(
            path="/#error=x&error_description=Your%20account%20is%20locked.%20Call%20us", position=SYDNEY)
        wait_for_ready(driver)
        wait_until(driver, lambda d: displayed(d, "#alert"), "the refusal is shown")
        self.assertNotIn("Call us", text_of(driver, "#alert"))
        self.assertIn("did not start here", text_of(driver, "#alert"))
