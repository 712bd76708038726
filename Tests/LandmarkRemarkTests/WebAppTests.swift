import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import LandmarkRemark
import Testing

/// The browser app as the service serves it: files with ETags, security headers, its
/// configuration, and nothing of it in the API's way. What it does in a browser is
/// `scripts/test-web.sh`'s (headless Chromium).
@Suite struct WebAppTests {
    static let webDirectory = TestEnvironment.repositoryRoot.appendingPathComponent("web").path

    static func serving(_ adjust: @escaping (inout AppConfiguration) -> Void = { _ in }) -> (inout AppConfiguration) -> Void {
        { configuration in
            configuration.web.directory = webDirectory
            adjust(&configuration)
        }
    }

    @Test func theAppIsServedWithETagsAndAPolicyThatForbidsInlineScript() async throws {
        try await withApp(Self.serving()) { client in
            let page = try await client.call(.get, "/")
            #expect(page.status == .ok)
            #expect(page.headers[.contentType]?.hasPrefix("text/html") == true)
            #expect(page.body.contains("<script type=\"module\""))
            let policy = try #require(page.headers[.contentSecurityPolicy])
            #expect(policy.contains("script-src 'self'"))
            #expect(policy.contains("frame-ancestors 'none'"))
            #expect(!policy.contains("unsafe-inline") && !policy.contains("unsafe-eval"))
            #expect(page.headers[.xContentTypeOptions] == "nosniff")
            #expect(page.headers[.cacheControl] == "no-cache")
            let tag = try #require(page.headers[.eTag])
            let again = try await client.call(.get, "/", headers: [.ifNoneMatch: tag])
            #expect(again.status == .notModified)
            #expect(again.body.isEmpty)

            let script = try await client.call(.get, "/js/main.js")
            #expect(script.status == .ok)
            #expect(script.headers[.contentType]?.contains("javascript") == true)
            let leaflet = try await client.call(.get, "/vendor/leaflet/leaflet.css")
            #expect(leaflet.status == .ok, "Debian's libjs-leaflet is installed by scripts/install-deps.sh")
            #expect(leaflet.headers[.eTag] != nil)
        }
    }

