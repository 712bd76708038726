"""Photos: the author adds one from a file, with the camera offered too and the upload's
progress shown; everyone who sees the note sees its thumbnail in the popup and the list, and
the viewer shows the display size; the author deletes it from the viewer. The files are
Tests/PhotosTests/make-photos.sh's camera-like ones (EXIF orientation 6: shown 900 × 1200)."""

import json
import os
import subprocess
import tempfile
import urllib.request

from selenium.webdriver.common.by import By

from support import (
    BASE_URL, TENANT, BrowserTestCase, User, click, displayed, http, isolated_spot, js, make_moderator, offset, ok,
    open_app_as, open_popup, run_admin, show_panel, text_of, wait_dialog, wait_until,
)

_FILES = []


def photo_file(name):
    """The path of one of make-photos.sh's files, made once for the run."""
    if not _FILES:
        directory = tempfile.mkdtemp(prefix="lr-web-photos-")
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "PhotosTests", "make-photos.sh")
        subprocess.run(["bash", script, directory], check=True, capture_output=True)
        _FILES.append(directory)
    return os.path.join(_FILES[0], name)


def upload(user, note_id, name):
    with open(photo_file(name), "rb") as handle:
        data = handle.read()
    request = urllib.request.Request(
        f"{BASE_URL}/v1/notes/{note_id}/photos", data=data, method="POST",
        headers={"Authorization": f"Bearer {user.token}", "Content-Type": "application/octet-stream", "X-Tenant": TENANT})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def natural_width(driver, selector):
    """The decoded width of the image at selector, shown from a blob: URL; 0 until then."""
    return js(driver, "const i = document.querySelector(arguments[0]);"
                      "return i && i.src.startsWith('blob:') && i.complete ? i.naturalWidth : 0", selector)


