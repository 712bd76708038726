@testable import LandmarkRemark
import Testing

/// The hand-written percent-decoding of query strings.
@Suite struct QueryParametersTests {
    @Test func decodesPlusPercentAndUTF8() throws {
        var parameters = try QueryParameters(query: "q=caf%C3%A9+au+lait%2B%25&near=-33.8,151.2&empty=")
        #expect(parameters.string("q") == "café au lait+%")
        #expect(parameters.string("near") == "-33.8,151.2")
        #expect(parameters.string("empty") == "")
        try parameters.finish()
    }

    @Test(arguments: ["q=%zz", "q=%4", "q=%", "q=%FF", "q=%C3", "q=%ED%A0%80", "%=1"])
    func refusesBrokenEscapesAndNonUTF8(_ query: String) {
        #expect(throws: AppError.self) { try QueryParameters(query: query) }
    }
}

/// The lists and the event stream read `bbox` with one parser: the same bad value gets the
/// same `400` from each.
@Suite struct SharedParameterTests {
    @Test func aBadBoundingBoxIsTheSameProblemEverywhere() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let account = try await client.signup("boxes", tenant: tenant)
            var details: Set<String> = []
            for path in ["/v1/notes", "/v1/places", "/v1/notes/clusters", "/v1/events"] {
                let response = try await client.call(.get, "\(path)?bbox=10,20,30", token: account.accessToken)
                #expect(response.status == .badRequest && response.code == "malformed_request", "\(path)")
                details.insert(try response.decode(API.Problem.self).detail)
            }
            #expect(details.count == 1 && details.first?.hasPrefix("bbox must be min_lng,min_lat,max_lng,max_lat") == true, "\(details)")
        }
    }
}
