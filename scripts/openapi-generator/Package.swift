// swift-tools-version: 6.0
// Builds apple/swift-openapi-generator's command for scripts/generate-client.sh, which turns
// openapi/openapi.json into the Swift client's generated code (committed, so that apps
// build the client without the generator and its plugin).
import PackageDescription

let package = Package(
    name: "openapi-generator-tool",
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-generator.git", exact: "1.14.3"),
    ],
    targets: []
)
