import Foundation
import Hummingbird

/// OpenID Connect's implicit flow as a browser meets it (`response_mode=fragment`): the
/// provider's sign-in page, then a redirect back to the app with the ID token in the URL's
/// fragment. Any name typed in signs in as that subject; this provider checks no password.
enum AuthorizationPage {
    /// `GET /authorize?client_id&redirect_uri&response_type&nonce&state…`: the sign-in form.
    static func form(_ query: Parameters) -> Response {
        guard let redirect = query["redirect_uri"], redirect.hasPrefix("http"), query["client_id"] != nil,
            (query["response_type"] ?? "").split(separator: " ").contains("id_token")
        else {
            return page(.badRequest, "<p>client_id, redirect_uri and a response_type with id_token are required</p>")
        }
        let carried = ["client_id", "redirect_uri", "response_type", "nonce", "state"].compactMap { name in
            query[name].map { "<input type=\"hidden\" name=\"\(name)\" value=\"\(escape(String($0)))\">" }
        }.joined()
        return page(.ok, """
            <h1>Test identity provider</h1>
            <form method="get" action="/authorize/approve">\(carried)
            <label>Name <input id="provider-subject" name="sub" required></label>
            <label>Email <input id="provider-email" name="email"></label>
            <button id="provider-approve" type="submit">Sign in</button>
            </form>
            """)
    }

    /// `GET /authorize/approve?…&sub=…`: back to the app, `#id_token=…&state=…` (and a `code`
    /// when asked for one, as Apple's `code id_token`).
    static func approve(_ query: Parameters, core: ProviderCore) async throws -> Response {
        guard let redirect = query["redirect_uri"].map(String.init), redirect.hasPrefix("http"),
            let audience = query["client_id"].map(String.init), let subject = query["sub"].map(String.init), !subject.isEmpty
        else { return page(.badRequest, "<p>redirect_uri, client_id and sub are required</p>") }
        let email = query["email"].map(String.init).flatMap { $0.isEmpty ? nil : $0 }
        var claims = core.claims(
            subject: subject, audience: audience, nonce: query["nonce"].map(String.init), email: email,
            issuedAt: Date(), lifetime: 600, notBefore: nil)
        claims["name"] = .string(subject)
        var fragment = ["id_token": try await core.mint(claims, key: .rsa, header: HeaderOverrides())]
        if let state = query["state"] { fragment["state"] = String(state) }
        if (query["response_type"] ?? "").split(separator: " ").contains("code") { fragment["code"] = "fake-code-\(subject)" }
        let encoded = fragment.sorted { $0.key < $1.key }.map { "\($0.key)=\(formEncode($0.value))" }.joined(separator: "&")
        return Response(status: .found, headers: [.location: redirect + "#" + encoded])
    }

    private static func page(_ status: HTTPResponse.Status, _ body: String) -> Response {
        Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: "<!doctype html><html><body>\(body)</body></html>")))
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    private static func formEncode(_ text: String) -> String {
        // ASCII only: a Location header carries no other bytes.
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
