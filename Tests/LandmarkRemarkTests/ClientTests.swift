import Foundation
import HummingbirdTesting
import OpenAPIAsyncHTTPClient
import IdentityProviderFake
import LandmarkRemark
import LandmarkRemarkClient
import Postgres
import Testing

/// The Swift client against the real service on a real socket: what an app does, and what a
/// bad network does to it.
@Suite(.timeLimit(.minutes(10))) struct ClientTests {
    @Test func theWholeStoryOfAnApp() async throws {
        try await IdentityTest.withProvider { idp in
            let tenant = try await TestEnvironment.makeTenant()
            try await IdentityTest.enable(tenant: tenant, provider: idp)
            try await withLiveApp(IdentityTest.trusting(idp)) { _, port in
                let remark = ClientTest.client(port: port, tenant: tenant)
                var states = await remark.authState().makeAsyncIterator()
                #expect(await states.next() == .signedOut)

                let alice = try await remark.signUp(username: "alice", password: "correct horse battery")
                #expect(await states.next() == .signedIn(alice))
                let here = Coordinate(latitude: -33.8568, longitude: 151.2153)

                // Another user, live: alice follows events while bob writes.
                let bob = ClientTest.client(port: port, tenant: tenant)
                try await bob.signUp(username: "bob", password: "another fine passphrase")
                // A position of this tenant's own (its first event, a place far away): on Citus the
                // newest of all events may be another worker's, which would reset the stream.
                _ = try await bob.createPlace("Far away", at: Coordinate(latitude: 10, longitude: 10))
                let events = remark.events(position: InMemoryEventPositionStore(try await ClientTest.currentEventID(tenant: tenant)))
                var eventIterator = events.makeAsyncIterator()

                let saved = try await remark.createNote("Best view of the bridge from these steps", at: here)
                #expect(saved.note.isMine && saved.etag != nil)
                let bobs = try await bob.createNote("Coffee by the ferry wharf", at: Coordinate(latitude: -33.8610, longitude: 151.2108))
                let far = try await bob.createNote("Coffee in Melbourne", at: Coordinate(latitude: -37.8136, longitude: 144.9631))

                // Nearest 50 within 10 km, each with its distance.
                let nearby = try await remark.notesPage(NoteQuery(near: here, radiusMeters: 10_000, pageSize: 50))
                #expect(nearby.items.map(\.id) == [saved.note.id, bobs.note.id])
                #expect(nearby.items.first?.distanceMeters == 0)
                #expect((nearby.items.last?.distanceMeters ?? 0) > 500)
                // Search by text, by username, and mine or others'.
                var found: [String] = []
                for try await note in remark.notes(NoteQuery(near: here, text: "coffee")) { found.append(note.id) }
                #expect(found == [bobs.note.id, far.note.id])
                let byName = try await remark.notesPage(NoteQuery(text: "bob", searchIn: .username))
                #expect(Set(byName.items.map(\.id)) == [bobs.note.id, far.note.id])
                #expect(try await remark.notesPage(NoteQuery(author: .me)).items.map(\.id) == [saved.note.id])
                var bobsNotes = 0
                for try await _ in remark.notes(by: "bob") { bobsNotes += 1 }
                #expect(bobsNotes == 2)
                let clusters = try await remark.clusters(in: BoundingBox(west: 140, south: -40, east: 155, north: -30), zoom: 3)
                #expect(clusters.map(\.count).reduce(0, +) == 3)

                // Places.
                let place = try await remark.createPlace("Harbour steps", at: here)
                var placeNames: [String] = []
                for try await nearbyPlace in remark.places(PlaceQuery(near: here, radiusMeters: 1000)) { placeNames.append(nearbyPlace.name) }
                #expect(placeNames == ["Harbour steps"])
                #expect(try await remark.renamePlace(id: place.id, to: "Harbour stairs").name == "Harbour stairs")

                // Events: bob's notes arrived, alice's own too.
                var created: [String] = []
                while created.count < 3, let event = try await eventIterator.next() {
                    if case .noteCreated(let note) = event { created.append(note.id) }
                }
                #expect(created == [saved.note.id, bobs.note.id, far.note.id])

                let me = try await remark.me()
                #expect(me.username == "alice" && me.noteCount == 1 && me.placeCount == 1 && me.hasPassword)
                #expect(try await remark.profile(username: "bob").noteCount == 2)

                // An ID token signs in a third user.
                let carol = ClientTest.client(port: port, tenant: tenant)
                let signedIn = try await carol.signIn(idToken: try await IdentityTest.token(idp, subject: "carol"), provider: "oidc:test")
                #expect(signedIn.created)
                #expect(try await carol.me().identities.map(\.provider) == ["oidc:test"])

                await remark.signOut()
                #expect(await states.next() == .signedOut)
                do {
                    _ = try await remark.me()
                    Issue.record("a call after sign-out went through")
                } catch LandmarkRemarkError.signedOut {
                }
            }
        }
    }

    /// Twenty calls find the access token expired at once: one refresh, and all succeed.
    @Test func concurrentCallsWithAnExpiredTokenRefreshOnce() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp { _, port in
            let remark = ClientTest.client(port: port, tenant: tenant)
            try await remark.signUp(username: "dora", password: "correct horse battery")
            try await ClientTest.expireAccessTokens(of: "dora", tenant: tenant)
            let names = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<20 { group.addTask { try await remark.me().username } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(names == Array(repeating: "dora", count: 20))
            #expect(try await ClientTest.refreshTokenCount(of: "dora", tenant: tenant) == 2)
        }
    }

    /// A refresh under way when the user signs out: its tokens are dropped, the user stays out.
    @Test func aRefreshRacingASignOutLeavesTheClientSignedOut() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp { _, port in
            let held = HeldTransport(holding: "refreshTokens")
            let store = InMemoryTokenStore()
            let remark = LandmarkRemark(
                baseURL: URL(string: "http://127.0.0.1:\(port)")!, tenant: tenant, tokenStore: store, transport: held)
            try await remark.signUp(username: "erin", password: "correct horse battery")
            try await ClientTest.expireAccessTokens(of: "erin", tenant: tenant)
            let call = Task { try await remark.me() }
            await held.gate.waitForArrival()
            await remark.signOut()
            await held.gate.open()
            let outcome = await call.result
            guard case .failure(LandmarkRemarkError.signedOut) = outcome else {
                Issue.record("the call should end signed out, not \(outcome)")
                return
            }
            #expect(await remark.currentAuthState == .signedOut)
            #expect(try await store.load() == nil)
            // The refresh did happen at the service; the client threw its result away.
            #expect(try await ClientTest.refreshTokenCount(of: "erin", tenant: tenant) == 2)
        }
    }

    /// The service saved the note and answered, but the answer was lost: the client sends the
    /// same request again with the same Idempotency-Key and gets the same note, saved once.
    @Test func aLostAnswerToCreatingANoteIsRetriedAndSavesItOnce() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp { _, port in
            let proxy = try TCPProxy(upstreamPort: port)
            defer { proxy.close() }
            let remark = ClientTest.client(port: proxy.port, tenant: tenant)
            try await remark.signUp(username: "fay", password: "correct horse battery")
            proxy.faults.withLock { $0.dropAnswerTo = "POST /v1/notes " }
            let note = try await remark.createNote("Saved once", at: Coordinate(latitude: 48.8584, longitude: 2.2945))
            #expect(proxy.faults.withLock { $0.answersDropped } == 1)
            #expect(note.note.body == "Saved once")
            #expect(try await ClientTest.noteCount(of: "fay", tenant: tenant) == 1)
        }
    }

    /// The stream's connection is cut three times while 100 notes are written: all 100
    /// arrive, once each, in order.
    @Test func anEventStreamCutMidStreamDeliversEverythingOnceInOrder() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp({ $0.events.heartbeat = .seconds(1) }) { _, port in
            let proxy = try TCPProxy(upstreamPort: port)
            defer { proxy.close() }
            proxy.faults.withLock {
                $0.cutStreamsAfterEvents = 10
                $0.streamCutsLeft = 3
            }
            let reader = ClientTest.client(port: proxy.port, tenant: tenant)
            try await reader.signUp(username: "gus", password: "correct horse battery")
            let writer = ClientTest.client(port: port, tenant: tenant)
            try await writer.signUp(username: "hal", password: "correct horse battery")
            // Kept in UserDefaults, as an app keeps it across launches.
            let defaults = try #require(UserDefaults(suiteName: "landmark-remark-tests-\(UUID().uuidString)"))
            let position = UserDefaultsEventPositionStore(defaults: defaults)
            // A position of this tenant's own (see ClientTest.currentEventID(tenant:)).
            _ = try await writer.createNote("before", at: Coordinate(latitude: 51.5, longitude: -0.12))
            await position.save(try await ClientTest.currentEventID(tenant: tenant))
            var events = reader.events(position: position).makeAsyncIterator()
            let writing = Task {
                for index in 0..<100 {
                    try await writer.createNote("note \(index)", at: Coordinate(latitude: 51.5, longitude: -0.12))
                }
            }
            var bodies: [String] = []
            while bodies.count < 100, let event = try await events.next() {
                if case .noteCreated(let note) = event { bodies.append(note.body) }
            }
            try await writing.value
            #expect(bodies == (0..<100).map { "note \($0)" })
            #expect(proxy.faults.withLock { $0.streamsCut } == 3)
            // The position advanced at least to the tenant's last event: the 100th note's.
            let last = try await TestEnvironment.ownerScalar(
                "SELECT max(e.id) FROM events e JOIN tenants t ON t.id = e.tenant_id WHERE t.slug = \(tenant)", as: Int64.self)
            #expect((await position.load().flatMap { Int64($0) } ?? 0) >= last)
        }
    }

    @Test func aStaleEditIsAConflictCarryingTheCurrentNote() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp { _, port in
            let phone = ClientTest.client(port: port, tenant: tenant)
            try await phone.signUp(username: "ivy", password: "correct horse battery")
            let original = try await phone.createNote("first", at: Coordinate(latitude: 40.7, longitude: -74.0))
            let edited = try await phone.updateNote(id: original.note.id, body: "second", ifMatch: original.etag)
            #expect(edited.etag != original.etag)
            do {
                try await phone.updateNote(id: original.note.id, body: "third", ifMatch: original.etag)
                Issue.record("a stale edit went through")
            } catch LandmarkRemarkError.conflict(let current) {
                #expect(current?.note.body == "second" && current?.etag == edited.etag)
            }
            do {
                try await phone.deleteNote(id: original.note.id, ifMatch: original.etag)
                Issue.record("a stale delete went through")
            } catch LandmarkRemarkError.conflict(let current) {
                #expect(current?.note.body == "second")
            }
            try await phone.deleteNote(id: original.note.id, ifMatch: edited.etag)
        }
    }

    /// Every code of the API reference's error table is a case of `ProblemCode`, and answers
    /// become typed problems with their details.
    @Test func everyProblemCodeMapsToItsCase() async throws {
        let reference = try String(contentsOf: TestEnvironment.repositoryRoot.appendingPathComponent("docs/api.md"), encoding: .utf8)
        let table = reference.components(separatedBy: "\n").filter { $0.hasPrefix("| 4") || $0.hasPrefix("| 5") }
        let codes = table.flatMap { line in
            line.split(separator: "|")[1...].first { $0.contains("`") }.map { cell in
                cell.split(separator: "`").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
            } ?? []
        }
        #expect(codes.count >= 26)
        for code in codes {
            let mapped = ProblemCode(rawValue: code)
            if case .other = mapped { Issue.record("\(code) has no case") }
            #expect(mapped.rawValue == code)
        }
        #expect(Set(codes) == Set(ProblemCode.allCases.map(\.rawValue)))

        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp({ $0.identity.guestsPerAddressPerHour = 1 }) { _, port in
            let remark = ClientTest.client(port: port, tenant: tenant)
            try await remark.signUp(username: "joe", password: "correct horse battery")
            do {
                try await remark.createNote("", at: Coordinate(latitude: 91, longitude: 0))
                Issue.record("an empty note at latitude 91 was saved")
            } catch LandmarkRemarkError.api(let problem) {
                #expect(problem.code == .validationFailed && problem.status == 422)
                #expect(Set(problem.fieldErrors.map(\.field)) == ["body", "lat"])
            }
            do {
                try await remark.signUp(username: "joe", password: "correct horse battery")
                Issue.record("a taken username was accepted")
            } catch LandmarkRemarkError.api(let problem) {
                #expect(problem.code == .usernameTaken)
            }
            // The limit counts in the clock's hours: both guests in one of them.
            let (_, second) = try await TestEnvironment.inOneClockHour { tenant in
                try await ClientTest.client(port: port, tenant: tenant).signInAsGuest()
                do {
                    try await ClientTest.client(port: port, tenant: tenant).signInAsGuest()
                    return Result<Void, any Error>.success(())
                } catch { return .failure(error) }
            }
            switch second {
            case .success: Issue.record("a second guest from one address was allowed")
            case .failure(LandmarkRemarkError.api(let problem)): #expect(problem.code == .rateLimited && (problem.retryAfter ?? 0) > 0)
            case .failure(let error): Issue.record("\(error)")
            }
            // No answer at all is a network error, not an API one.
            // (AsyncHTTPClient retries a refused connection until the request's deadline: a short one.)
            let nowhere = LandmarkRemark(
                baseURL: URL(string: "http://127.0.0.1:9")!, tenant: tenant,
                transport: AsyncHTTPClientTransport(configuration: .init(timeout: .seconds(1))))
            do {
                try await nowhere.signInAsGuest()
                Issue.record("a closed port answered")
            } catch LandmarkRemarkError.network {
            }
        }
    }

    /// Reporting and blocking as an app does it (App Store Review Guideline 1.2).
    @Test func devicesWatchesAndQuietHoursThroughTheClient() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp { _, port in
            let app = ClientTest.client(port: port, tenant: tenant)
            try await app.signUp(username: "watcher", password: "correct horse battery")
            let token = Data((0..<32).map { UInt8($0 * 7 % 256) })
            #expect(LandmarkRemark.hex(deviceToken: token).count == 64)
            try await app.registerDevice(token: token, appID: "com.example.landmarks", environment: .sandbox)
            // The watcher's devices with the token, in `environment` if given.
            let devices = { (environment: String?) in
                try await TestEnvironment.ownerScalar(
                    """
                    SELECT count(*)::int FROM devices d JOIN users u ON u.tenant_id = d.tenant_id AND u.id = d.user_id
                    WHERE u.username = 'watcher' AND d.token = \(LandmarkRemark.hex(deviceToken: token))
                      AND d.environment = coalesce(\(environment), d.environment)
                    """, as: Int.self)
            }
            #expect(try await devices("sandbox") == 1)

            let home = try await app.watchArea(around: Coordinate(latitude: -33.8568, longitude: 151.2153), radiusMeters: 800, label: "Home")
            #expect(home.label == "Home" && home.radiusMeters == 800 && abs(home.center.latitude + 33.8568) < 1e-6)
            let place = try await app.createPlace("The pier", at: Coordinate(latitude: -33.86, longitude: 151.21))
            let pier = try await app.watchPlace(id: place.id)
            #expect(pier.placeID == place.id && pier.radiusMeters == 500 && pier.label == nil)
            let wider = try await app.updateWatch(id: home.id, radiusMeters: 2000, label: "")
            #expect(wider.radiusMeters == 2000 && wider.label == nil)
            #expect(try await app.watches().map(\.id) == [home.id, pier.id])
            #expect(try await app.watch(id: pier.id) == pier)
            do {
                _ = try await app.watchArea(around: Coordinate(latitude: 0, longitude: 0), radiusMeters: 10)
                Issue.record("a 10 m watch was taken")
            } catch LandmarkRemarkError.api(let problem) {
                #expect(problem.code == .validationFailed)
            }
            try await app.deleteWatch(id: pier.id)
            #expect(try await app.watches().map(\.id) == [home.id])

            let me = try await app.setQuietHours(from: "22:00", to: "07:00", in: TimeZone(identifier: "Pacific/Auckland")!)
            #expect(me.timeZone == "Pacific/Auckland" && me.quietHours == "22:00-07:00")

            try await app.unregisterDevice(token: token)
            #expect(try await devices(nil) == 0)
            // Registered again, then signing out with it removes it.
            try await app.registerDevice(token: token, appID: "com.example.landmarks")
            #expect(try await devices("production") == 1)
            await app.signOut(device: token)
            #expect(try await devices(nil) == 0)
        }
    }

    @Test func reportsAndBlocks() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp { _, port in
            let alice = ClientTest.client(port: port, tenant: tenant)
            // The terms, before signing in; then accepted.
            try await TestEnvironment.withOwnerPool {
                try await $0.query("SELECT 1 FROM admin.set_tenant_setting(\(tenant), 'terms_version', '2026-11')")
                try await $0.query("SELECT 1 FROM admin.set_tenant_setting(\(tenant), 'terms_required', 'true')")
            }
            let info = try await alice.tenantInfo()
            #expect(info.slug == tenant && info.termsRequired && info.termsVersion == "2026-11")
            try await alice.signUp(username: "alice", password: "correct horse battery")
            #expect(try await alice.acceptTerms(version: "2026-11").termsVersion == "2026-11")
            let bob = ClientTest.client(port: port, tenant: tenant)
            try await bob.signUp(username: "bob", password: "another fine passphrase")
            let here = Coordinate(latitude: -33.8568, longitude: 151.2153)
            do {
                try await bob.createNote("too soon", at: here)
                Issue.record("bob wrote before accepting the terms")
            } catch LandmarkRemarkError.api(let problem) {
                #expect(problem.code == .termsNotAccepted)
            }
            try await bob.acceptTerms(version: info.termsVersion ?? "")
            let rude = try await bob.createNote("something rude", at: here).note
            let kind = try await bob.createNote("something kind", at: here).note

            let report = try await alice.report(.note(id: rude.id), reason: .harassment, detail: "aimed at me")
            #expect(report.target == .note(id: rude.id) && report.state == .open && report.reason == .harassment)
            #expect(try await alice.report(.note(id: rude.id), reason: .spam) == report)
            #expect(try await alice.notesPage(NoteQuery(near: here)).items.map(\.id) == [kind.id])
            var mine: [Report] = []
            for try await filed in alice.myReports() { mine.append(filed) }
            #expect(mine == [report])
            do {
                try await bob.report(.user(id: rude.author.id), reason: .other)
                Issue.record("bob reported himself")
            } catch LandmarkRemarkError.api(let problem) {
                #expect(problem.code == .cannotReportOwnContent)
            }

            try await alice.block(username: "bob")
            var blocked: [Author] = []
            for try await author in alice.blocks() { blocked.append(author) }
            #expect(blocked.map(\.username) == ["bob"])
            #expect(try await alice.notesPage(NoteQuery(near: here)).items.isEmpty)
            #expect(try await bob.notesPage(NoteQuery(author: .others)).items.isEmpty)
            do {
                _ = try await alice.profile(username: "bob")
                Issue.record("a blocked user's profile showed")
            } catch LandmarkRemarkError.api(let problem) {
                #expect(problem.code == .notFound)
            }
            do {
                try await alice.block(username: "alice")
                Issue.record("alice blocked herself")
            } catch LandmarkRemarkError.api(let problem) {
                #expect(problem.code == .cannotBlockSelf)
            }
            try await alice.unblock(username: "bob")
            #expect(try await alice.profile(username: "bob").username == "bob")
            #expect(try await alice.notesPage(NoteQuery(near: here)).items.map(\.id) == [kind.id])

            // A moderator's queue, decision and log.
            let carol = ClientTest.client(port: port, tenant: tenant)
            try await carol.signUp(username: "carol", password: "a moderator's passphrase")
            #expect(try await TestEnvironment.ownerScalar("SELECT admin.set_moderator(\(tenant), 'carol', true)", as: Bool.self))
            var queue: [ModerationItem] = []
            for try await item in carol.moderationQueue() { queue.append(item) }
            #expect(queue.map(\.target) == [.note(id: rude.id)])
            #expect(queue.first?.content == "something rude" && queue.first?.reasons == [.harassment])
            let removed = try await carol.decide(.note(id: rude.id), .remove, note: "rude")
            #expect(removed.isDecision && removed.action == "remove" && removed.moderator?.username == "carol")
            var log: [ModerationLogEntry] = []
            for try await entry in carol.moderationLog() { log.append(entry) }
            #expect(log.map(\.isDecision) == [true, false])
            var decided: [Report] = []
            for try await filed in alice.myReports() { decided.append(filed) }
            #expect(decided.map(\.state) == [.actioned])
        }
    }

    @Test func pagingThroughAThousandNotesYieldsEachOnce() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp { _, port in
            let remark = ClientTest.client(port: port, tenant: tenant)
            try await remark.signUp(username: "kim", password: "correct horse battery")
            try await TestEnvironment.withOwnerPool { pool in
                try await pool.query("""
                    INSERT INTO notes (tenant_id, user_id, body, location)
                    SELECT u.tenant_id, u.id, 'note ' || i,
                           ST_SetSRID(ST_MakePoint(-0.12 + (i % 40) * 0.001, 51.5 + (i / 40) * 0.001), 4326)::geography
                    FROM users u JOIN tenants t ON t.id = u.tenant_id, generate_series(1, 1000) AS i
                    WHERE t.slug = \(tenant) AND u.username = 'kim'
                    """)
            }
            for query in [NoteQuery(author: .me, pageSize: 37), NoteQuery(near: Coordinate(latitude: 51.51, longitude: -0.1), pageSize: 200)] {
                var seen: [String] = []
                var distances: [Double] = []
                for try await note in remark.notes(query) {
                    seen.append(note.id)
                    if let distance = note.distanceMeters { distances.append(distance) }
                }
                #expect(seen.count == 1000 && Set(seen).count == 1000)
                #expect(distances == distances.sorted())
            }
        }
    }

    @Test func boundingBoxesFromMapRegionsWrapTheAntimeridian() async throws {
        let pacific = BoundingBox(center: Coordinate(latitude: -17, longitude: 178), latitudeDelta: 10, longitudeDelta: 10)
        #expect(pacific.west == 173 && pacific.east == -177 && pacific.crossesAntimeridian)
        let world = BoundingBox(center: Coordinate(latitude: 0, longitude: 0), latitudeDelta: 500, longitudeDelta: 400)
        #expect(world == BoundingBox(west: -180, south: -90, east: 180, north: 90))

        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp { _, port in
            let remark = ClientTest.client(port: port, tenant: tenant)
            try await remark.signUp(username: "lee", password: "correct horse battery")
            let fiji = try await remark.createNote("Fiji", at: Coordinate(latitude: -17.7, longitude: 178.4))
            let samoa = try await remark.createNote("Samoa, across the line", at: Coordinate(latitude: -13.8, longitude: -172.1))
            _ = try await remark.createNote("Sydney, outside", at: Coordinate(latitude: -33.9, longitude: 151.2))
            let inView = try await remark.notesPage(NoteQuery(bbox: BoundingBox(center: Coordinate(latitude: -15, longitude: 179), latitudeDelta: 10, longitudeDelta: 20)))
            #expect(Set(inView.items.map(\.id)) == [fiji.note.id, samoa.note.id])
        }
    }

    /// The service ended the session (an operator, a reused refresh token): the next call
    /// finds the refresh refused, and the client is signed out.
    @Test func aSessionEndedByTheServiceSignsTheClientOut() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp { _, port in
            let store = InMemoryTokenStore()
            let remark = LandmarkRemark(baseURL: URL(string: "http://127.0.0.1:\(port)")!, tenant: tenant, tokenStore: store)
            try await remark.signUp(username: "max", password: "correct horse battery")
            var states = await remark.authState().makeAsyncIterator()
            #expect(await states.next() != .signedOut)
            try await TestEnvironment.withOwnerPool { try await $0.query("SELECT admin.end_user_sessions(\(tenant), 'max')") }
            do {
                _ = try await remark.me()
                Issue.record("an ended session still answered")
            } catch LandmarkRemarkError.signedOut {
            }
            #expect(await states.next() == .signedOut)
            #expect(try await store.load() == nil)
        }
    }

    /// A guest keeps its notes when it sets a password; a guest deletes itself without
    /// confirmation, a full account with it.
    @Test func guestsUpgradeAndAccountsAreDeleted() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp { _, port in
            let remark = ClientTest.client(port: port, tenant: tenant)
            let guest = try await remark.signInAsGuest()
            #expect(try await remark.me().isGuest)
            try await remark.createNote("kept", at: Coordinate(latitude: 1, longitude: 1))
            let upgraded = try await remark.setPassword("no longer a guest 7", confirmedBy: .none)
            #expect(!upgraded.isGuest && upgraded.hasPassword && upgraded.noteCount == 1)
            try await remark.updateEmail("guest@example.org")
            do {
                try await remark.deleteAccount(confirmedBy: .password("wrong one entirely"))
                Issue.record("a wrong password deleted the account")
            } catch LandmarkRemarkError.api(let problem) {
                #expect(problem.code == .invalidCredentials)
            }
            try await remark.deleteAccount(confirmedBy: .password("no longer a guest 7"))
            #expect(await remark.currentAuthState == .signedOut)
            let again = ClientTest.client(port: port, tenant: tenant)
            await #expect(throws: LandmarkRemarkError.self) {
                try await again.logIn(username: guest.username, password: "no longer a guest 7")
            }
        }
    }

    /// Resuming after more than the service will replay: the stream says `reset` (refetch),
    /// then goes on live.
    @Test func aResumeTooFarBackSurfacesAsReset() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp({ $0.events.replayMax = 100 }) { _, port in
            let remark = ClientTest.client(port: port, tenant: tenant)
            try await remark.signUp(username: "ned", password: "correct horse battery")
            // Positions of this tenant's own: on Citus the newest id of all the events may be in
            // another worker's range, which resets the probe below past the marker.
            _ = try await remark.createNote("seen", at: Coordinate(latitude: 48.85, longitude: 2.35))
            let before = try await ClientTest.currentEventID(tenant: tenant)
            try await TestEnvironment.withOwnerPool { pool in
                try await pool.query("""
                    INSERT INTO notes (tenant_id, user_id, body, location)
                    SELECT u.tenant_id, u.id, 'missed ' || i, ST_SetSRID(ST_MakePoint(2.35, 48.85), 4326)::geography
                    FROM users u JOIN tenants t ON t.id = u.tenant_id, generate_series(1, 150) AS i
                    WHERE t.slug = \(tenant) AND u.username = 'ned'
                    """)
            }
            // A stream resumes against the service's horizon as it was when it connected: wait
            // until a live stream has seen a note written after the batch, so the horizon is past it.
            var probe = remark.events(position: InMemoryEventPositionStore(try await ClientTest.currentEventID(tenant: tenant))).makeAsyncIterator()
            let marker = try await remark.createNote("marker", at: Coordinate(latitude: 48.85, longitude: 2.35))
            while let event = try await probe.next() {
                if case .noteCreated(let note) = event, note.id == marker.note.id { break }
            }
            var events = remark.events(position: InMemoryEventPositionStore(before)).makeAsyncIterator()
            guard case .reset = try await events.next() else {
                Issue.record("the first event should be a reset, not \(String(describing: try? await events.next()))")
                return
            }
            let live = try await remark.createNote("after the reset", at: Coordinate(latitude: 48.85, longitude: 2.35))
            while let event = try await events.next() {
                if case .noteCreated(let note) = event {
                    #expect(note.id == live.note.id)
                    break
                }
            }
        }
    }
}

