import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import LandmarkRemark

/// Photos on places: `POST /v1/places/{id}/photos` by a custom place's creator, or by a
/// moderator for a default (curated) place; the place's JSON carries them; seen by whoever
/// sees the place; deleting the place deletes them.
@Suite struct PlacePhotosTests {
    @Test func aCreatorAddsPhotosToTheirPlaceAndAModeratorToADefaultOne() async throws {
        let slug = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let rae = try await client.signup("rae", tenant: slug)
            let sam = try await client.signup("sam", tenant: slug)
            let mod = try await client.signup("mod", tenant: slug)
            try await ModerationTests.makeModerator(mod)
            let jpeg = try CameraPhotos.bytes("plain.jpg")
            let custom = try await client.call(
                .post, "/v1/places", json: ["name": "Rae's lookout", "lat": -33.8, "lng": 151.2], token: rae.accessToken
            ).decode(API.Place.self)
            #expect(custom.photos.isEmpty)
            let curated = try await NotesFixture.makePlace(slug, name: "Opera House", lat: -33.8568, lng: 151.2153)

            func upload(_ place: String, as account: Account) async throws -> APIResponse {
                try await client.upload(jpeg, path: "/v1/places/\(place)/photos", as: account)
            }
            let mine = try await upload(custom.id, as: rae)
            #expect(mine.status == .created, "\(mine.body)")
            let photo = try mine.decode(API.Photo.self)
            #expect(try await upload(custom.id, as: sam).code == "forbidden")
            #expect(try await upload(curated, as: sam).code == "forbidden", "a default place is curated")
            #expect(try await upload(curated, as: rae).code == "forbidden")
            let curatedPhoto = try await upload(curated, as: mod)
            #expect(curatedPhoto.status == .created, "\(curatedPhoto.body)")
            #expect(try await upload("999999999", as: rae).code == "not_found")

            // The place's JSON carries its photos, by id and in lists; anyone who sees it sees them.
            let read = try await client.call(.get, "/v1/places/\(custom.id)", token: sam.accessToken).decode(API.Place.self)
            #expect(read.photos == [photo])
            let listed = try await client.call(.get, "/v1/places?near=-33.8568,151.2153&limit=5", token: sam.accessToken)
                .decode(API.PlacePage.self).items
            #expect(listed.first { $0.id == curated }?.photos.map(\.id) == [try curatedPhoto.decode(API.Photo.self).id])
            #expect(try await client.download(photo.variants.display.url, as: sam).0 == .ok)

            // Only who may add them removes them; deleting the place deletes the rest for good.
            #expect(try await client.call(.delete, "/v1/places/\(custom.id)/photos/\(photo.id)", token: sam.accessToken).code == "forbidden")
            let second = try await upload(custom.id, as: rae).decode(API.Photo.self)
            #expect(try await client.call(.delete, "/v1/places/\(custom.id)/photos/\(photo.id)", token: rae.accessToken).status == .noContent)
            #expect(try await client.call(.get, "/v1/places/\(custom.id)", token: rae.accessToken).decode(API.Place.self).photos == [second])
            #expect(try await client.call(.delete, "/v1/places/\(custom.id)", token: rae.accessToken).status == .noContent)
            #expect(try await client.download(second.variants.thumb.url, as: rae).0 == .notFound)
            #expect(try await TestEnvironment.ownerScalar(
                "SELECT count(*) FROM photos WHERE id IN (\(Int64(photo.id)!), \(Int64(second.id)!))", as: Int64.self) == 0)
        }
    }

    /// A place the caller reported is gone for them, with its photos.
    @Test func aReportedPlacesPhotosAreGoneForTheReporter() async throws {
        let slug = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let tess = try await client.signup("tess", tenant: slug)
            let uma = try await client.signup("uma", tenant: slug)
            let place = try await client.call(
                .post, "/v1/places", json: ["name": "Tess's bench", "lat": 1, "lng": 1], token: tess.accessToken
            ).decode(API.Place.self)
            let photo = try await client.upload(try CameraPhotos.bytes("plain.jpg"), path: "/v1/places/\(place.id)/photos", as: tess)
                .decode(API.Photo.self)
            #expect(try await client.download(photo.variants.thumb.url, as: uma).0 == .ok)
            let report = try await client.call(
                .post, "/v1/reports", json: ["target": ["type": "place", "id": place.id], "reason": "spam"], token: uma.accessToken)
            #expect(report.status == .created, "\(report.body)")
            #expect(try await client.download(photo.variants.thumb.url, as: uma).0 == .notFound)
            #expect(try await client.download(photo.variants.thumb.url, as: tess).0 == .ok)
        }
    }
}
