import Foundation
import HummingbirdTesting
@testable import LandmarkRemark
import Postgres
import Testing

/// A rare word in a viewport or a radius is found through the cell keys of `notes_search`
/// (migration 0038, `NoteReading.throughIndex`): the index returns the notes that hold the
/// word in the cells that cover the area, and the rows are tested for the exact area. Over
/// notes in London, across the antimeridian (some at exactly 180 and -180) and around the
/// North Pole, every page is what a plain statement written here (not the service's
/// condition) gives; the covers and the circle's box never miss a point.
@Suite(.timeLimit(.minutes(10))) struct SearchCellTests {
    /// One tenant: 3 users and 6,000 notes, a third in each region, one every 2 hours,
    /// every seventh private. `numbat` is in 1 note of 150 (scattered by a hash), so the
    /// newest 1,000 notes hold fewer than 5 of it in any of the areas below: the walk gives
    /// up and the cells answer.
    static func seed() async throws -> (slug: String, tenantID: Int64, userIDs: [Int64]) {
        let slug = try await TestEnvironment.makeTenant()
        let tenantID = try await NotesFixture.tenantID(slug)
        let userIDs = try await TestEnvironment.withOwnerPool { pool in
            let users = try await NotesFixture.insertUsers(tenantID: tenantID, prefix: "cells", count: 3, on: pool)
            try await NotesFixture.insertGenerated(count: 6_000, seed: 0.25, on: pool) { from, to in
                """
                INSERT INTO notes (tenant_id, user_id, body, location, visibility, created_at, updated_at)
                SELECT \(tenantID), (\(users))[1 + g % 3],
                       'cell note ' || g || CASE WHEN abs(hashint4(g)) % 150 = 0 THEN ' a Numbat here' ELSE '' END,
                       ST_SetSRID(CASE g % 3
                           WHEN 0 THEN ST_MakePoint(-0.5 + random() * 0.8, 51.2 + random() * 0.6)
                           WHEN 1 THEN ST_MakePoint(CASE WHEN g % 97 = 1 THEN 180 WHEN g % 97 = 4 THEN -180
                                                         ELSE 179 + random() * 2 - CASE WHEN random() < 0.5 THEN 0 ELSE 360 END END,
                                                    -17 + random())
                           ELSE ST_MakePoint(-180 + random() * 360, 89 + random()) END, 4326)::geography,
                       CASE WHEN g % 7 = 0 THEN 'private' ELSE 'public' END,
                       now() - g * interval '2 hours', now() - g * interval '2 hours'
                FROM generate_series(\(literal: from), \(literal: to)) g
                """
            }
            try await pool.query("ANALYZE notes")
            return users
        }
        return (slug, tenantID, userIDs)
    }

    static let seeded = Task { try await seed() }

    /// Every `numbat` `viewerID` sees in the area, in the list's order: the plain statement.
    static func expected(tenantID: Int64, viewerID: Int64, inArea: PostgresQuery, order: PostgresQuery) async throws -> [String] {
        try await TestEnvironment.withOwnerPool { pool in
            try await pool.query("""
                SELECT id FROM notes
                WHERE tenant_id = \(tenantID) AND (visibility = 'public' OR user_id = \(viewerID))
                  AND strpos(body_folded, 'numbat') > 0 AND \(inArea)
                ORDER BY \(order)
                """).map { String(try $0.decode(Int64.self, column: 0)) }
        }
    }

    /// In the box, written out: across the antimeridian either side; 180 and -180 are one meridian.
    static func inBox(_ west: Double, _ south: Double, _ east: Double, _ north: Double) -> PostgresQuery {
        """
        ST_Y(location::geometry) BETWEEN \(south) AND \(north)
        AND CASE WHEN \(west) > \(east) THEN ST_X(location::geometry) >= \(west) OR ST_X(location::geometry) <= \(east)
                 ELSE ST_X(location::geometry) BETWEEN \(west) AND \(east)
                      OR (\(east) = 180 AND ST_X(location::geometry) = -180)
                      OR (\(west) = -180 AND ST_X(location::geometry) = 180) END
        """
    }

    static let boxes: [(Double, Double, Double, Double)] = [
        (-0.3, 51.3, 0.0, 51.6),        // a city's box
        (-1, 51, 1, 52),                // all of London's notes
        (179.5, -17, -179.5, -16.2),    // across the antimeridian
        (179.2, -17, 180, -16),         // reaching 180: the notes at -180 too
        (-180, -17, -179.3, -16),       // reaching -180: the notes at 180 too
        (-180, 89.5, 180, 90),          // the pole
        (10, 10, 11, 11),               // nothing there
    ]

    static let circles: [(lat: Double, lng: Double, radius: Double)] = [
        (51.5, -0.1, 15_000),           // a city
        (-16.5, 179.95, 60_000),        // across the antimeridian
        (-16.5, -180, 40_000),          // on it
        (89.8, 10, 80_000),             // around the pole
        (0, 0, 100),                    // nothing there
    ]

    @Test func pagesInBoxesAndCirclesAreThePlainStatements() async throws {
        let (slug, tenantID, _) = try await Self.seeded.value
        try await withApp { client in
            let reader = try await client.signup("cells_reader", tenant: slug)
            let viewerID = Int64(reader.userID)!
            var nonEmpty = 0
            for (west, south, east, north) in Self.boxes {
                let expected = try await Self.expected(
                    tenantID: tenantID, viewerID: viewerID, inArea: Self.inBox(west, south, east, north), order: "created_at DESC, id DESC")
                nonEmpty += expected.isEmpty ? 0 : 1
                for q in ["q=numbat&in=body", "q=NUMBAT"] {
                    let query = "/v1/notes?\(q)&bbox=\(west),\(south),\(east),\(north)"
                    #expect(try await client.walk(query, token: reader.accessToken, limit: 4).map(\.id) == expected, "\(query)")
                }
            }
            for (lat, lng, radius) in Self.circles {
                let origin: PostgresQuery = "ST_SetSRID(ST_MakePoint(\(lng), \(lat)), 4326)::geography"
                let expected = try await Self.expected(
                    tenantID: tenantID, viewerID: viewerID, inArea: "ST_DWithin(location, \(origin), \(radius))",
                    order: "ST_Distance(location, \(origin)), id")
                nonEmpty += expected.isEmpty ? 0 : 1
                let query = "/v1/notes?q=numbat&near=\(lat),\(lng)&radius_m=\(radius)"
                #expect(try await client.walk(query, token: reader.accessToken, limit: 4).map(\.id) == expected, "\(query)")
            }
            #expect(nonEmpty == Self.boxes.count + Self.circles.count - 2, "every area but the empty ones holds the word")
        }
    }

    /// The rare matches are asked of `notes_search` by cells and word in one scan, and the
    /// spatial indexes are not offered: beside them the planner ANDed the whole box with the word.
    @Test(.disabled(if: CitusRoutingTests.onCitus, "single-server plans"))
    func rareWordsInAnAreaAskTheCells() async throws {
        let (_, tenantID, userIDs) = try await Self.seeded.value
        for query in ["q=numbat&in=body&bbox=-0.3,51.3,0.0,51.6", "q=numbat&bbox=179.5,-17,-179.5,-16.2"] {
            let plan = try await NotesPlanTests.plan(query, tenantID: tenantID, viewerID: userIDs[0], analyze: true)
            #expect(NotesPlanTests.branchesRun(plan) == ["walked", "matches"], "\(query)\n\(plan)")
            let matches = NotesPlanTests.cte(plan, "matches")
            #expect(Self.asksCellsAndText(matches), "\(query)\n\(plan)")
            #expect(!matches.contains("notes_location"), "\(query)\n\(plan)")
        }
        let near = try await NotesPlanTests.plan("q=numbat&near=-16.5,179.95&radius_m=60000", tenantID: tenantID, viewerID: userIDs[0], analyze: true)
        let byFilter = NotesPlanTests.section(near, from: "CTE by_filter")
        #expect(!NotesPlanTests.scansRun(byFilter).isEmpty, "the walk gave up\n\(near)")
        #expect(Self.asksCellsAndText(byFilter), "\(near)")
    }

    /// An Index Cond on notes_search with the cells (shown inlined) and the word.
    static func asksCellsAndText(_ plan: String) -> Bool {
        plan.split(separator: "\n").contains { $0.contains("Index Cond:") && $0.contains("4096") && $0.contains(" && ") && $0.contains("body_folded ~~") }
    }

    /// `search_cells` over 3,000 random boxes (thin, wide, at the edges of the world): every
    /// point inside, corners included, has a key in the cover, which has 1 to 64 cells.
    @Test func coversHoldEveryPointOfTheirBox() async throws {
        try await TestEnvironment.migrate()
        let faults = try await TestEnvironment.withOwnerPool { pool in
            try await pool.query("""
                WITH corners AS (
                    SELECT c, -180 + random() * 360 AS w, -90 + random() * 180 AS s FROM generate_series(1, 3000) c
                ), boxes AS (
                    SELECT c, w, s, CASE WHEN c % 10 = 0 THEN 180 ELSE w + random() ^ 4 * (180 - w) END AS e,
                           CASE WHEN c % 10 = 1 THEN 90 ELSE s + random() ^ 4 * (90 - s) END AS n
                    FROM corners
                ), points AS (
                    SELECT b.*, w + random() * (e - w) AS x, s + random() * (n - s) AS y FROM boxes b, generate_series(1, 4)
                    UNION ALL SELECT b.*, w, s FROM boxes b
                    UNION ALL SELECT b.*, e, n FROM boxes b
                )
                SELECT 'missed' FROM points
                WHERE NOT search_cell_keys(5, ST_SetSRID(ST_MakePoint(x, y), 4326)::geography) && search_cells(5, w, s, e, n)
                UNION ALL SELECT 'size' FROM boxes WHERE cardinality(search_cells(5, w, s, e, n)) NOT BETWEEN 1 AND 64
                UNION ALL SELECT 'tenant' FROM boxes, unnest(search_cells(5, w, s, e, n)) k WHERE k >> 28 <> 5
                UNION ALL SELECT 'reversed' WHERE search_cells(5, 10, 0, -10, 1) <> '{}'
                """).map { try $0.decode(String.self, column: 0) }
        }
        #expect(faults.isEmpty, "\(Set(faults))")
    }

    /// `BoundingBox(around:radius:)` over 600 random circles (radii from a metre to half the
    /// world, many near the poles and the antimeridian): every point PostGIS projects at the
    /// radius, geodesically, in 72 directions, lies in the box (20,000 km at most: ST_Project
    /// refuses distances past half the sphere's circumference, 20,015 km).
    @Test func circlesLieInTheirBoxes() async throws {
        var generator = SystemRandomNumberGenerator()
        var rows: [String] = []
        for index in 0..<600 {
            let lat = index % 5 == 0 ? Double.random(in: 80...90, using: &generator) * (index % 2 == 0 ? 1 : -1) : Double.random(in: -90...90, using: &generator)
            let lng = index % 3 == 0 ? 180 - Double.random(in: 0...2, using: &generator) : Double.random(in: -180...180, using: &generator)
            let radius = exp(Double.random(in: 0...log(20_037_509), using: &generator))
            let box = BoundingBox(around: GeoPoint(lat: lat, lng: lng), radius: radius)
            let ranges = box.longitudeRanges.map { "\($0.0) \($0.1)" }.joined(separator: " ")
            rows.append("\(lat),\(lng),\(radius),\(box.minLat),\(box.maxLat),\(ranges)")
        }
        let outside = try await TestEnvironment.withOwnerPool { pool in
            try await pool.query("""
                WITH circles AS (
                    SELECT split_part(r, ',', 1)::float8 AS lat, split_part(r, ',', 2)::float8 AS lng, split_part(r, ',', 3)::float8 AS radius,
                           split_part(r, ',', 4)::float8 AS south, split_part(r, ',', 5)::float8 AS north,
                           string_to_array(split_part(r, ',', 6), ' ')::float8[] AS ranges
                    FROM unnest(\(rows)) r
                ), points AS (
                    SELECT c.*, ST_Project(ST_SetSRID(ST_MakePoint(lng, lat), 4326)::geography, least(radius * 0.999, 20000000), radians(a * 5))::geometry AS p
                    FROM circles c, generate_series(0, 71) a
                )
                SELECT format('%s,%s r=%s: %s', lat, lng, radius, ST_AsText(p)) FROM points
                WHERE NOT (ST_Y(p) BETWEEN south AND north
                           AND EXISTS (SELECT FROM generate_subscripts(ranges, 1) i
                                       WHERE i % 2 = 1 AND ST_X(p) BETWEEN ranges[i] AND ranges[i + 1]))
                LIMIT 5
                """).map { try $0.decode(String.self, column: 0) }
        }
        #expect(outside.isEmpty, "\(outside)")
    }
}