/// The client's calls for verified emails, password reset and the user's data, against the
/// service on a real socket and a real SMTP server.
@Suite(.timeLimit(.minutes(10))) struct ClientRecoveryTests {
    @Test func verifyResetAndExportThroughTheClient() async throws {
        let rig = try await MailTestRig(appSender: true)
        try await withLiveApp(rig.configure) { _, port in
            let remark = ClientTest.client(port: port, tenant: rig.tenant)
            #expect(try await remark.tenantInfo().passwordResetAvailable)
            try await remark.signUp(username: "clara", password: "correct horse battery", email: "clara@example.test")
            let first = try #require(try await rig.server.waitForMessages(to: "clara@example.test").first)
            #expect(try await remark.verifyEmail(code: try MailTestRig.code(in: first)) == "clara@example.test")
            #expect(try await remark.me().isEmailVerified)

            // A reset by the link, as a universal link would hand it to the app.
            let other = ClientTest.client(port: port, tenant: rig.tenant)
            try await other.requestPasswordReset(login: "clara")
            let mail = try await rig.server.waitForMessages(to: "clara@example.test", count: 2)[1]
            let link = try #require(mail.text.firstMatch(of: /https:\/\/\S+#t=\S+/).map { URL(string: String($0.output))! })
            let token = try #require(LandmarkRemark.linkToken(from: link))
            let user = try await other.resetPassword(linkToken: token, newPassword: "a new horse battery")
            #expect(user.username == "clara")
            // The first client's session ended with the reset.
            await #expect(throws: (any Error).self) { try await remark.me() }
            let export = try JSONSerialization.jsonObject(with: try await other.exportData()) as? [String: Any]
            #expect((export?["account"] as? [String: Any])?["username"] as? String == "clara")
        }
    }
}
