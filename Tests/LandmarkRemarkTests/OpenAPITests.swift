import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Prometheus
import Testing

@testable import LandmarkRemark

/// The OpenAPI document (`openapi/openapi.json`) against the service: the same
/// routes both ways, served byte for byte, and real responses that fit its schemas.
@Suite(.timeLimit(.minutes(10))) struct OpenAPITests {
    static let path = TestEnvironment.repositoryRoot.appendingPathComponent("openapi/openapi.json").path
    static let methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    static func document() throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// The fields a schema of the document requires (`components.schemas.<name>.required`).
    static func requiredKeys(of schema: String) throws -> Set<String> {
        let components = try #require(try document()["components"] as? [String: Any])
        let object = try #require((components["schemas"] as? [String: Any])?[schema] as? [String: Any])
        return Set(try #require(object["required"] as? [String]))
    }

    /// `METHOD /path` for every operation of the document, `{param}` style.
    static func documentedRoutes(_ document: [String: Any]) throws -> Set<String> {
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        var routes: Set<String> = []
        for (path, item) in paths {
            for method in methods where item[method] != nil {
                routes.insert("\(method.uppercased()) \(normalised(path))")
            }
        }
        return routes
    }

    /// Hummingbird spells captures `:id` in code and `{id}` in descriptions; the document spells them `{id}`.
    static func normalised(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            segment.hasPrefix(":") ? "{\(segment.dropFirst())}" : String(segment)
        }.joined(separator: "/")
    }

    @Test func everyRouteIsDocumentedAndEveryDocumentedRouteExists() async throws {
        try await TestEnvironment.migrate()
        let parts = try await AppParts(configuration: try TestEnvironment.configuration(), logger: TestEnvironment.logger)
        let router = buildRouter(parts, registry: PrometheusCollectorRegistry())
        // The browser app's own configuration and the page mailed links open are the app's, not
        // the API's (WebAppController); Apple's association file is Apple's format (docs/api.md).
        let served = Set(router.routes.map { "\($0.method.rawValue) \(Self.normalised($0.path.description))" })
            .subtracting(["GET /app-config.json", "GET /t/{tenant}/links/{page}", "GET /.well-known/apple-app-site-association"])
        try await parts.hashingPool.shutdown()
        await parts.pool.close()

        let documented = try Self.documentedRoutes(try Self.document())
        #expect(served.subtracting(documented).sorted() == [], "routes the document lacks")
        #expect(documented.subtracting(served).sorted() == [], "documented operations no route serves")
        #expect(served.contains("GET /v1/openapi.json"))
    }

    @Test func theDocumentIsServedByteForByte() async throws {
        let file = try Data(contentsOf: URL(fileURLWithPath: Self.path))
        try await withApp({ $0.server.openAPIPath = Self.path }) { client in
            try await client.execute(uri: "/v1/openapi.json", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/json")
                #expect(response.headers[HTTPField.Name("X-Request-Id")!] != nil)
                #expect(Data(response.body.readableBytesView) == file)
            }
        }
        let document = try Self.document()
        #expect(document["openapi"] as? String == "3.1.0")
    }

    @Test func aMissingDocumentIsAnInternalErrorNotACrash() async throws {
        try await withApp({ $0.server.openAPIPath = "/nonexistent/openapi.json" }) { client in
            let response = try await client.call(.get, "/v1/openapi.json")
            #expect(response.status == .internalServerError)
            #expect(response.code == "internal")
            #expect(!response.body.contains("nonexistent"), "no internals in the detail")
            #expect(try await client.call(.get, "/healthz").status == .ok)
        }
    }

    /// Rules the document keeps everywhere, so a hand edit cannot quietly break one.
    /// docs/api.md, the reference people read, names every operation of the document and
    /// every problem `code` its responses allow, and its error table no code the document lacks.
    @Test func theAPIReferenceNamesEveryOperationAndErrorCode() throws {
        let reference = try String(contentsOfFile: TestEnvironment.repositoryRoot.appendingPathComponent("docs/api.md").path, encoding: .utf8)
        let document = try Self.document()
        for route in try Self.documentedRoutes(document) where route.contains("/v1/") {
            #expect(reference.contains("`\(route)") || reference.contains("`\(route.replacingOccurrences(of: "GET ", with: ""))`"),
                    "docs/api.md does not name \(route)")
        }
        let responses = try #require((document["components"] as? [String: Any])?["responses"] as? [String: [String: Any]])
        var codes: Set<String> = []
        for response in responses.values {
            let content = (response["content"] as? [String: Any])?["application/problem+json"] as? [String: Any]
            let code = ((content?["schema"] as? [String: Any])?["properties"] as? [String: Any])?["code"] as? [String: Any]
            if let value = code?["const"] as? String { codes.insert(value) }
            for value in code?["enum"] as? [String] ?? [] { codes.insert(value) }
        }
        #expect(codes.count >= 15)
        // The error table's rows: "| status | `code`[, `code`] | meaning |".
        var tabled: Set<String> = []
        for line in reference.split(separator: "\n") where line.hasPrefix("| 4") || line.hasPrefix("| 5") {
            let cells = line.split(separator: "|")
            guard cells.count >= 3 else { continue }
            for part in cells[1].split(separator: "`").enumerated() where part.offset % 2 == 1 { tabled.insert(String(part.element)) }
        }
        #expect(codes.subtracting(tabled).sorted() == [], "codes the reference's error table lacks")
        #expect(tabled.subtracting(codes).sorted() == [], "codes in the reference that no documented response allows")
    }

    @Test func theDocumentIsConsistent() throws {
        let document = try Self.document()
        let schema = JSONSchemaChecker(document: document)
        var operationIDs: Set<String> = []
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        for (path, item) in paths {
            for method in Self.methods {
                guard let operation = item[method] as? [String: Any] else { continue }
                let name = "\(method.uppercased()) \(path)"
                let id = try #require(operation["operationId"] as? String, "\(name) has no operationId")
                #expect(operationIDs.insert(id).inserted, "\(name): operationId \(id) is used twice")
                let open = (operation["security"] as? [Any])?.isEmpty == true
                let responses = try #require(operation["responses"] as? [String: Any], "\(name)")
                #expect(open || responses["401"] != nil, "\(name) needs a token but documents no 401")
                if let body = operation["requestBody"] {
                    // JSON, or a file's bytes (a photo): every media type then takes binary.
                    if let bodySchema = schema.mediaSchema(body, "application/json") {
                        for problem in schema.objectsAllowingUnknownFields(bodySchema, at: "body") {
                            Issue.record("\(name): \(problem) must set additionalProperties: false")
                        }
                    } else {
                        let media = try #require((body as? [String: Any])?["content"] as? [String: [String: Any]], "\(name)")
                        for (type, content) in media {
                            let binary = (content["schema"] as? [String: Any]).map { $0["type"] as? String == "string" && $0["format"] as? String == "binary" }
                            #expect(binary == true, "\(name): \(type) is neither JSON nor binary")
                        }
                    }
                    #expect(responses["415"] != nil && responses["422"] != nil && responses["413"] != nil, "\(name) takes a body")
                }
                for (status, response) in responses {
                    let resolved = try #require(schema.resolve(response) as? [String: Any], "\(name) \(status)")
                    let headers = resolved["headers"] as? [String: Any] ?? [:]
                    #expect(headers["X-Request-Id"] != nil, "\(name) \(status) lacks X-Request-Id")
                    if status.first == "4" || status.first == "5" {
                        #expect(schema.mediaSchema(resolved, "application/problem+json") != nil, "\(name) \(status) is not a problem")
                    }
                }
            }
        }
        #expect(schema.unresolvedReferences().isEmpty, "unresolved: \(schema.unresolvedReferences())")
    }

    /// A few real responses, checked against the document's schemas for their operation and status.
    @Test func realResponsesFitTheDocument() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let checker = JSONSchemaChecker(document: try Self.document())
            func check(_ method: String, _ path: String, _ response: APIResponse, sourceLocation: SourceLocation = #_sourceLocation) throws {
                let problems = try checker.check(response, method: method, path: path)
                #expect(problems == [], "\(method) \(path) \(response.status.code): \(response.body)", sourceLocation: sourceLocation)
            }
            let signup = try await client.call(.post, "/v1/auth/signup", json: ["username": "fit-alice", "password": "a sturdy passphrase", "email": "fit@example.com"], tenant: tenant)
            try check("post", "/v1/auth/signup", signup)
            let token = try signup.decode(API.TokenResponse.self).accessToken
            try check("post", "/v1/auth/signup", try await client.call(.post, "/v1/auth/signup", json: ["username": "x"], tenant: tenant))
            try check("post", "/v1/auth/signup", try await client.call(.post, "/v1/auth/signup", json: ["username": "fit-alice", "password": "another passphrase"], tenant: tenant))
            try check("post", "/v1/auth/login", try await client.call(.post, "/v1/auth/login", json: ["username": "fit-alice", "password": "wrong password"], tenant: tenant))
            try check("get", "/v1/me", try await client.call(.get, "/v1/me", token: token))
            try check("get", "/v1/me", try await client.call(.get, "/v1/me"))
            try check("get", "/v1/users/{username}", try await client.call(.get, "/v1/users/FIT-ALICE", token: token))

            let place = try await client.call(.post, "/v1/places", json: ["name": " The Chair ", "lat": -33.8597, "lng": 151.2225], token: token)
            try check("post", "/v1/places", place)
            let placeID = try place.decode(API.Place.self).id
            try check("get", "/v1/places", try await client.call(.get, "/v1/places?near=-33.86,151.22&q=chair", token: token))
            try check("get", "/v1/places/{id}", try await client.call(.get, "/v1/places/\(placeID)", token: token))
            try check("patch", "/v1/places/{id}", try await client.call(.patch, "/v1/places/\(placeID)", json: ["name": ""], token: token))

            let created = try await client.call(.post, "/v1/notes", json: ["body": "  Window seat  ", "lat": -33.8688, "lng": 151.2093, "place_id": placeID], token: token)
            try check("post", "/v1/notes", created)
            let id = try created.decode(API.Note.self).id
            try check("get", "/v1/notes/{id}", try await client.call(.get, "/v1/notes/\(id)", token: token))
            let tag = try #require(created.headers[.eTag])
            try check("get", "/v1/notes/{id}", try await client.call(.get, "/v1/notes/\(id)", token: token, headers: [.ifNoneMatch: tag]))
            try check("patch", "/v1/notes/{id}", try await client.call(.patch, "/v1/notes/\(id)", json: ["visibility": "private"], token: token, headers: [.ifMatch: tag]))
            try check("get", "/v1/notes", try await client.call(.get, "/v1/notes?near=-33.87,151.2&radius_m=5000&limit=1", token: token))
            try check("get", "/v1/notes", try await client.call(.get, "/v1/notes?radius_m=10", token: token))
            try check("get", "/v1/users/{username}/notes", try await client.call(.get, "/v1/users/fit-alice/notes?q=window", token: token))
            try check("get", "/v1/notes/clusters", try await client.call(.get, "/v1/notes/clusters?bbox=150,-35,152,-33&zoom=3", token: token))
            try check("post", "/v1/notes", try await client.call(.post, "/v1/notes", json: ["body": "", "lat": 91, "lng": 0, "extra": 1], token: token))
            try check("delete", "/v1/notes/{id}", try await client.call(.delete, "/v1/notes/\(id)", token: token))
            try check("delete", "/v1/notes/{id}", try await client.call(.delete, "/v1/notes/\(id)", token: token))
            try check("delete", "/v1/places/{id}", try await client.call(.delete, "/v1/places/\(placeID)", token: token))
            try check("post", "/v1/auth/logout", try await client.call(.post, "/v1/auth/logout", token: token))
        }
    }
}

