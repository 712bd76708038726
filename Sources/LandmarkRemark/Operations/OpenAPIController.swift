import Foundation
import Hummingbird

/// `GET /v1/openapi.json`: the API contract as OpenAPI 3.1, served byte for byte
/// from the one file in the repository (`openapi/openapi.json`), so what clients
/// generate code from is exactly what the drift test and the fuzzer check.
struct OpenAPIController {
    /// The file's bytes, or why it could not be read.
    let document: Result<ByteBuffer, DocumentUnavailable>

    /// Reads the document once, when the router is built.
    ///
    /// A missing file does not stop the service: it would stop every other route
    /// with it. The route then answers `500`, and each request logs the path it looked at.
    init(path: String) {
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            document = .success(ByteBuffer(bytes: data))
        } catch {
            document = .failure(DocumentUnavailable(path: path, reason: "\(error)"))
        }
    }

    func register(on router: Router<AppRequestContext>) {
        router.get("v1/openapi.json", use: serve)
    }

    @Sendable func serve(_ request: Request, context: AppRequestContext) async throws -> Response {
        let body = try document.get()
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: body))
    }

    /// Logged by `ProblemMiddleware` as an unexpected error; the client sees `500 internal`.
    struct DocumentUnavailable: Error, CustomStringConvertible {
        let path: String
        let reason: String
        var description: String { "the OpenAPI document at \(path) (LR_OPENAPI_PATH) could not be read: \(reason)" }
    }
}
