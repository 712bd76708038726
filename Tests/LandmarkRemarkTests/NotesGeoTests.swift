import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// Nearest first, radius and viewport, checked against PostGIS' own measurements.
@Suite(.timeLimit(.minutes(10))) struct NotesGeoTests {
    @Test func nearestFirstIsTrueSpheroidOrder() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            // On a sphere B is nearer the origin than A; on the spheroid A is (a degree of
            // meridian at the equator is shorter than a degree of the equator). KNN alone
            // (`<->`, which measures on the sphere) would put B first.
            let a = try await client.createNote(alice, "A north", lat: 1.0, lng: 0).id
            let b = try await client.createNote(alice, "B east", lat: 0, lng: 0.995).id
            var generator = SystemRandomNumberGenerator()
            for index in 0..<40 {
                let lat = Double.random(in: -3...3, using: &generator)
                let lng = Double.random(in: -3...3, using: &generator)
                try await client.createNote(alice, "random \(index)", lat: lat, lng: lng)
            }
            let truth = try await NotesFixture.distances(tenant, lat: 0, lng: 0)
            let items = try await client.walk("/v1/notes?near=0,0", token: alice.accessToken, limit: 9)
            let ids = items.map(\.id)
            #expect(ids == truth.sorted { ($0.value, Int64($0.key)!) < ($1.value, Int64($1.key)!) }.map(\.key))
            #expect(try #require(ids.firstIndex(of: a)) < #require(ids.firstIndex(of: b)))
            for item in items {
                let id = item.id
                let distance = try #require(item.distanceM, "distance_m of \(id) is missing")
                #expect(abs(distance - truth[id]!) <= 0.5, "distance_m of \(id)")
                #expect((distance * 10).rounded() == distance * 10, "rounded to 0.1")
            }
            // Without near there is no distance.
            let newest = try await client.call(.get, "/v1/notes?limit=3", token: alice.accessToken)
            #expect(try newest.decode(API.NotePage.self).items.count == 3)
            guard case .array(let newestItems)? = newest.jsonValue["items"] else { Issue.record("no items: \(newest.body)"); return }
            #expect(newestItems.allSatisfy { !$0.keys.contains("distance_m") })
        }
    }

    /// Nearest first (with a word or without) walks in degrees where the circle's box is one
    /// rectangle of degrees, and by the geography index across the antimeridian; either way
    /// the pages are the spheroid's order of the matches in range, also far north, where a
    /// degree of longitude is short, and around a pole.
    @Test func filteredNearestPagesAreSpheroidOrderAnywhere() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            let origins = [(lat: 70.0, lng: 25.0), (lat: 0.0, lng: 179.99), (lat: 89.99, lng: 0.0), (lat: -33.87, lng: 151.21)]
            var generator = SystemRandomNumberGenerator()
            for origin in origins {
                for index in 0..<40 {
                    let spot = try await NotesFixture.project(lat: origin.lat, lng: origin.lng,
                                                              distance: Double.random(in: 0...30_000, using: &generator),
                                                              azimuth: Double.random(in: 0..<360, using: &generator))
                    // Three in four say coffee: the walk finds a page of them.
                    try await client.createNote(alice, index % 4 == 3 ? "tea \(index)" : "coffee \(index)", lat: spot.lat, lng: spot.lng)
                }
            }
            let bodies = try await NotesFixture.bodies(tenant)
            for origin in origins {
                let truth = try await NotesFixture.distances(tenant, lat: origin.lat, lng: origin.lng)
                // "" is no word: the unfiltered page (ExactNearest), which walks the same way.
                for (word, radius) in [("coffee", 20_000.0), ("tea", 20_000), ("coffee", 1_000_000), ("", 20_000)] {
                    let expected = truth.filter { $0.value <= radius && bodies[$0.key]!.hasPrefix(word) }
                        .sorted { ($0.value, Int64($0.key)!) < ($1.value, Int64($1.key)!) }.map(\.key)
                    let search = word.isEmpty ? "" : "&q=\(word)&in=body"
                    let items = try await client.walk("/v1/notes?near=\(origin.lat),\(origin.lng)&radius_m=\(Int(radius))\(search)",
                                                      token: alice.accessToken, limit: 4)
                    #expect(!expected.isEmpty && items.map(\.id) == expected, "\(word) within \(radius) m of \(origin)")
                }
            }
        }
    }

    @Test func radiusIncludesOneMetreInsideAndExcludesOneMetreOutside() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        let origin = (lat: -33.8688, lng: 151.2093)
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            var inside: [String] = []
            var outside: [String] = []
            for (radius, azimuth) in [(1000.0, 0.0), (10_000, 123), (100_000, 250), (5, 45)] {
                let near = try await NotesFixture.project(lat: origin.lat, lng: origin.lng, distance: radius - 1, azimuth: azimuth)
                let far = try await NotesFixture.project(lat: origin.lat, lng: origin.lng, distance: radius + 1, azimuth: azimuth)
                inside.append(try await client.createNote(alice, "inside \(radius)", lat: near.lat, lng: near.lng).id)
                outside.append(try await client.createNote(alice, "outside \(radius)", lat: far.lat, lng: far.lng).id)
            }
            for (index, radius) in [1000, 10_000, 100_000, 5].enumerated() {
                let ids = try await client.ids("/v1/notes?near=\(origin.lat),\(origin.lng)&radius_m=\(radius)", token: alice.accessToken)
                #expect(ids.contains(inside[index]), "radius \(radius) misses the note 1 m inside")
                #expect(!ids.contains(outside[index]), "radius \(radius) includes the note 1 m outside")
            }
            let global = try await client.ids("/v1/notes?near=\(origin.lat),\(origin.lng)&radius_m=20037509", token: alice.accessToken)
            #expect(global.count == 8)
        }
    }

    @Test func viewportCrossingTheAntimeridianTakesBothSidesAndNothingElse() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            var expected: Set<String> = []
            for (lat, lng) in [(0.0, 175.0), (5, -175), (-10, 170), (10, -170), (0, 180), (0, -180)] {
                expected.insert(try await client.createNote(alice, "in", lat: lat, lng: lng).id)
            }
            for (lat, lng) in [(0.0, 0.0), (0, 169.9), (0, -169.9), (10.1, 175), (-10.1, -175), (60, 180)] {
                try await client.createNote(alice, "out", lat: lat, lng: lng)
            }
            let ids = try await client.ids("/v1/notes?bbox=170,-10,-170,10", token: alice.accessToken)
            #expect(Set(ids) == expected)
            #expect(ids.count == expected.count)
            // Nearest first within the viewport, across the line.
            let near = try await client.ids("/v1/notes?bbox=170,-10,-170,10&near=0,179.9", token: alice.accessToken)
            #expect(Set(near) == expected)
        }
    }

    @Test func viewportsAreLatitudeLongitudeRectangles() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            // On the lower edge of a wide northern box: outside a great-circle polygon, inside the map's rectangle.
            let edge = try await client.createNote(alice, "edge", lat: 10, lng: 0).id
            let middle = try await client.createNote(alice, "middle", lat: 0, lng: 0).id
            let east = try await client.createNote(alice, "east", lat: 0, lng: 175).id
            #expect(try await client.ids("/v1/notes?bbox=-60,10,60,50", token: alice.accessToken) == [edge])
            // Wider than half the globe, not crossing: everything but the far east.
            #expect(Set(try await client.ids("/v1/notes?bbox=-170,-20,170,20", token: alice.accessToken)) == [edge, middle])
            #expect(Set(try await client.ids("/v1/notes?bbox=-180,-90,180,90", token: alice.accessToken)) == [edge, middle, east])
            // A degenerate box (a line, a point) is still a box.
            #expect(try await client.ids("/v1/notes?bbox=0,0,0,0", token: alice.accessToken) == [middle])
        }
    }

    @Test func polesAndTheDateLineAreAccepted() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            let north = try await client.createNote(alice, "north pole", lat: 90, lng: 0).id
            let south = try await client.createNote(alice, "south pole", lat: -90, lng: 180).id
            let lineNote = try await client.createNote(alice, "date line", lat: 0, lng: -180)
            let line = lineNote.id
            #expect(lineNote.lng == 180, "the antimeridian is kept as 180")
            #expect(Set(try await client.ids("/v1/notes?bbox=-180,-90,180,90", token: alice.accessToken)) == [north, south, line])
            #expect(try await client.ids("/v1/notes?bbox=-180,89,180,90", token: alice.accessToken) == [north])
            #expect(try await client.ids("/v1/notes?bbox=179,-90,-179,-89", token: alice.accessToken) == [south])
            #expect(try await client.ids("/v1/notes?bbox=180,-1,180,1", token: alice.accessToken) == [line], "180 and -180 are one meridian")
            #expect(try await client.ids("/v1/notes?bbox=-180,-1,-180,1", token: alice.accessToken) == [line])
            let fromPole = try await client.page("/v1/notes?near=90,0", token: alice.accessToken)
            #expect(fromPole.items.first?.id == north)
            #expect(fromPole.items.first?.distanceM == 0)
            #expect(fromPole.items.last?.id == south)
            let fromLine = try await client.ids("/v1/notes?near=0,180&radius_m=1", token: alice.accessToken)
            #expect(fromLine == [line], "180 and -180 are the same meridian")
            let clusters = try await client.call(.get, "/v1/notes/clusters?bbox=-180,-90,180,90&zoom=3", token: alice.accessToken)
            #expect(clusters.status == .ok)
            let counts = try clusters.decode(API.ClusterList.self).clusters.map(\.count)
            #expect(counts.reduce(0, +) == 3)
        }
    }

    @Test func invalidViewportsAreMalformed() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            let boxes = [
                "0,10,1,5", "0,-91,1,0", "0,0,1,91", "-181,0,1,1", "0,0,181,1", "1,2,3", "1,2,3,4,5", "", "a,b,c,d",
                "1,2,,4", "nan,0,1,1", "inf,0,1,1", "0x1p3,0,1,1", "1;2;3;4",
            ]
            for box in boxes {
                for path in ["/v1/notes?bbox=", "/v1/notes/clusters?zoom=3&bbox="] {
                    let response = try await client.call(.get, path + queryValue(box), token: alice.accessToken)
                    #expect(response.status == .badRequest, "bbox=\(box)")
                    #expect(response.code == "malformed_request")
                    #expect(response.detail?.contains("bbox") == true)
                }
            }
        }
    }
}