/// Just enough of JSON Schema 2020-12 to check responses against the document:
/// `$ref`, `allOf`, `oneOf`, `type`, `const`, `enum`, `properties`, `required`,
/// `additionalProperties: false`, `items`, lengths, bounds and `pattern`.
struct JSONSchemaChecker {
    let document: [String: Any]

    func resolve(_ value: Any) -> Any? {
        guard let object = value as? [String: Any], let reference = object["$ref"] as? String else { return value }
        var node: Any? = document
        for part in reference.dropFirst(2).split(separator: "/") {
            node = (node as? [String: Any])?[String(part)]
        }
        return node.flatMap(resolve)
    }

    func mediaSchema(_ container: Any, _ mediaType: String) -> Any? {
        guard let resolved = resolve(container) as? [String: Any], let content = resolved["content"] as? [String: Any],
            let media = content[mediaType] as? [String: Any]
        else { return nil }
        return media["schema"]
    }

    /// Every `$ref` of the document that points nowhere.
    func unresolvedReferences() -> [String] {
        var missing: [String] = []
        func walk(_ value: Any) {
            if let object = value as? [String: Any] {
                if let reference = object["$ref"] as? String, resolve(object) == nil { missing.append(reference) }
                object.values.forEach(walk)
            } else if let array = value as? [Any] {
                array.forEach(walk)
            }
        }
        walk(document)
        return missing
    }

