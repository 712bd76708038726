// swift-tools-version: 6.0
// LandmarkRemarkClient: the Swift client of the Landmark Remark API, for iOS and macOS apps
// (URLSession) and Linux (AsyncHTTPClient). A package of its own: an app that adds it
// resolves the OpenAPI runtime and one transport, nothing of the server.
import PackageDescription

let apple: [Platform] = [.iOS, .macOS, .tvOS, .watchOS, .visionOS]

let package = Package(
    name: "LandmarkRemarkClient",
    platforms: [.iOS(.v16), .macOS(.v13), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "LandmarkRemarkClient", targets: ["LandmarkRemarkClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession.git", from: "1.4.0"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.5.0"),
    ],
    targets: [
        // Generated from openapi/openapi.json by scripts/generate-client.sh (committed; `make test`
        // fails when regenerating would change it). Apps use LandmarkRemarkClient, not this.
        .target(
            name: "LandmarkRemarkAPI",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            exclude: ["openapi-generator-config.yaml"]
        ),
        .target(
            name: "LandmarkRemarkClient",
            dependencies: [
                "LandmarkRemarkAPI",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession", condition: .when(platforms: apple)),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client", condition: .when(platforms: [.linux])),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
