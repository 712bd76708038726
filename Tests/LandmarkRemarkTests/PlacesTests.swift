import Foundation
import HTTPTypes
import HummingbirdTesting
import LandmarkRemark
import Testing

extension TestClientProtocol {
    @discardableResult
    func createPlace(_ account: Account, _ name: String, lat: Double, lng: Double, sourceLocation: SourceLocation = #_sourceLocation) async throws -> API.Place {
        let response = try await call(.post, "/v1/places", json: ["name": name, "lat": lat, "lng": lng], token: account.accessToken)
        #expect(response.status == .created, "\(response.body)", sourceLocation: sourceLocation)
        return try response.decode(API.Place.self)
    }
}

@Suite(.timeLimit(.minutes(10))) struct PlacesTests {
    @Test func nearestFirstWithDistancesAndRadius() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let user = try await client.signup("placer", tenant: tenant)
            let origin = (lat: -33.8568, lng: 151.2153)
            for (index, metres) in [900.0, 100.0, 5000.0, 2500.0].enumerated() {
                let point = try await NotesFixture.project(lat: origin.lat, lng: origin.lng, distance: metres, azimuth: Double(index) * 80)
                try await client.createPlace(user, "place at \(Int(metres))", lat: point.lat, lng: point.lng)
            }
            let inside = try await NotesFixture.project(lat: origin.lat, lng: origin.lng, distance: 2999, azimuth: 200)
            let outside = try await NotesFixture.project(lat: origin.lat, lng: origin.lng, distance: 3001, azimuth: 200)
            try await client.createPlace(user, "just inside", lat: inside.lat, lng: inside.lng)
            try await client.createPlace(user, "just outside", lat: outside.lat, lng: outside.lng)
            let all = try await client.page("/v1/places?near=\(origin.lat),\(origin.lng)", token: user.accessToken, of: API.Place.self).items
            #expect(all.map(\.name) == ["place at 100", "place at 900", "place at 2500", "just inside", "just outside", "place at 5000"])
            let distances = all.compactMap(\.distanceM)
            #expect(distances.count == all.count, "every place has distance_m with near")
            #expect(abs(distances[0] - 100) < 0.5 && abs(distances[3] - 2999) < 0.5)
            let within = try await client.page("/v1/places?near=\(origin.lat),\(origin.lng)&radius_m=3000", token: user.accessToken, of: API.Place.self).items
            #expect(within.map(\.name) == ["place at 100", "place at 900", "place at 2500", "just inside"])
            // Paging by 2 walks the same order.
            let walked = try await client.walk("/v1/places?near=\(origin.lat),\(origin.lng)", token: user.accessToken, limit: 2, of: API.Place.self)
            #expect(walked.map(\.name) == all.map(\.name))
            let walkedWithin = try await client.walk("/v1/places?near=\(origin.lat),\(origin.lng)&radius_m=3000", token: user.accessToken,
                                                     limit: 2, of: API.Place.self)
            #expect(walkedWithin.map(\.name) == within.map(\.name))
            let plain = try await client.call(.get, "/v1/places", token: user.accessToken)
            #expect(try plain.decode(API.PlacePage.self).items.first?.name == "just outside")
            // Without `near`, no `distance_m` key at all.
            guard case .array(let plainItems)? = plain.jsonValue["items"] else { Issue.record("no items: \(plain.body)"); return }
            #expect(plainItems.allSatisfy { !$0.keys.contains("distance_m") })
        }
    }

    @Test func viewportAcrossTheAntimeridianAndNameSearch() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let user = try await client.signup("mapper", tenant: tenant)
            try await client.createPlace(user, "Suva 100%", lat: -18.14, lng: 178.44)
            try await client.createPlace(user, "Apia_harbour", lat: -13.83, lng: -171.76)
            try await client.createPlace(user, "Back\\slash 'quoted' 🏝️", lat: 51.5, lng: -0.12)
            let pacific = try await client.page("/v1/places?bbox=170,-20,-170,0", token: user.accessToken, of: API.Place.self).items
            #expect(Set(pacific.map(\.name)) == ["Suva 100%", "Apia_harbour"])
            for (q, expected) in [("100%", ["Suva 100%"]), ("_h", ["Apia_harbour"]), ("%", ["Suva 100%"]), ("\\", ["Back\\slash 'quoted' 🏝️"]),
                                  ("'quoted'", ["Back\\slash 'quoted' 🏝️"]), ("🏝️", ["Back\\slash 'quoted' 🏝️"]), ("SUVA", ["Suva 100%"]), ("zz", [])] {
                let found = try await client.page("/v1/places?q=\(queryValue(q))", token: user.accessToken, of: API.Place.self).items
                #expect(found.map(\.name) == expected, "q=\(q)")
            }
            for bad in ["q=", "bbox=1,2,3", "near=91,0", "radius_m=10", "author=me", "limit=0", "cursor=xyz", "colour=red"] {
                let response = try await client.call(.get, "/v1/places?\(bad)", token: user.accessToken)
                #expect(response.code == "malformed_request", "\(bad): \(response.body)")
            }
        }
    }

    @Test func onlyTheCreatorChangesACustomPlaceAndDefaultsAreReadOnly() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let owner = try await client.signup("owner", tenant: tenant)
            let other = try await client.signup("other", tenant: tenant)
            let place = try await client.createPlace(owner, "  My spot  ", lat: 1, lng: 1)
            #expect(place.name == "My spot")
            #expect(place.kind == "custom")
            #expect(place.noteCount == 0)
            // The creator as a note's author is shown, in every place response.
            #expect(place.createdBy == API.UserSummary(id: owner.userID, username: "owner"))
            let id = place.id
            #expect(try await client.call(.patch, "/v1/places/\(id)", json: ["name": "Mine now"], token: other.accessToken).code == "forbidden")
            #expect(try await client.call(.delete, "/v1/places/\(id)", token: other.accessToken).code == "forbidden")
            let renamed = try await client.call(.patch, "/v1/places/\(id)", json: ["name": "Renamed"], token: owner.accessToken)
            #expect(try renamed.decode(API.Place.self).name == "Renamed")
            #expect(try await client.call(.patch, "/v1/places/\(id)", json: ["name": ""], token: owner.accessToken).code == "validation_failed")
            #expect(try await client.call(.patch, "/v1/places/\(id)", json: ["name": "x", "lat": 2], token: owner.accessToken).code == "validation_failed")

            let defaultID = try await NotesFixture.makePlace(tenant, name: "Curated")
            #expect(try await client.call(.patch, "/v1/places/\(defaultID)", json: ["name": "Mine"], token: owner.accessToken).code == "forbidden")
            #expect(try await client.call(.delete, "/v1/places/\(defaultID)", token: owner.accessToken).code == "forbidden")
            let curated = try await client.call(.get, "/v1/places/\(defaultID)", token: owner.accessToken)
            let curatedPlace = try curated.decode(API.Place.self)
            #expect(curatedPlace.kind == "default")
            #expect(curatedPlace.createdBy == nil)
            #expect(curated.jsonValue["created_by"] == .null, "present and null")
            let listed = try await client.page("/v1/places?q=Renamed", token: other.accessToken, of: API.Place.self).items
            #expect(listed.first?.createdBy?.username == "owner")

            for bad: [String: Any] in [["name": "x"], ["name": "x", "lat": 91, "lng": 0], ["name": String(repeating: "n", count: 101), "lat": 0, "lng": 0],
                                       ["name": "x", "lat": "1", "lng": 0], ["name": "tab\there", "lat": 0, "lng": 0]] {
                #expect(try await client.call(.post, "/v1/places", json: bad, token: owner.accessToken).code == "validation_failed")
            }
        }
    }

    @Test func deletingAPlaceKeepsItsNotesAndDeletingAUserKeepsTheirPlaces() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let owner = try await client.signup("keeper", tenant: tenant)
            let place = try await client.createPlace(owner, "Temporary", lat: 2, lng: 2)
            let placeID = place.id
            let note = try await client.createNote(owner, "about it", lat: 2, lng: 2, placeID: placeID)
            let noteID = note.id
            let private_ = try await client.createNote(owner, "private about it", lat: 2, lng: 2, visibility: "private", placeID: placeID)
            #expect(private_.placeID == placeID)
            let viewer = try await client.signup("viewer", tenant: tenant)
            #expect(try await client.call(.get, "/v1/places/\(placeID)", token: owner.accessToken).decode(API.Place.self).noteCount == 2)
            #expect(try await client.call(.get, "/v1/places/\(placeID)", token: viewer.accessToken).decode(API.Place.self).noteCount == 1)
            let listed = try await client.page("/v1/notes?place_id=\(placeID)", token: viewer.accessToken).items
            #expect(listed.map(\.id) == [noteID])
            #expect(try await client.call(.delete, "/v1/places/\(placeID)", token: owner.accessToken).status == .noContent)
            #expect(try await client.call(.get, "/v1/places/\(placeID)", token: owner.accessToken).status == .notFound)
            let kept = try await client.call(.get, "/v1/notes/\(noteID)", token: owner.accessToken)
            #expect(kept.status == .ok)
            #expect(try kept.decode(API.Note.self).placeID == nil)

            let lasting = try await client.createPlace(viewer, "Outlives me", lat: 3, lng: 3)
            let lastingID = lasting.id
            #expect(try await client.call(.delete, "/v1/me", json: ["password": viewer.password], token: viewer.accessToken).status == .noContent)
            let orphan = try await client.call(.get, "/v1/places/\(lastingID)", token: owner.accessToken)
            #expect(orphan.status == .ok)
            #expect(try orphan.decode(API.Place.self).createdBy == nil)
        }
    }

    @Test func otherTenantsPlacesAreInvisibleAndUnattachable() async throws {
        let a = try await TestEnvironment.makeTenant()
        let b = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let inA = try await client.signup("a-user", tenant: a)
            let inB = try await client.signup("b-user", tenant: b)
            let place = try await client.createPlace(inB, "B only", lat: 0, lng: 0)
            let id = place.id
            #expect(try await client.call(.get, "/v1/places/\(id)", token: inA.accessToken).code == "not_found")
            #expect(try await client.call(.patch, "/v1/places/\(id)", json: ["name": "x"], token: inA.accessToken).code == "not_found")
            #expect(try await client.call(.delete, "/v1/places/\(id)", token: inA.accessToken).code == "not_found")
            #expect(try await client.page("/v1/places", token: inA.accessToken, of: API.Place.self).items.isEmpty)
            let attach = try await client.call(.post, "/v1/notes", json: ["body": "x", "lat": 0, "lng": 0, "place_id": id], token: inA.accessToken)
            #expect(attach.code == "validation_failed")
            #expect(try await client.call(.get, "/v1/places/abc", token: inA.accessToken).code == "not_found")
        }
    }
}