    /// Object schemas (at `path`) that would let an unknown field through.
    func objectsAllowingUnknownFields(_ schema: Any, at path: String) -> [String] {
        guard let schema = resolve(schema) as? [String: Any] else { return [] }
        var found: [String] = []
        if schema["properties"] != nil, schema["additionalProperties"] as? Bool != false { found.append(path) }
        for (name, property) in schema["properties"] as? [String: Any] ?? [:] {
            found += objectsAllowingUnknownFields(property, at: "\(path).\(name)")
        }
        return found
    }

    /// Checks status, content type and body of `response` against the operation's documented response.
    func check(_ response: APIResponse, method: String, path: String) throws -> [String] {
        let paths = document["paths"] as? [String: [String: Any]]
        let operation = try #require(paths?[path]?[method] as? [String: Any], "\(method) \(path) is not documented")
        let responses = operation["responses"] as? [String: Any] ?? [:]
        guard let documented = responses[String(response.status.code)].flatMap(resolve) as? [String: Any] else {
            return ["status \(response.status.code) is not documented"]
        }
        guard let content = documented["content"] as? [String: Any] else {
            return response.body.isEmpty ? [] : ["a body where none is documented"]
        }
        let mediaType = response.headers[.contentType]?.split(separator: ";").first.map(String.init) ?? ""
        guard let schema = (content[mediaType] as? [String: Any])?["schema"] else {
            return ["content type \(mediaType) is not documented"]
        }
        let body = try JSONDecoder().decode(JSONTree.self, from: Data(response.body.utf8))
        return validate(body, against: schema, at: "$")
    }