class PhotosTests(BrowserTestCase):
    def test_the_author_adds_a_photo_from_a_file(self):
        author = User.sign_up("photographer")
        here = isolated_spot()
        note = author.create_note("Sunrise over the harbour", offset(here, east_m=15))
        driver = open_app_as(self, author, here)
        popup = open_popup(driver, note["id"])
        # A file, or the camera (capture=environment: a phone opens it at once), each with
        # the progress bar beside them.
        self.assertEqual(js(driver, "return [...document.querySelectorAll(arguments[0] + ' .photo-input')]"
                                    ".map(i => i.getAttribute('capture'))", popup), [None, "environment"])
        self.assertTrue(js(driver, "const p = document.querySelector(arguments[0] + ' .photo-progress');"
                                   "return !!p && p.max === 1", popup))
        chooser = driver.find_element(By.CSS_SELECTOR, f"{popup} .photo-input:not([capture])")
        chooser.send_keys(photo_file("camera.jpg"))
        wait_until(driver, lambda d: "Photo added." in (text_of(d, "#announcer") or ""), "the upload was not announced")
        photos = author.get_note(note["id"])["photos"]
        self.assertEqual(len(photos), 1)
        thumb = f'{popup} .photo-thumb[data-photo-id="{photos[0]["id"]}"] img'
        wait_until(driver, lambda d: natural_width(d, thumb) == 192, "the popup does not show the photo's thumbnail (192 × 256)")

    def test_others_see_the_photo_and_the_author_deletes_it(self):
        author, viewer = User.sign_up("shooter"), User.sign_up("admirer")
        here = isolated_spot()
        note = author.create_note("Fig tree at dusk", offset(here, north_m=20))
        photo = upload(author, note["id"], "camera.webp")
        other = upload(author, note["id"], "camera.png")

        driver = open_app_as(self, viewer, here)
        popup = open_popup(driver, note["id"])
        self.assertFalse(displayed(driver, f"{popup} .photo-upload"), "only the author adds photos")
        first = f'{popup} .photo-thumb[data-photo-id="{photo["id"]}"]'
        wait_until(driver, lambda d: natural_width(d, f"{first} img") == 192, "the popup does not show the thumbnail")
        click(driver, first)
        wait_dialog(driver, "#photo-dialog")
        wait_until(driver, lambda d: natural_width(d, "#photo-frame img") == 900, "the viewer does not show the display size (900 × 1200)")
        self.assertEqual(text_of(driver, "#photo-position"), "1 of 2")
        self.assertFalse(displayed(driver, "#photo-delete"), "only the author deletes photos")
        click(driver, "#photo-next")
        wait_until(driver, lambda d: js(d, "return document.querySelector('#photo-frame').dataset.photoId") == other["id"],
                   "Next does not show the second photo")
        click(driver, "#photo-close")
        wait_dialog(driver, "#photo-dialog", is_open=False)
        show_panel(driver, "list")
        item = f'li.note-item[data-note-id="{note["id"]}"] .photo-thumb[data-photo-id="{photo["id"]}"] img'
        wait_until(driver, lambda d: natural_width(d, item) == 192, "the list does not show the thumbnail")

        mine = open_app_as(self, author, here)
        mine_popup = open_popup(mine, note["id"])
        click(mine, f'{mine_popup} .photo-thumb[data-photo-id="{photo["id"]}"]')
        wait_dialog(mine, "#photo-dialog")
        click(mine, "#photo-delete")
        wait_until(mine, lambda d: [p["id"] for p in author.get_note(note["id"])["photos"]] == [other["id"]],
                   "the photo was not deleted")
        wait_until(mine, lambda d: text_of(d, "#photo-position") == "1 of 1", "the viewer did not move on to the photo left")

    def test_a_place_shows_its_photos_and_its_creator_adds_them(self):
        creator = User.sign_up("placemaker")
        here = isolated_spot()
        place = creator.create_place("Lookout with a view", offset(here, north_m=30))
        driver = open_app_as(self, creator, here)
        show_panel(driver, "places")
        click(driver, f'#place-list li.place-item[data-place-id="{place["id"]}"] .place-open')
        wait_until(driver, lambda d: displayed(d, "#place-detail"), "the place's notes did not open")
        driver.find_element(By.CSS_SELECTOR, "#place-photos .photo-input:not([capture])").send_keys(photo_file("camera.jpg"))
        wait_until(driver, lambda d: "Photo added." in (text_of(d, "#announcer") or ""), "the upload was not announced")
        photos = ok(http("GET", f"/v1/places/{place['id']}", token=creator.token), 200)["photos"]
        self.assertEqual(len(photos), 1)
        item = f'#place-list li.place-item[data-place-id="{place["id"]}"] .photo-thumb img'
        wait_until(driver, lambda d: natural_width(d, item) == 192, "the place's entry does not show its thumbnail")
        click(driver, "#place-photos .photo-thumb")
        wait_dialog(driver, "#photo-dialog")
        wait_until(driver, lambda d: natural_width(d, "#photo-frame img") == 900, "the viewer does not show the place's photo")
        self.assertTrue(displayed(driver, "#photo-delete"), "the creator may delete it")

    def test_a_moderator_adds_photos_to_a_default_place_and_others_are_not_offered_it(self):
        here = isolated_spot()
        spot = offset(here, north_m=40)
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
            json.dump([{"name": "Harbour lookout (default)", "lat": spot[0], "lng": spot[1]}], handle)
        run_admin("places", "import", "--tenant", TENANT, handle.name)
        os.unlink(handle.name)
        visitor = User.sign_up("lookoutvisitor")
        place = next(p for p in visitor.places(near=f"{spot[0]},{spot[1]}", limit=5) if p["name"] == "Harbour lookout (default)")
        self.assertEqual(place["kind"], "default")
        entry = f'#place-list li.place-item[data-place-id="{place["id"]}"] .place-open'

        # Someone who does not moderate sees the place but no way to add photos to it.
        driver = open_app_as(self, visitor, here)
        show_panel(driver, "places")
        click(driver, entry)
        wait_until(driver, lambda d: displayed(d, "#place-detail"), "the place's notes did not open")
        self.assertEqual(driver.find_elements(By.CSS_SELECTOR, "#place-photos .photo-add"), [], "offered to a non-moderator")

        moderator = User.sign_up("lookoutmoderator")
        make_moderator(self, moderator)
        driver = open_app_as(self, moderator, here)
        show_panel(driver, "places")
        click(driver, entry)
        wait_until(driver, lambda d: displayed(d, "#place-photos .photo-add"), "a moderator is not offered to add a photo")
        driver.find_element(By.CSS_SELECTOR, "#place-photos .photo-input:not([capture])").send_keys(photo_file("camera.jpg"))
        wait_until(driver, lambda d: "Photo added." in (text_of(d, "#announcer") or ""), "the upload was not announced")
        photos = ok(http("GET", f"/v1/places/{place['id']}", token=visitor.token), 200)["photos"]
        self.assertEqual(len(photos), 1, "everyone sees the default place's photo")
        thumb = f'#place-list li.place-item[data-place-id="{place["id"]}"] .photo-thumb img'
        wait_until(driver, lambda d: natural_width(d, thumb) == 192, "the place's entry does not show its thumbnail")
