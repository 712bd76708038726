import Foundation
import Hummingbird

/// The provider's HTTP surface. Handlers stay thin: they read the request, ask ``ProviderCore``,
/// and write the answer.
enum Routes {
    static func makeRouter(core: ProviderCore) -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: CloseConnectionsMiddleware())
        router.add(middleware: RequestGateMiddleware(core: core))

        router.get("/.well-known/openid-configuration") { _, _ in
            let issuer = core.issuer
            let base = core.baseURL
            let discovery = DiscoveryDocument(
                issuer: issuer,
                authorizationEndpoint: base + "/authorize",
                jwksURI: base + "/jwks",
                tokenEndpoint: base + "/auth/token",
                revocationEndpoint: base + "/auth/revoke")
            return try jsonResponse(.ok, String(decoding: JSON.encode(discovery), as: UTF8.self))
        }

        router.get("/jwks") { _, _ in
            var response = try jsonResponse(.ok, core.jwksJSON())
            if let cacheControl = core.state.withLock({ $0.keysCacheControl }) {
                response.headers[.cacheControl] = cacheControl
            }
            return response
        }

        router.post("/auth/token") { request, _ in
            let reply = try await core.exchangeAuthorizationCode(form: try await FormBody.decode(request))
            return try jsonResponse(reply.status, reply.json)
        }

        router.post("/auth/revoke") { request, _ in
            let reply = await core.revoke(form: try await FormBody.decode(request))
            return try jsonResponse(reply.status, reply.json)
        }

        router.get("/mint") { request, _ in
            try await mintFromQuery(request.uri.queryParameters, core: core)
        }

        router.get("/authorize") { request, _ in AuthorizationPage.form(request.uri.queryParameters) }
        router.get("/authorize/approve") { request, _ in
            try await AuthorizationPage.approve(request.uri.queryParameters, core: core)
        }
        return router
    }

    /// `GET /mint?sub=…&aud=…[&nonce=…][&email=…][&name=…][&key=rsa|ec][&expires_in=seconds]`: a
    /// token for the README walkthrough, where curl plays the app that signed in.
    private static func mintFromQuery(_ query: Parameters, core: ProviderCore) async throws -> Response {
        guard let subject = query["sub"].map(String.init), let audience = query["aud"].map(String.init) else {
            return textResponse(.badRequest, "sub and aud are required\n")
        }
        let keyChoice: KeyChoice
        switch query["key"] ?? "rsa" {
        case "rsa": keyChoice = .rsa
        case "ec": keyChoice = .ec
        default: return textResponse(.badRequest, "key is rsa or ec\n")
        }
        var lifetime: TimeInterval = 600
        if let expiresIn = query["expires_in"] {
            guard let seconds = Int(expiresIn) else { return textResponse(.badRequest, "expires_in is whole seconds\n") }
            lifetime = TimeInterval(seconds)
        }
        var claims = core.claims(
            subject: subject, audience: audience, nonce: query["nonce"].map(String.init),
            email: query["email"].map(String.init), issuedAt: Date(), lifetime: lifetime, notBefore: nil)
        if let name = query["name"] { claims["name"] = .string(String(name)) }
        let token = try await core.mint(claims, key: keyChoice, header: HeaderOverrides())
        return textResponse(.ok, token)
    }

    private static func jsonResponse(_ status: HTTPResponse.Status, _ json: String?) throws -> Response {
        guard let json else { return Response(status: status) }
        return Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: json)))
    }

    private static func textResponse(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}

/// The OpenID Connect discovery document, as much of it as the service reads.
private struct DiscoveryDocument: Encodable {
    let issuer: String
    let authorizationEndpoint: String
    let jwksURI: String
    let tokenEndpoint: String
    let revocationEndpoint: String
    let idTokenSigningAlgValuesSupported = ["RS256", "ES256"]

    enum CodingKeys: String, CodingKey {
        case issuer, authorizationEndpoint = "authorization_endpoint", jwksURI = "jwks_uri", tokenEndpoint = "token_endpoint"
        case revocationEndpoint = "revocation_endpoint"
        case idTokenSigningAlgValuesSupported = "id_token_signing_alg_values_supported"
    }
}
