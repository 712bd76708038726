import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import LandmarkRemark
import Postgres
import Testing

/// `Idempotency-Key` on `POST /v1/notes`.
@Suite(.timeLimit(.minutes(10))) struct NotesIdempotencyTests {
    static let key = HTTPField.Name("Idempotency-Key")!

    func post(_ client: some TestClientProtocol, _ json: [String: Any], key: String, as account: Account) async throws -> APIResponse {
        try await client.call(.post, "/v1/notes", json: json, token: account.accessToken, headers: [Self.key: key])
    }

    @Test func aRetryGetsTheFirstResponseAndCreatesNothing() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            let body: [String: Any] = ["body": "only once", "lat": 1.5, "lng": 2.5]
            let first = try await post(client, body, key: "retry-1", as: alice)
            #expect(first.status == .created)
            for _ in 0..<3 {
                let again = try await post(client, body, key: "retry-1", as: alice)
                #expect(again.status == .created)
                #expect(again.body == first.body)
                #expect(again.headers[.location] == first.headers[.location])
                #expect(again.headers[.eTag] == first.headers[.eTag])
                #expect(again.headers[HTTPField.Name("Idempotent-Replayed")!] == "true")
            }
            // The same request spelled differently is the same request.
            let respelled = try await client.call(
                .post, "/v1/notes", raw: #"{ "lng": 2.5, "visibility": "public", "body": " only once ", "lat": 1.50 }"#,
                token: alice.accessToken, headers: [Self.key: "retry-1"])
            #expect(respelled.status == .created)
            #expect(respelled.body == first.body)
            #expect(try await NotesFixture.noteCount(tenant) == 1)

            // Another key, or no key, is another note; keys belong to their user.
            #expect(try await post(client, body, key: "retry-2", as: alice).body != first.body)
            let bob = try await client.signup("bob", tenant: tenant)
            let bobs = try await post(client, body, key: "retry-1", as: bob)
            #expect(bobs.status == .created)
            #expect(try bobs.decode(API.Note.self).author.username == "bob")
            #expect(try await NotesFixture.noteCount(tenant) == 3)
        }
    }

    @Test func aDifferentBodyWithTheSameKeyIsRefused() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            #expect(try await post(client, ["body": "first", "lat": 0, "lng": 0], key: "k", as: alice).status == .created)
            for other in [["body": "second", "lat": 0, "lng": 0], ["body": "first", "lat": 0, "lng": 0.0001],
                          ["body": "first", "lat": 0, "lng": 0, "visibility": "private"]] as [[String: Any]] {
                let response = try await post(client, other, key: "k", as: alice)
                #expect(response.status == .unprocessableContent)
                #expect(response.code == "idempotency_key_reused")
            }
            #expect(try await NotesFixture.noteCount(tenant) == 1)
        }
    }

    @Test func concurrentDuplicatesMakeOneNote() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            let responses = try await withThrowingTaskGroup(of: APIResponse.self) { group in
                for _ in 0..<10 {
                    group.addTask {
                        try await client.call(
                            .post, "/v1/notes", json: ["body": "at once", "lat": 3, "lng": 4], token: alice.accessToken,
                            headers: [Self.key: "burst"])
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(try await NotesFixture.noteCount(tenant) == 1)
            let created = responses.filter { $0.status == .created }
            #expect(!created.isEmpty)
            #expect(Set(created.map(\.body)).count == 1, "every 201 is the same note")
            for response in responses where response.status != .created {
                #expect(response.status == .conflict)
                #expect(response.code == "idempotency_in_progress")
            }
        }
    }

    @Test func aClaimStillRunningIsAConflictUntilAbandoned() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            let json: [String: JSONValue] = ["body": .string("slow"), "lat": .number(1), "lng": .number(1)]
            var reader = JSONObjectReader(json)
            let fingerprint = try #require(NoteDraft(reading: &reader, rules: ())).fingerprint
            let tenantID = try await NotesFixture.tenantID(tenant)
            // Another replica's request holds the key and has not answered yet.
            try await TestEnvironment.withOwnerPool { pool in
                try await pool.query("""
                    INSERT INTO idempotency_keys (tenant_id, user_id, key, request_hash)
                    VALUES (\(tenantID), \(Int64(alice.userID)!), 'busy', \(PostgresBytes(fingerprint)))
                    """)
            }
            let busy = try await post(client, ["body": "slow", "lat": 1, "lng": 1], key: "busy", as: alice)
            #expect(busy.status == .conflict)
            #expect(busy.code == "idempotency_in_progress")
            #expect(try await NotesFixture.noteCount(tenant) == 0)
            // That request died a minute ago: the key is free again.
            try await TestEnvironment.withOwnerPool { pool in
                try await pool.query("UPDATE idempotency_keys SET created_at = now() - interval '61 seconds' WHERE key = 'busy' AND tenant_id = \(tenantID)")
            }
            #expect(try await post(client, ["body": "slow", "lat": 1, "lng": 1], key: "busy", as: alice).status == .created)
            #expect(try await NotesFixture.noteCount(tenant) == 1)
        }
    }

    @Test func failedWorkReleasesTheKeyAndOldKeysExpire() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            let failed = try await post(client, ["body": "at a place", "lat": 0, "lng": 0, "place_id": "999999999"], key: "f", as: alice)
            #expect(failed.status == .unprocessableContent)
            #expect(failed.code == "validation_failed")
            let retried = try await post(client, ["body": "at no place", "lat": 0, "lng": 0], key: "f", as: alice)
            #expect(retried.status == .created, "a failed first attempt does not hold the key")

            let tenantID = try await NotesFixture.tenantID(tenant)
            try await TestEnvironment.withOwnerPool { pool in
                try await pool.query("UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'f' AND tenant_id = \(tenantID)")
            }
            let later = try await post(client, ["body": "at no place", "lat": 0, "lng": 0], key: "f", as: alice)
            #expect(later.status == .created)
            #expect(later.body != retried.body, "after 24 hours the key is new")
            #expect(try await NotesFixture.noteCount(tenant) == 2)
        }
    }

    @Test func malformedKeysAreRefused() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            for key in [String(repeating: "k", count: 256), "clé", "tab\there"] {
                let response = try await post(client, ["body": "x", "lat": 0, "lng": 0], key: key, as: alice)
                #expect(response.status == .badRequest, "\(key)")
                #expect(response.code == "malformed_request")
                #expect(response.detail?.contains("Idempotency-Key") == true)
            }
            #expect(try await post(client, ["body": "x", "lat": 0, "lng": 0], key: String(repeating: "k", count: 255), as: alice).status == .created)
            #expect(try await NotesFixture.noteCount(tenant) == 1)
        }
    }
}
