import Foundation
import Hummingbird
import Logging
import Postgres
import Synchronization

/// `GET /.well-known/apple-app-site-association`: which iOS apps may open which links of this
/// host as universal links. One host serves many tenants, so each tenant's apps
/// (`ios_app_ids`, migration 0031) claim only that tenant's link pages (`/t/{slug}/links/*`):
/// one tenant's app never opens another's reset link. Apple's fetcher sends no token and no
/// `X-Tenant`, takes no redirect, and wants `application/json`; the document is rebuilt at
/// most once a minute (devices fetch it through Apple's CDN, which caches it longer anyway).
final class AppSiteAssociation: Sendable {
    let pool: PostgresPool
    private let cached = Mutex<(built: ContinuousClock.Instant, body: ByteBuffer)?>(nil)
    static let lifetime: Duration = .seconds(60)

    init(pool: PostgresPool) { self.pool = pool }

    func register(on router: Router<AppRequestContext>) {
        router.get(".well-known/apple-app-site-association") { _, context in
            Response(
                status: .ok, headers: [.contentType: "application/json", .cacheControl: "public, max-age=60"],
                body: .init(byteBuffer: try await self.document(logger: context.logger)))
        }
    }

    func document(logger: Logger) async throws -> ByteBuffer {
        let now = ContinuousClock.now
        if let cached = cached.withLock({ $0 }), now - cached.built < Self.lifetime { return cached.body }
        let rows = try await pool.query("""
            SELECT slug, ios_app_ids FROM tenants WHERE disabled_at IS NULL AND cardinality(ios_app_ids) > 0 ORDER BY slug
            """, logger: logger)
        let entries = try rows.map { row in
            let (slug, ids) = try row.decode((String, [String]).self)
            return AppLinks(slug: slug, appIDs: ids)
        }
        let apps = entries.flatMap(\.appIDs)
        var json = JSONWriter()
        json.object { json in
            json.key("applinks")
            json.object { json in
                json.key("details")
                json.array(entries)
            }
            json.key("webcredentials")
            json.object { json in
                json.key("apps")
                json.array(apps)
            }
        }
        let body = ByteBuffer(bytes: json.bytes)
        cached.withLock { $0 = (now, body) }
        return body
    }

    /// One tenant's entry: its apps, and its link pages only.
    private struct AppLinks: JSONWritable {
        let slug: String
        let appIDs: [String]

        func write(to json: inout JSONWriter) {
            json.object { json in
                json.key("appIDs")
                json.array(appIDs)
                json.key("components")
                json.array([Component(path: "/t/\(slug)/links/*", comment: "tenant \(slug): email verification and password reset")])
            }
        }
    }

    private struct Component: JSONWritable {
        let path: String
        let comment: String

        func write(to json: inout JSONWriter) {
            json.object { json in
                json.key("/")
                json.string(path)
                json.key("comment")
                json.string(comment)
            }
        }
    }
}
