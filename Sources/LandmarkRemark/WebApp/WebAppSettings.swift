/// The browser app the service serves at `/` (issue 21): where its files are, which
/// tenant it signs in to, and the map tiles it shows.
public struct WebAppSettings: Sendable {
    /// The app's static files (`web/` in the repository); empty: no app is served.
    public var directory = "web"
    /// Debian's `libjs-leaflet`, served at `/vendor/leaflet/`; never copied into the repository.
    public var leafletDirectory = "/usr/share/javascript/leaflet"
    /// The tenant the app uses; empty: the app asks for it on its sign-in form.
    public var tenant = ""
    /// A Leaflet tile URL template; empty (`LR_MAP_TILE_URL=none`): a map without tiles (offline, the tests).
    public var tileURL = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
    public var tileAttribution = "&copy; <a href=\"https://www.openstreetmap.org/copyright\">OpenStreetMap</a> contributors"

    /// The sign-in providers the app offers besides passwords and guests, in this order.
    public var signIn: [WebSignIn] = []

    public init() {}

    /// The source `img-src` must allow for the tiles: the template's scheme and host, a
    /// `{s}` subdomain becoming `*`; nil without tiles.
    var tileSource: String? {
        guard !tileURL.isEmpty, let schemeEnd = tileURL.range(of: "://") else { return nil }
        let scheme = tileURL[..<schemeEnd.lowerBound]
        let rest = tileURL[schemeEnd.upperBound...]
        let host = rest.prefix { $0 != "/" }.replacingOccurrences(of: "{s}", with: "*")
        // Any other placeholder in the host cannot be written as a source: allow the scheme.
        if host.isEmpty || host.contains("{") { return "\(scheme):" }
        return "\(scheme)://\(host)"
    }

    /// The app's Content-Security-Policy: its own scripts and styles only (no inline
    /// script, no eval), API calls to its own origin, images from itself, the tiles, and
    /// `blob:` for photos (read with the session's token, shown from the page's own blobs).
    var contentSecurityPolicy: String {
        let images = ["'self'", "data:", "blob:"] + (tileSource.map { [$0] } ?? [])
        return [
            "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src \(images.joined(separator: " "))",
            "connect-src 'self'", "object-src 'none'", "base-uri 'none'", "frame-ancestors 'none'", "form-action 'self'",
        ].joined(separator: "; ")
    }
}

/// A provider the browser app signs in with: its authorization page in the same tab
/// (OpenID Connect's implicit flow, the ID token coming back in the URL's fragment, which
/// no server sees), then `POST /v1/auth/id-token`. The tenant must accept the provider
/// with this client id among its audiences (`identity-provider set`).
public struct WebSignIn: Sendable, Equatable {
    public let provider: String
    public let label: String
    public let authorizeURL: String
    public let clientID: String
    public let responseType: String
    public let scope: String
    /// What the app sends the provider as the nonce: its SHA-256 in hex (`hashed`, what the
    /// service expects of Apple's and Google's tokens by default) or the value (`raw`).
    public let nonce: String

    /// Google's web client id (`…apps.googleusercontent.com`).
    public static func google(clientID: String) -> WebSignIn {
        WebSignIn(
            provider: "google", label: "Google", authorizeURL: "https://accounts.google.com/o/oauth2/v2/auth", clientID: clientID,
            responseType: "id_token", scope: "openid email profile", nonce: "hashed")
    }

    /// A Sign in with Apple Services ID. Apple returns the token in the fragment only when no
    /// scope is asked for, so the app learns no name or email from Apple on the web.
    public static func apple(clientID: String) -> WebSignIn {
        WebSignIn(
            provider: "apple", label: "Apple", authorizeURL: "https://appleid.apple.com/auth/authorize", clientID: clientID,
            responseType: "code id_token", scope: "", nonce: "hashed")
    }

    /// `oidc:<name> <client id> <authorization URL> [label…]`, as `LR_WEB_SIGN_IN_OIDC` has it.
    public static func oidc(_ setting: String) -> WebSignIn? {
        let words = setting.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard words.count >= 3, words[0].wholeMatch(of: /oidc:[a-z0-9][a-z0-9-]{0,31}/) != nil,
            words[2].hasPrefix("https://") || words[2].hasPrefix("http://")
        else { return nil }
        let label = words.count > 3 ? words[3...].joined(separator: " ") : String(words[0].dropFirst(5))
        return WebSignIn(
            provider: words[0], label: label, authorizeURL: words[2], clientID: words[1], responseType: "id_token",
            scope: "openid email profile", nonce: "raw")
    }
}
