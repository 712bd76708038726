import Foundation
import HummingbirdTesting
import LandmarkRemark
import Postgres
import Testing

/// Watches and devices (issue 39, first part): `/v1/me/watches` and
/// `/v1/me/devices/{device_token}`, their rules and limits, and what each refuses.
@Suite(.timeLimit(.minutes(10))) struct WatchesTests {
    @Test func aWatchIsCreatedReadChangedAndDeletedByItsOwnerOnly() async throws {
        let (tenant, other) = (try await TestEnvironment.makeTenant(), try await TestEnvironment.makeTenant())
        try await withApp { client in
            let me = try await client.signup("watcher_w", tenant: tenant)
            let neighbour = try await client.signup("neighbour_w", tenant: tenant)
            let stranger = try await client.signup("stranger_w", tenant: other)
            let created = try await client.call(
                .post, "/v1/me/watches", json: ["near": "-33.8688,151.2093", "radius_m": 1500, "label": "  Home  "], token: me.accessToken)
            #expect(created.status == .created, "\(created.body)")
            let watch = try created.decode(API.Watch.self)
            #expect(created.headers[.location] == "/v1/me/watches/\(watch.id)")
            #expect(watch.label == "Home" && watch.radiusM == 1500 && watch.placeID == nil)
            #expect(abs(watch.lat - -33.8688) < 1e-9 && abs(watch.lng - 151.2093) < 1e-9)
            let second = try await client.call(.post, "/v1/me/watches", json: ["near": "51.5,-0.12", "radius_m": 100], token: me.accessToken)
                .decode(API.Watch.self)
            #expect(second.label == nil)

            let listed = try await client.call(.get, "/v1/me/watches", token: me.accessToken).decode(API.WatchList.self).items
            #expect(listed.map(\.id) == [watch.id, second.id], "oldest first")
            #expect(try await client.call(.get, "/v1/me/watches", token: neighbour.accessToken).decode(API.WatchList.self).items.isEmpty)
            #expect(try await client.call(.get, "/v1/me/watches?limit=5", token: me.accessToken).status == .badRequest)
            #expect(try await client.call(.get, "/v1/me/watches/\(watch.id)", token: me.accessToken).decode(API.Watch.self) == watch)

            let moved = try await client.call(
                .patch, "/v1/me/watches/\(watch.id)", json: ["near": "-33.9,151.25", "radius_m": 3000], token: me.accessToken)
            #expect(moved.status == .ok, "\(moved.body)")
            let changed = try moved.decode(API.Watch.self)
            #expect(changed.radiusM == 3000 && changed.label == "Home" && abs(changed.lat - -33.9) < 1e-9 && changed.createdAt == watch.createdAt)
            let cleared = try await client.call(.patch, "/v1/me/watches/\(watch.id)", json: ["label": NSNull()], token: me.accessToken)
                .decode(API.Watch.self)
            #expect(cleared.label == nil && cleared.radiusM == 3000)
            let blank = try await client.call(.patch, "/v1/me/watches/\(watch.id)", json: ["label": " "], token: me.accessToken)
                .decode(API.Watch.self)
            #expect(blank.label == nil)

            // Someone else's, another tenant's, or no such watch: 404, and nothing changes.
            for account in [neighbour, stranger] {
                #expect(try await client.call(.get, "/v1/me/watches/\(watch.id)", token: account.accessToken).code == "not_found")
                #expect(try await client.call(.patch, "/v1/me/watches/\(watch.id)", json: ["radius_m": 200], token: account.accessToken).code == "not_found")
                #expect(try await client.call(.patch, "/v1/me/watches/\(watch.id)", json: ["near": "1,1"], token: account.accessToken).code == "not_found")
                #expect(try await client.call(.delete, "/v1/me/watches/\(watch.id)", token: account.accessToken).code == "not_found")
            }
            for path in ["/v1/me/watches/0", "/v1/me/watches/abc", "/v1/me/watches/99999999999999999999", "/v1/me/watches/%27%20OR%201=1"] {
                #expect(try await client.call(.get, path, token: me.accessToken).code == "not_found", "\(path)")
            }
            #expect(try await client.call(.get, "/v1/me/watches/\(watch.id)", token: me.accessToken).decode(API.Watch.self).radiusM == 3000)
            #expect(try await client.call(.get, "/v1/me/watches").status == .unauthorized)

            #expect(try await client.call(.delete, "/v1/me/watches/\(watch.id)", token: me.accessToken).status == .noContent)
            #expect(try await client.call(.get, "/v1/me/watches/\(watch.id)", token: me.accessToken).code == "not_found")
            #expect(try await client.call(.delete, "/v1/me/watches/\(watch.id)", token: me.accessToken).code == "not_found")
            #expect(try await client.call(.get, "/v1/me/watches", token: me.accessToken).decode(API.WatchList.self).items.map(\.id) == [second.id])
        }
    }

    @Test func badWatchesAreRefusedFieldByFieldAndNothingIsSaved() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let me = try await client.signup("strict_w", tenant: tenant)
            func post(_ json: [String: Any]) async throws -> APIResponse {
                try await client.call(.post, "/v1/me/watches", json: json, token: me.accessToken)
            }
            let refused: [(json: [String: Any], fields: [String])] = [
                ([:], ["near"]),
                (["radius_m": 500], ["near"]),
                (["near": "1,2"], ["radius_m"]),
                (["near": "1,2", "place_id": "1", "radius_m": 500], ["place_id"]),
                (["near": "1,2", "radius_m": 99], ["radius_m"]),
                (["near": "1,2", "radius_m": 50_001], ["radius_m"]),
                (["near": "1,2", "radius_m": 1500.5], ["radius_m"]),
                (["near": "1,2", "radius_m": "1500"], ["radius_m"]),
                (["near": "1,2", "radius_m": 1e300], ["radius_m"]),
                (["near": "91,0", "radius_m": 500], ["near"]),
                (["near": "0,180.5", "radius_m": 500], ["near"]),
                (["near": "Sydney", "radius_m": 500], ["near"]),
                (["near": "1,2,3", "radius_m": 500], ["near"]),
                (["near": "NaN,1", "radius_m": 500], ["near"]),
                (["near": 1, "radius_m": 500], ["near"]),
                (["near": "1,2", "radius_m": 500, "label": String(repeating: "é", count: 61)], ["label"]),
                (["near": "1,2", "radius_m": 500, "label": "a\u{7}b"], ["label"]),
                (["near": "1,2", "radius_m": 500, "label": "two\nlines"], ["label"]),
                (["near": "1,2", "radius_m": 500, "label": 5], ["label"]),
                (["near": "1,2", "radius_m": 500, "colour": "red"], ["colour"]),
                (["place_id": "123456789"], ["place_id"]),
                (["place_id": "x"], ["place_id"]),
                (["place_id": 5], ["place_id"]),
            ]
            for (json, fields) in refused {
                let response = try await post(json)
                #expect(response.code == "validation_failed" && response.errorFields == fields, "\(json): \(response.body)")
            }
            #expect(try await client.call(.post, "/v1/me/watches", raw: "[1]", token: me.accessToken).status == .badRequest)
            #expect(try await client.call(.post, "/v1/me/watches", raw: "{\"near\": ", token: me.accessToken).status == .badRequest)
            // Sixty characters (code points) are enough, emoji and all.
            let sixty = String(repeating: "🗼", count: 60)
            #expect(try await post(["near": "1,2", "radius_m": 100, "label": sixty]).decode(API.Watch.self).label == sixty)
            let kept = try await client.call(.get, "/v1/me/watches", token: me.accessToken).decode(API.WatchList.self).items
            #expect(kept.count == 1)
            let id = kept[0].id
            for json: [String: Any] in [[:], ["radius_m": 5], ["near": "x"], ["label": "a\u{0}b"], ["place_id": "1"]] {
                #expect(try await client.call(.patch, "/v1/me/watches/\(id)", json: json, token: me.accessToken).code == "validation_failed", "\(json)")
            }
            #expect(try await client.call(.get, "/v1/me/watches/\(id)", token: me.accessToken).decode(API.Watch.self) == kept[0])
        }
    }

    @Test func theRadiusBoundsAndTheLimitAreTheOperatorsAndHoldUnderConcurrentCreates() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp({
            $0.push.watchesPerUser = 3
            $0.push.watchRadiusMin = 1000
            $0.push.watchRadiusMax = 2000
        }) { client in
            let me = try await client.signup("limited_w", tenant: tenant)
            func post(_ radius: Int) async throws -> APIResponse {
                try await client.call(.post, "/v1/me/watches", json: ["near": "10,10", "radius_m": radius], token: me.accessToken)
            }
            #expect(try await post(999).errorFields == ["radius_m"])
            #expect(try await post(2001).errorFields == ["radius_m"])
            let statuses = try await withThrowingTaskGroup(of: APIResponse.self) { group in
                for _ in 0..<10 { group.addTask { try await post(1500) } }
                return try await group.reduce(into: [APIResponse]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0.status == .created }.count == 3)
            let over = statuses.filter { $0.status != .created }
            #expect(over.count == 7 && over.allSatisfy { $0.code == "too_many_watches" }, "\(over.map(\.body))")
            #expect(try await client.call(.get, "/v1/me/watches", token: me.accessToken).decode(API.WatchList.self).items.count == 3)
            // A place's watch without a radius takes 500 m, brought within the operator's bounds.
            let id = try await client.call(.get, "/v1/me/watches", token: me.accessToken).decode(API.WatchList.self).items[0].id
            #expect(try await client.call(.delete, "/v1/me/watches/\(id)", token: me.accessToken).status == .noContent)
            let place = try await client.createPlace(me, "Bondi", lat: -33.89, lng: 151.27).id
            let watch = try await client.call(.post, "/v1/me/watches", json: ["place_id": place], token: me.accessToken)
            #expect(try watch.decode(API.Watch.self).radiusM == 1000, "\(watch.body)")
        }
    }

    @Test func aPlacesWatchStaysAroundItAndOutlivesIt() async throws {
        let (tenant, other) = (try await TestEnvironment.makeTenant(), try await TestEnvironment.makeTenant())
        try await withApp { client in
            let me = try await client.signup("placewatch_w", tenant: tenant)
            let maker = try await client.signup("placemaker_w", tenant: tenant)
            let stranger = try await client.signup("strangeplace_w", tenant: other)
            let place = try await client.createPlace(maker, "Manly Wharf", lat: -33.8, lng: 151.284)
            let foreign = try await client.createPlace(stranger, "Elsewhere", lat: 1, lng: 1)
            #expect(try await client.call(.post, "/v1/me/watches", json: ["place_id": foreign.id], token: me.accessToken).errorFields == ["place_id"])
            let created = try await client.call(.post, "/v1/me/watches", json: ["place_id": place.id, "radius_m": 800], token: me.accessToken)
            let watch = try created.decode(API.Watch.self)
            #expect(watch.placeID == place.id && watch.label == nil && watch.radiusM == 800)
            #expect(abs(watch.lat - place.lat) < 1e-9 && abs(watch.lng - place.lng) < 1e-9)
            let moved = try await client.call(.patch, "/v1/me/watches/\(watch.id)", json: ["near": "1,1"], token: me.accessToken)
            #expect(moved.code == "validation_failed" && moved.errorFields == ["near"])
            #expect(try await client.call(.patch, "/v1/me/watches/\(watch.id)", json: ["radius_m": 900], token: me.accessToken).decode(API.Watch.self).radiusM == 900)
            // A place reported by the caller is gone for them: not watchable.
            let reported = try await client.createPlace(maker, "Reported spot", lat: -33.7, lng: 151.3)
            let report = try await client.call(
                .post, "/v1/reports", json: ["target": ["type": "place", "id": reported.id], "reason": "spam"], token: me.accessToken)
            #expect(report.status == .created, "\(report.body)")
            #expect(try await client.call(.post, "/v1/me/watches", json: ["place_id": reported.id], token: me.accessToken).errorFields == ["place_id"])

            #expect(try await client.call(.delete, "/v1/places/\(place.id)", token: maker.accessToken).status == .noContent)
            let orphan = try await client.call(.get, "/v1/me/watches/\(watch.id)", token: me.accessToken).decode(API.Watch.self)
            #expect(orphan.placeID == nil && orphan.label == "Manly Wharf" && orphan.radiusM == 900)
            #expect(abs(orphan.lat - place.lat) < 1e-9)
        }
    }

    @Test func quietHoursAndATimeZoneAreSetShownClearedAndRefused() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let me = try await client.signup("quiet_w", tenant: tenant)
            func patch(_ json: [String: Any]) async throws -> APIResponse {
                try await client.call(.patch, "/v1/me", json: json, token: me.accessToken)
            }
            let fresh = try await client.call(.get, "/v1/me", token: me.accessToken).decode(API.Me.self)
            #expect(fresh.timeZone == nil && fresh.quietHours == nil)
            let set = try await patch(["time_zone": "Pacific/Auckland", "quiet_hours": "22:00-07:00"])
            #expect(set.status == .ok, "\(set.body)")
            let shown = try set.decode(API.Me.self)
            #expect(shown.timeZone == "Pacific/Auckland" && shown.quietHours == "22:00-07:00")
            let refused: [(json: [String: Any], field: String)] = [
                (["time_zone": "Mars/Olympus_Mons"], "time_zone"),
                (["time_zone": "Europe/Paris'; DROP TABLE users; --"], "time_zone"),
                (["time_zone": ""], "time_zone"),
                (["time_zone": 2], "time_zone"),
                (["quiet_hours": "24:00-07:00"], "quiet_hours"),
                (["quiet_hours": "22:00-22:00"], "quiet_hours"),
                (["quiet_hours": "22:00"], "quiet_hours"),
                (["quiet_hours": "22:00-7:00"], "quiet_hours"),
                (["quiet_hours": "22:60-07:00"], "quiet_hours"),
                (["quiet_hours": "２２:00-07:00"], "quiet_hours"),
                (["quiet_hours": 22], "quiet_hours"),
            ]
            for (json, field) in refused {
                let response = try await patch(json)
                #expect(response.code == "validation_failed" && response.errorFields == [field], "\(json): \(response.body)")
            }
            #expect(try await client.call(.get, "/v1/me", token: me.accessToken).decode(API.Me.self).quietHours == "22:00-07:00")
            let cleared = try await patch(["time_zone": NSNull(), "quiet_hours": NSNull()]).decode(API.Me.self)
            #expect(cleared.timeZone == nil && cleared.quietHours == nil)
            let daytime = try await patch(["quiet_hours": "13:00-14:30"]).decode(API.Me.self)
            #expect(daytime.quietHours == "13:00-14:30" && daytime.timeZone == nil)
        }
    }

    // MARK: - Devices    // MARK: - Devices

    static let token = String(repeating: "ab12", count: 16)

    /// The device `token` of `tenant` (another suite's tenant may hold the same token).
    static func device(_ token: String, of tenant: String) async throws -> (user: Int64, session: Int64, environment: String, appID: String)? {
        try await TestEnvironment.withOwnerPool { pool in
            try await pool.query("""
                SELECT user_id, session_id, environment, app_id FROM devices
                WHERE token = \(token) AND tenant_id = (SELECT id FROM tenants WHERE slug = \(tenant))
                """).first
                .map { try $0.decode((Int64, Int64, String, String).self) }
        }
    }

    @Test func aDeviceIsRegisteredForItsSessionMovesToTheNewestAccountAndIsRemovedByItsOwnerOnly() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let first = try await client.signup("phone_owner_d", tenant: tenant)
            let second = try await client.signup("phone_buyer_d", tenant: tenant)
            let body: [String: Any] = ["platform": "apns", "environment": "sandbox", "app_id": "com.example.landmarks"]
            let token = Self.token + "FF"
            let put = try await client.call(.put, "/v1/me/devices/\(token)", json: body, token: first.accessToken)
            #expect(put.status == .noContent, "\(put.body)")
            let stored = try #require(try await Self.device(token.lowercased(), of: tenant))
            #expect(stored.user == Int64(first.userID)! && stored.environment == "sandbox" && stored.appID == "com.example.landmarks")
            let session = try await TestEnvironment.ownerScalar("SELECT id FROM sessions WHERE user_id = \(Int64(first.userID)!)", as: Int64.self)
            #expect(stored.session == session)
            // Again (every launch), now for production: one device, changed.
            var production = body
            production["environment"] = "production"
            #expect(try await client.call(.put, "/v1/me/devices/\(token.lowercased())", json: production, token: first.accessToken).status == .noContent)
            #expect(try await Self.device(token.lowercased(), of: tenant)?.environment == "production")
            #expect(try await TestEnvironment.ownerScalar("SELECT count(*)::int FROM devices WHERE token = \(token.lowercased()) AND tenant_id = (SELECT id FROM tenants WHERE slug = \(tenant))", as: Int.self) == 1)
            // Someone else cannot remove it; registering it moves it to them.
            #expect(try await client.call(.delete, "/v1/me/devices/\(token)", token: second.accessToken).status == .noContent)
            #expect(try await Self.device(token.lowercased(), of: tenant)?.user == Int64(first.userID)!)
            #expect(try await client.call(.put, "/v1/me/devices/\(token)", json: body, token: second.accessToken).status == .noContent)
            #expect(try await Self.device(token.lowercased(), of: tenant)?.user == Int64(second.userID)!)
            #expect(try await client.call(.delete, "/v1/me/devices/\(token)", token: first.accessToken).status == .noContent)
            #expect(try await Self.device(token.lowercased(), of: tenant) != nil)
            #expect(try await client.call(.delete, "/v1/me/devices/\(token)", token: second.accessToken).status == .noContent)
            #expect(try await Self.device(token.lowercased(), of: tenant) == nil)
            #expect(try await client.call(.delete, "/v1/me/devices/\(token)", token: second.accessToken).status == .noContent, "idempotent")
            #expect(try await client.call(.put, "/v1/me/devices/\(token)", json: body).status == .unauthorized)
        }
    }

    @Test func signingOutWithTheDeviceRemovesIt() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let me = try await client.signup("leaving_d", tenant: tenant)
            let other = try await client.signup("staying_d", tenant: tenant)
            let body: [String: Any] = ["platform": "apns", "environment": "production", "app_id": "com.example.landmarks"]
            let (mine, theirs) = (String(repeating: "a1", count: 32), String(repeating: "b2", count: 32))
            #expect(try await client.call(.put, "/v1/me/devices/\(mine)", json: body, token: me.accessToken).status == .noContent)
            #expect(try await client.call(.put, "/v1/me/devices/\(theirs)", json: body, token: other.accessToken).status == .noContent)
            // A bad token is refused before anything changes: the session goes on.
            #expect(try await client.call(.post, "/v1/auth/logout?device=xyz", token: me.accessToken).code == "malformed_request")
            #expect(try await client.call(.get, "/v1/me", token: me.accessToken).status == .ok)
            // Someone else's device stays theirs.
            #expect(try await client.call(.post, "/v1/auth/logout?device=\(theirs)", token: me.accessToken).status == .noContent)
            #expect(try await Self.device(theirs, of: tenant) != nil)
            #expect(try await Self.device(mine, of: tenant) != nil, "only the one named")
            let again = try await client.call(.post, "/v1/auth/login", json: ["username": "leaving_d", "password": me.password], tenant: tenant)
            let token = try again.decode(API.TokenResponse.self).accessToken
            #expect(try await client.call(.post, "/v1/auth/logout?device=\(mine.uppercased())", token: token).status == .noContent)
            #expect(try await Self.device(mine, of: tenant) == nil)
            #expect(try await client.call(.get, "/v1/me", token: token).status == .unauthorized)
        }
    }

    @Test func badDevicesAreRefusedAndAUsersOldestDeviceMakesRoom() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp({ $0.push.devicesPerUser = 2 }) { client in
            let me = try await client.signup("many_phones_d", tenant: tenant)
            let body: [String: Any] = ["platform": "apns", "environment": "production", "app_id": "com.example.landmarks"]
            let good = String(repeating: "0", count: 64)
            for bad in [String(repeating: "0", count: 63), String(repeating: "0", count: 201), String(repeating: "g", count: 64), "%27%20OR%201=1"] {
                #expect(try await client.call(.put, "/v1/me/devices/\(bad)", json: body, token: me.accessToken).errorFields == ["device_token"], "\(bad)")
                #expect(try await client.call(.delete, "/v1/me/devices/\(bad)", token: me.accessToken).errorFields == ["device_token"], "\(bad)")
            }
            let refused: [(json: [String: Any], fields: [String])] = [
                (["environment": "production", "app_id": "com.example.a"], ["platform"]),
                (["platform": "fcm", "environment": "production", "app_id": "com.example.a"], ["platform"]),
                (["platform": "apns", "environment": "staging", "app_id": "com.example.a"], ["environment"]),
                (["platform": "apns", "environment": "production", "app_id": "landmarks"], ["app_id"]),
                (["platform": "apns", "environment": "production", "app_id": "com..example"], ["app_id"]),
                (["platform": "apns", "environment": "production", "app_id": "com.exam ple"], ["app_id"]),
                (["platform": "apns", "environment": "production", "app_id": "com.exämple.a"], ["app_id"]),
                (["platform": "apns", "environment": "production", "app_id": "a." + String(repeating: "b", count: 154)], ["app_id"]),
                (["platform": "apns", "environment": "production"], ["app_id"]),
                (["platform": "apns", "environment": "production", "app_id": "com.example.a", "user_id": "1"], ["user_id"]),
            ]
            for (json, fields) in refused {
                let response = try await client.call(.put, "/v1/me/devices/\(good)", json: json, token: me.accessToken)
                #expect(response.code == "validation_failed" && response.errorFields == fields, "\(json): \(response.body)")
            }
            #expect(try await Self.device(good, of: tenant) == nil)

            let tokens = (1...3).map { String(repeating: "\($0)", count: 64) }
            for token in tokens {
                #expect(try await client.call(.put, "/v1/me/devices/\(token)", json: body, token: me.accessToken).status == .noContent)
            }
            #expect(try await Self.device(tokens[0], of: tenant) == nil, "the one registered longest ago made room")
            #expect(try await Self.device(tokens[1], of: tenant) != nil)
            #expect(try await Self.device(tokens[2], of: tenant) != nil)
            // Registering again counts as the newest: the other goes next.
            #expect(try await client.call(.put, "/v1/me/devices/\(tokens[1])", json: body, token: me.accessToken).status == .noContent)
            #expect(try await client.call(.put, "/v1/me/devices/\(tokens[0])", json: body, token: me.accessToken).status == .noContent)
            #expect(try await Self.device(tokens[2], of: tenant) == nil)
            #expect(try await Self.device(tokens[1], of: tenant) != nil)
            #expect(try await Self.device(tokens[0], of: tenant) != nil)
        }
    }
}
