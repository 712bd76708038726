import Hummingbird

import Foundation

/// `GET /app-config.json`: what the browser app needs to know before its first call,
/// from the service's settings (so one build of `web/` serves any deployment); and
/// `GET /t/{tenant}/links/{verify|reset}`, the page a mailed link opens (`web/links.html`).
struct WebAppController {
    let settings: WebAppSettings

    func register(on router: Router<AppRequestContext>) {
        guard !settings.directory.isEmpty else { return }
        let config = WebAppConfig(settings: settings)
        router.get("app-config.json") { _, _ in
            EditedResponse(headers: [.cacheControl: "no-cache"], response: config)
        }
        // One page for every tenant and both kinds: it reads which from its path, and the token
        // from its fragment. Loading it changes nothing (a mail scanner's GET); the person's tap
        // posts the token. No Referer may carry its URL, and no cache keep it.
        let page = (try? Data(contentsOf: URL(fileURLWithPath: settings.directory).appendingPathComponent("links.html"))) ?? Data()
        router.get("t/:tenant/links/:page") { _, context -> Response in
            guard ["verify", "reset"].contains(context.parameters.get("page") ?? "") else { throw AppError.notFound("page") }
            return Response(
                status: .ok,
                headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store", .referrerPolicy: "no-referrer"],
                body: .init(byteBuffer: ByteBuffer(bytes: page)))
        }
    }
}

/// `{"tenant": "demo" or null, "tiles": {"url", "attribution"}, "sign_in": [provider…]}`.
struct WebAppConfig: JSONResponse {
    let settings: WebAppSettings

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.key("sign_in")
            json.array(settings.signIn)
            json.key("tenant")
            json.string(settings.tenant.isEmpty ? nil : settings.tenant)
            json.key("tiles")
            json.object { json in
                json.key("attribution")
                json.string(settings.tileAttribution)
                json.key("url")
                json.string(settings.tileURL)
            }
        }
    }
}

extension WebSignIn: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.key("authorize_url")
            json.string(authorizeURL)
            json.key("client_id")
            json.string(clientID)
            json.key("label")
            json.string(label)
            json.key("nonce")
            json.string(nonce)
            json.key("provider")
            json.string(provider)
            json.key("response_type")
            json.string(responseType)
            json.key("scope")
            json.string(scope)
        }
    }
}
