import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// A response's status, headers and body, with JSON helpers for compact assertions.
struct APIResponse: Sendable {
    let status: HTTPResponse.Status
    let headers: HTTPFields
    let body: String

    /// The body as a JSON object; an empty object when it is not one.
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
    }

    /// The problem `code`, for error responses.
    var code: String? { json["code"] as? String }

    func string(_ key: String) -> String? { json[key] as? String }
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
        let user = response.json["user"] as? [String: Any]
        return Account(
            accessToken: response.string("access_token") ?? "", refreshToken: response.string("refresh_token") ?? "",
            userID: user?["id"] as? String ?? "", username: username, password: password, tenant: tenant)
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
