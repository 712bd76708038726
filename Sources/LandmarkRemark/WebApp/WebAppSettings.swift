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
    /// script, no eval), API calls to its own origin, images from itself and the tiles.
    var contentSecurityPolicy: String {
        let images = ["'self'", "data:"] + (tileSource.map { [$0] } ?? [])
        return [
            "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src \(images.joined(separator: " "))",
            "connect-src 'self'", "object-src 'none'", "base-uri 'none'", "frame-ancestors 'none'", "form-action 'self'",
        ].joined(separator: "; ")
    }
}
