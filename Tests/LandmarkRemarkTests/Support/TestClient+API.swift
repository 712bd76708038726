import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// A response's status, headers and body. Read bodies through the typed models of
/// APIModels.swift (`decode(API.Note.self)`, `problem()`), so a missing or mistyped field fails.
struct APIResponse: Sendable {
    let status: HTTPResponse.Status
    let headers: HTTPFields
    let body: String

    /// The body as a JSON tree, for the few checks that are about the JSON itself
    /// (a key that must be absent, or present and null); `.null` when it is not JSON.
    var jsonValue: JSONTree { (try? JSONTree(parsing: body)) ?? .null }

    /// The problem `code` of an error response; nil for a success. An error body that is
    /// not a well-formed problem gives a description of what is wrong instead, which no
    /// expected code equals.
    var code: String? {
        guard status.code >= 400 else { return nil }
        do { return try problem().code } catch { return "not a problem: \(error)" }
    }

    /// The problem `detail` of an error response; nil for a success or a malformed problem.
    var detail: String? { status.code >= 400 ? (try? problem())?.detail : nil }

    /// The fields an error response's `errors` names, in order (empty when it names none).
    var errorFields: [String] { (try? problem())?.fields ?? [] }
}

extension TestClientProtocol {
    /// Sends a request with an optional JSON body (a dictionary, or raw text sent as is).
    func call(
        _ method: HTTPRequest.Method, _ path: String,
        json: [String: Any]? = nil, raw: String? = nil,
        token: String? = nil, tenant: String? = nil,
        headers extra: HTTPFields = [:]
    ) async throws -> APIResponse {
        var headers = extra
        if let token { headers[.authorization] = "Bearer \(token)" }
        if let tenant { headers[HTTPField.Name("X-Tenant")!] = tenant }
        var body: ByteBuffer?
        if let json {
            body = ByteBuffer(data: try JSONSerialization.data(withJSONObject: json))
            if headers[.contentType] == nil { headers[.contentType] = "application/json" }
        } else if let raw {
            body = ByteBuffer(string: raw)
            if headers[.contentType] == nil { headers[.contentType] = "application/json" }
        }
        return try await execute(uri: path, method: method, headers: headers, body: body) { response in
            APIResponse(status: response.status, headers: response.headers, body: String(buffer: response.body))
        }
    }

    /// Signs up a user and returns its tokens.
    func signup(_ username: String, password: String = "a sturdy passphrase", email: String? = nil, tenant: String) async throws -> Account {
        var json: [String: Any] = ["username": username, "password": password]
        if let email { json["email"] = email }
        let response = try await call(.post, "/v1/auth/signup", json: json, tenant: tenant)
        #expect(response.status == .created, "signup failed: \(response.body)")
        let tokens = try response.decode(API.TokenResponse.self)
        return Account(
            accessToken: tokens.accessToken, refreshToken: tokens.refreshToken,
            userID: tokens.user.id, username: username, password: password, tenant: tenant)
    }
}

struct Account: Sendable {
    var accessToken: String
    var refreshToken: String
    let userID: String
    let username: String
    let password: String
    let tenant: String
}
