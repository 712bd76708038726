import Foundation
import Postgres
import Testing

@testable import LandmarkRemark

/// `/.well-known/apple-app-site-association`: each tenant's iOS apps open that tenant's link
/// pages only, on one host.
@Suite struct AppSiteAssociationTests {
    @Test func eachTenantsAppsClaimOnlyItsOwnLinkPages() async throws {
        let acme = try await TestEnvironment.makeTenant()
        let beta = try await TestEnvironment.makeTenant()
        try await TestEnvironment.withOwnerPool { pool in
            try await pool.query("SELECT 1 FROM admin.set_tenant_setting(\(acme), 'ios_app_ids', 'ABCDE12345.com.acme.maps')")
            try await pool.query("SELECT 1 FROM admin.set_tenant_setting(\(beta), 'ios_app_ids', ' FGHIJ67890.com.beta.remarks , FGHIJ67890.com.beta.dev')")
            // Not an app id: refused, nothing changed.
            await #expect(throws: PostgresError.self) {
                try await pool.query("SELECT 1 FROM admin.set_tenant_setting(\(acme), 'ios_app_ids', 'com.acme.maps')")
            }
        }
        try await withApp { client in
            let response = try await client.call(.get, "/.well-known/apple-app-site-association")
            #expect(response.status == .ok && response.headers[.contentType] == "application/json")
            let document = try #require(try JSONSerialization.jsonObject(with: Data(response.body.utf8)) as? [String: Any])
            let details = try #require((document["applinks"] as? [String: Any])?["details"] as? [[String: Any]])
            func entry(_ slug: String) -> [String: Any]? {
                details.first { (($0["components"] as? [[String: String]])?.first?["/"]) == "/t/\(slug)/links/*" }
            }
            #expect(try #require(entry(acme))["appIDs"] as? [String] == ["ABCDE12345.com.acme.maps"])
            #expect(try #require(entry(beta))["appIDs"] as? [String] == ["FGHIJ67890.com.beta.dev", "FGHIJ67890.com.beta.remarks"])
            let web = try #require((document["webcredentials"] as? [String: Any])?["apps"] as? [String])
            #expect(Set(web).isSuperset(of: ["ABCDE12345.com.acme.maps", "FGHIJ67890.com.beta.remarks"]))
        }
    }
}
