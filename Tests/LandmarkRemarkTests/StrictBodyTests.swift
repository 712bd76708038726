import Foundation
import HummingbirdTesting
@testable import LandmarkRemark
import Testing

/// Request bodies that mean more than one thing are refused with `400 malformed_request`.
@Suite(.timeLimit(.minutes(10))) struct StrictBodyTests {
    static func duplicate(_ json: String) -> String? {
        Array(json.utf8).withUnsafeBytes(JSONDuplicateKeys.firstDuplicate(in:))
    }

    @Test func duplicateKeysAreFoundAtAnyDepthAndNamedByPath() {
        #expect(Self.duplicate(#"{"a": 1, "b": 2, "a": 3}"#) == "a")
        #expect(Self.duplicate(#"{"password": {"current": "x", "new": "y", "current": "z"}}"#) == "password.current")
        #expect(Self.duplicate(#"{"items": [{"k": 1}, {"k": 2, "j": [1, {"q": 1, "q": 2}]}]}"#) == "items[].j[].q")
        // Escapes decoded: "\u0061" is "a"; a surrogate pair is one character.
        #expect(Self.duplicate(#"{"a": 1, "\u0061": 2}"#) == "a")
        #expect(Self.duplicate(#"{"\ud83d\ude00": 1, "😀": 2}"#) == "😀")
        #expect(Self.duplicate(#"{"x\"y": 1, "x\u0022y": 2}"#) == #"x"y"#)
        // Not duplicates: the same key in sibling objects, keys that look alike in values, distinct escapes.
        #expect(Self.duplicate(#"{"a": {"k": 1}, "b": {"k": 2}, "c": [{"k": 3}, {"k": 4}]}"#) == nil)
        #expect(Self.duplicate(#"{"a": "a", "b": ["a", "a"], "c": "{\"a\": 1, \"a\": 2}"}"#) == nil)
        #expect(Self.duplicate(#"{"a\\": 1, "a": 2, "a\/": 3}"#) == nil)
        #expect(Self.duplicate(#"[1, "a", {"a": 1}]"#) == nil)
    }

    @Test func aBodyRepeatingAKeyIsRefusedNamingItAndChangesNothing() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let twice = try await client.call(.post, "/v1/auth/signup",
                                              raw: #"{"username": "dup_a", "password": "a sturdy passphrase", "username": "dup_b"}"#, tenant: tenant)
            #expect(twice.status == .badRequest && twice.code == "malformed_request")
            #expect(twice.detail?.contains(#""username""#) == true, "\(twice.body)")
            let escaped = try await client.call(.post, "/v1/auth/signup",
                                                raw: #"{"username": "dup_a", "password": "a sturdy passphrase", "user\u006eame": "dup_b"}"#, tenant: tenant)
            #expect(escaped.code == "malformed_request")
            // Neither name was taken.
            _ = try await client.signup("dup_a", tenant: tenant)
            let account = try await client.signup("dup_b", tenant: tenant)

            let nested = try await client.call(.patch, "/v1/me", raw: """
                {"password": {"current": "wrong guess", "new": "a new sturdy phrase", "current": "\(account.password)"}}
                """, token: account.accessToken)
            #expect(nested.code == "malformed_request")
            #expect(nested.detail?.contains("password.current") == true, "\(nested.body)")
            // The password did not change.
            let login = try await client.call(.post, "/v1/auth/login", json: ["username": "dup_b", "password": account.password], tenant: tenant)
            #expect(login.status == .ok)
        }
    }

    @Test func aBadChunkSizeIs400OverARealSocket() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp { client, port in
            let head = "POST /v1/auth/signup HTTP/1.1\r\nHost: localhost\r\nX-Tenant: \(tenant)\r\nConnection: close\r\n"
                + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            // A well-formed chunked body is read as any other.
            let body = #"{"username": "chunky", "password": "a sturdy passphrase"}"#
            // A signup hashes a password: beside CI's main pass (hashing saturated by other suites)
            // it once took over 10 s, hence the exchange's long patience.
            let good = try await RawHTTP.exchange(port: port, head + String(body.utf8.count, radix: 16) + "\r\n" + body + "\r\n0\r\n\r\n")
            #expect(good.hasPrefix("HTTP/1.1 201"), "\(good)")

            let bad = try await RawHTTP.exchange(port: port, head + "zz\r\n{}\r\n0\r\n\r\n")
            #expect(bad.hasPrefix("HTTP/1.1 400"), "\(bad)")
            #expect(bad.lowercased().contains("content-type: application/problem+json"), "\(bad)")
            #expect(bad.contains(#""code":"malformed_request""#), "\(bad)")
            // The server is none the worse for it.
            #expect(try await client.call(.get, "/healthz").status == .ok)
        }
    }
}
