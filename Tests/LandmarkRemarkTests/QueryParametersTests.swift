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