@Suite(.timeLimit(.minutes(10))) struct PlacesImportTests {
    static func write(_ json: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("places-\(UUID().uuidString).json")
        try json.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    static func placeCount(_ tenant: String) async throws -> Int {
        try await TestEnvironment.ownerScalar("SELECT count(*) FROM places p JOIN tenants t ON t.id = p.tenant_id WHERE t.slug = \(tenant)", as: Int.self)
    }

    @Test func importIsAllOrNothingAndIdempotent() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        let configuration = try TestEnvironment.configuration()
        let demo = TestEnvironment.repositoryRoot.appendingPathComponent("sql/demo/places.json")
        let first = try await AdminCommands.importPlaces(tenant: tenant, file: demo, configuration: configuration, logger: TestEnvironment.logger)
        #expect(first == .init(inserted: 10, updated: 0, unchanged: 0))
        let again = try await AdminCommands.importPlaces(tenant: tenant, file: demo, configuration: configuration, logger: TestEnvironment.logger)
        #expect(again == .init(inserted: 0, updated: 0, unchanged: 10))
        let details = try await TestEnvironment.ownerScalar(
            "SELECT details->>'category' FROM places WHERE import_key = 'fort-denison' AND tenant_id = (SELECT id FROM tenants WHERE slug = \(tenant))",
            as: String.self)
        #expect(details == "history")

        let changed = try Self.write("""
            [{"key": "fort-denison", "name": "Pinchgut", "lat": -33.8548, "lng": 151.2257, "category": "history"},
             {"name": "Brand new", "lat": 1, "lng": 2}]
            """)
        let update = try await AdminCommands.importPlaces(tenant: tenant, file: changed, configuration: configuration, logger: TestEnvironment.logger)
        #expect(update == .init(inserted: 1, updated: 1, unchanged: 0))

        for (json, expected) in [
            ("[{\"name\": \"ok\", \"lat\": 1, \"lng\": 1}, {\"name\": \"bad\", \"lat\": 95, \"lng\": 1}]", "row 1: lat"),
            ("[{\"name\": \"ok\", \"lat\": 1, \"lng\": 1}, {\"lat\": 1, \"lng\": 1}]", "row 1: name"),
            ("[{\"name\": \"a\", \"lat\": 1, \"lng\": \"east\"}]", "row 0: lng"),
            ("[{\"name\": \"same\", \"lat\": 1, \"lng\": 1}, {\"name\": \"SAME\", \"lat\": 2, \"lng\": 2}]", "share the key"),
            ("{\"name\": \"not an array\"}", "JSON array"),
            ("[{\"name\": \"x\", \"lat\": 1,", "not valid JSON"),
        ] {
            let before = try await Self.placeCount(tenant)
            do {
                _ = try await AdminCommands.importPlaces(tenant: tenant, file: try Self.write(json), configuration: configuration, logger: TestEnvironment.logger)
                Issue.record("\(json) was imported")
            } catch let error as AdminCommands.ImportError {
                #expect(error.description.contains(expected), "\(error)")
            }
            #expect(try await Self.placeCount(tenant) == before)
        }
    }

    @Test func tenThousandPlacesImportInOneGo() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        let rows = (0..<10_000).map { "{\"name\": \"Spot \($0)\", \"lat\": \(Double($0 % 180) - 89.5), \"lng\": \(Double($0 % 360) - 179.5)}" }
        let file = try Self.write("[" + rows.joined(separator: ",") + "]")
        let summary = try await AdminCommands.importPlaces(
            tenant: tenant, file: file, configuration: try TestEnvironment.configuration(), logger: TestEnvironment.logger)
        #expect(summary.inserted == 10_000)
        #expect(try await Self.placeCount(tenant) == 10_000)
    }

    @Test func seedDemoGivesPlacesAndNotesOnce() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        let configuration = try TestEnvironment.configuration()
        let directory = TestEnvironment.repositoryRoot.appendingPathComponent("sql/demo")
        let (places, notes) = try await AdminCommands.seedDemo(tenant: tenant, directory: directory, configuration: configuration, logger: TestEnvironment.logger)
        #expect(places.inserted == 10 && notes == 8)
        let (_, again) = try await AdminCommands.seedDemo(tenant: tenant, directory: directory, configuration: configuration, logger: TestEnvironment.logger)
        #expect(again == 0)
        try await withApp { client in
            let visitor = try await client.signup("visitor", tenant: tenant)
            let nearby = try await client.page("/v1/notes?near=-33.8568,151.2153&radius_m=10000", token: visitor.accessToken).items
            #expect(nearby.count == 8)
            #expect(nearby.first?.placeID != nil)
            #expect(try await client.call(.post, "/v1/auth/login", json: ["username": "landmark-demo", "password": "!"], tenant: tenant).status == .unauthorized)
        }
    }
}