    func validate(_ value: JSONTree, against schemaValue: Any, at path: String) -> [String] {
        guard let schema = resolve(schemaValue) as? [String: Any] else { return ["\(path): unresolvable schema"] }
        var problems: [String] = []
        for part in schema["allOf"] as? [Any] ?? [] { problems += validate(value, against: part, at: path) }
        if let choices = schema["oneOf"] as? [Any] {
            let matching = choices.filter { validate(value, against: $0, at: path).isEmpty }.count
            if matching != 1 { problems.append("\(path): matches \(matching) of oneOf") }
        }
        if let types = (schema["type"] as? [String]) ?? (schema["type"] as? String).map({ [$0] }),
            !types.contains(where: value.is)
        {
            return problems + ["\(path): \(value) is not \(types.joined(separator: " or "))"]
        }
        if let constant = schema["const"], !value.equals(constant) { problems.append("\(path): \(value) is not \(constant)") }
        if let options = schema["enum"] as? [Any], !options.contains(where: value.equals) {
            problems.append("\(path): \(value) is not one of \(options)")
        }
        switch value {
        case .string(let text):
            let length = text.unicodeScalars.count
            if let minimum = schema["minLength"] as? Int, length < minimum { problems.append("\(path): shorter than \(minimum)") }
            if let maximum = schema["maxLength"] as? Int, length > maximum { problems.append("\(path): longer than \(maximum)") }
            if let pattern = schema["pattern"] as? String, text.range(of: pattern, options: .regularExpression) == nil {
                problems.append("\(path): \"\(text)\" does not match \(pattern)")
            }
        case .number(let number):
            if let minimum = (schema["minimum"] as? NSNumber)?.doubleValue, number < minimum { problems.append("\(path): below \(minimum)") }
            if let maximum = (schema["maximum"] as? NSNumber)?.doubleValue, number > maximum { problems.append("\(path): above \(maximum)") }
        case .array(let items):
            if let itemSchema = schema["items"] {
                for (index, item) in items.enumerated() { problems += validate(item, against: itemSchema, at: "\(path)[\(index)]") }
            }
        case .object(let object):
            let properties = schema["properties"] as? [String: Any] ?? [:]
            for name in schema["required"] as? [String] ?? [] where object[name] == nil { problems.append("\(path).\(name): missing") }
            for (name, field) in object {
                if let property = properties[name] {
                    problems += validate(field, against: property, at: "\(path).\(name)")
                } else if schema["additionalProperties"] as? Bool == false {
                    problems.append("\(path).\(name): not documented")
                }
            }
        case .null, .bool:
            break
        }
        return problems
    }
}

/// The schema checks on a parsed body (`JSONTree`, Support/APIModels.swift: parsed without
/// Foundation's number/boolean ambiguity).
extension JSONTree {
    func `is`(_ type: String) -> Bool {
        switch (self, type) {
        case (.null, "null"), (.bool, "boolean"), (.number, "number"), (.string, "string"), (.array, "array"), (.object, "object"): return true
        case (.number(let number), "integer"): return number.rounded() == number
        default: return false
        }
    }

    /// Compares with a `const` or `enum` value of the schema (strings, numbers, and null in a
    /// nullable enumeration, are all the document uses).
    func equals(_ other: Any) -> Bool {
        switch self {
        case .null: return other is NSNull
        case .string(let text): return other as? String == text
        case .number(let number): return (other as? NSNumber)?.doubleValue == number && !(other is String)
        default: return false
        }
    }
}