    @Test func theAppsConfigurationComesFromTheSettings() async throws {
        try await withApp(Self.serving {
            $0.web.tenant = "demo"
            $0.web.tileURL = "https://{s}.tiles.example.net/{z}/{x}/{y}.png"
            $0.web.tileAttribution = "Tiles <b>by</b> Example"
        }) { client in
            let config = try await client.call(.get, "/app-config.json")
            #expect(config.status == .ok)
            #expect(config.jsonValue["tenant"] == .string("demo"))
            #expect(config.jsonValue["tiles"]?["url"] == .string("https://{s}.tiles.example.net/{z}/{x}/{y}.png"))
            #expect(config.jsonValue["tiles"]?["attribution"] == .string("Tiles <b>by</b> Example"))
            #expect(config.jsonValue["sign_in"] == .array([]))
            // The tiles' host, and no other, may serve images.
            #expect(config.headers[.contentSecurityPolicy]?.contains("img-src 'self' data: blob: https://*.tiles.example.net;") == true)
        }
        // The tiles' host goes into the policy: nothing in the setting may end a directive.
        for bad in ["https://t.example/{z};script-src *", "https://t.example/{z} 'unsafe-inline'", "ftp://t.example/{z}"] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try AppConfiguration(environment: ["LR_MAP_TILE_URL": bad]) }
        }
        #expect(try AppConfiguration(environment: ["LR_MAP_TILE_URL": "none"]).web.tileURL == "")
        #expect(try AppConfiguration(environment: [:]).web.tileURL.hasPrefix("https://tile.openstreetmap.org/"))
        try await withApp(Self.serving { $0.web.tileURL = "" }) { client in
            let config = try await client.call(.get, "/app-config.json")
            #expect(config.jsonValue["tenant"] == .null)
            #expect(config.jsonValue["tiles"]?["url"] == .string(""))
            #expect(config.headers[.contentSecurityPolicy]?.contains("img-src 'self' data: blob:;") == true)
        }
    }

    @Test func signInProvidersAreOfferedAsConfigured() async throws {
        let configuration = try AppConfiguration(environment: [
            "LR_WEB_SIGN_IN_GOOGLE": "1234-web.apps.googleusercontent.com", "LR_WEB_SIGN_IN_APPLE": "com.example.walks.web",
            "LR_WEB_SIGN_IN_OIDC": "oidc:staff walks-web https://login.example.com/auth Staff login",
        ])
        #expect(configuration.web.signIn.map(\.provider) == ["google", "apple", "oidc:staff"])
        #expect(configuration.web.signIn[2] == WebSignIn(
            provider: "oidc:staff", label: "Staff login", authorizeURL: "https://login.example.com/auth", clientID: "walks-web",
            responseType: "id_token", scope: "openid email profile", nonce: "raw"))
        for bad in ["staff walks-web https://x", "oidc:staff walks-web", "oidc:Staff a https://x", "oidc:staff a ftp://x"] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try AppConfiguration(environment: ["LR_WEB_SIGN_IN_OIDC": bad]) }
        }
        try await withApp(Self.serving { $0.web.signIn = configuration.web.signIn }) { client in
            let offered = try await client.call(.get, "/app-config.json").jsonValue["sign_in"]
            #expect(offered?[0]?["provider"] == .string("google"))
            #expect(offered?[0]?["authorize_url"] == .string("https://accounts.google.com/o/oauth2/v2/auth"))
            #expect(offered?[0]?["nonce"] == .string("hashed"))
            #expect(offered?[1]?["response_type"] == .string("code id_token"))
            #expect(offered?[1]?["scope"] == .string(""))
            #expect(offered?[2]?["client_id"] == .string("walks-web"))
        }
    }

    @Test func theAPIAndTheFilesStayApart() async throws {
        try await withApp(Self.serving()) { client in
            let missing = try await client.call(.get, "/v1/index.html")
            #expect(missing.code == "not_found")
            #expect(missing.headers[.contentType] == "application/problem+json")
            #expect(try await client.call(.get, "/healthz").headers[.contentSecurityPolicy] == nil)
            #expect(try await client.call(.get, "/no-such-file.js").status == .notFound)
            // Nothing outside the folders.
            for path in ["/../Package.swift", "/%2e%2e/Package.swift", "/vendor/leaflet/../../../../etc/passwd", "/js/%2e%2e/%2e%2e/Package.swift"] {
                let response = try await client.call(.get, path)
                #expect([400, 404].contains(response.status.code), "\(path)")
                #expect(!response.body.contains("swift-tools-version") && !response.body.contains("root:"), "\(path)")
            }
            // Only reads.
            #expect(try await client.call(.post, "/index.html", raw: "{}").status.code >= 400)
        }
        let noApp = Self.serving { $0.web.directory = "" }
        try await withApp(noApp) { client in
            let page = try await client.call(.get, "/")
            let config = try await client.call(.get, "/app-config.json")
            #expect(page.status == .notFound)
            #expect(config.status == .notFound)
        }
    }

    /// The policy forbids inline script and inline styles, so the page must not need them:
    /// checked on the file itself, where a browser test would only see a blocked script.
    @Test func thePageNeedsNothingInline() throws {
        let html = try String(contentsOfFile: Self.webDirectory + "/index.html", encoding: .utf8)
        let scripts = html.matches(of: /<script\b([^>]*)>/).map { String($0.output.1) }
        #expect(!scripts.isEmpty)
        for attributes in scripts { #expect(attributes.contains("src="), "inline script: <script\(attributes)>") }
        let handler = html.contains(/\son[a-z]+\s*=/)
        let style = html.contains(/\sstyle\s*=/)
        let sheet = html.contains(/<style\b/)
        #expect(!handler, "an inline event handler")
        #expect(!style, "an inline style")
        #expect(!sheet, "an inline style sheet")
    }
}
