import HTTPTypes
import Hummingbird

/// Serves the browser app: `web/` at `/` and Debian's Leaflet at `/vendor/leaflet/`,
/// each file with an `ETag` (a repeat visit revalidates and gets `304`), and the app's
/// security headers. The API under `/v1/` never reaches the files.
///
/// Hummingbird's `FileMiddleware` does the serving (conditional requests, ranges,
/// content types, no `..`); this only chooses which paths it sees and adds the headers.
struct WebAppMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    private let app: FileMiddleware<Context, LocalFileSystem>?
    private let leaflet: FileMiddleware<Context, LocalFileSystem>?
    private let securityHeaders: HTTPFields

    init(settings: WebAppSettings) {
        // `no-cache`: a browser keeps the files but asks each time, so a deploy shows at once
        // (the app's file names carry no version to bust a longer cache with).
        let revalidate = Hummingbird.CacheControl([(MediaType(type: .any), [Hummingbird.CacheControl.CacheControlValue.noCache])])
        app = settings.directory.isEmpty ? nil : FileMiddleware(
            settings.directory, cacheControl: revalidate, searchForIndexHtml: true)
        leaflet = settings.directory.isEmpty || settings.leafletDirectory.isEmpty ? nil : FileMiddleware(
            settings.leafletDirectory, urlBasePath: "/vendor/leaflet", cacheControl: revalidate)
        securityHeaders = [
            .contentSecurityPolicy: settings.contentSecurityPolicy,
            .xContentTypeOptions: "nosniff",
            // Other sites (the map's tiles: OpenStreetMap's policy asks for a Referer) learn the
            // app's origin, never a path; no URL of the app holds anything secret anyway.
            .referrerPolicy: "strict-origin-when-cross-origin",
        ]
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let app, !Self.isAPI(request.uri.path) else { return try await next(request, context) }
        var response: Response
        if let leaflet {
            response = try await app.handle(request, context: context) { request, context in
                try await leaflet.handle(request, context: context, next: next)
            }
        } else {
            response = try await app.handle(request, context: context, next: next)
        }
        for field in securityHeaders where response.headers[field.name] == nil { response.headers.append(field) }
        return response
    }

    /// The API and the operations endpoints keep their own answers, 404s included.
    private static func isAPI(_ path: String) -> Bool {
        path == "/v1" || path.hasPrefix("/v1/") || ["/healthz", "/readyz", "/metrics"].contains(path)
    }
}

extension HTTPField.Name {
    static let referrerPolicy = Self("Referrer-Policy")!
}
