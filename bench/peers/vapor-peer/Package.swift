// swift-tools-version:6.0
// The benchmark's peer (bench/README.md, "The Vapor peer"): the same two routes as the
// service on a mainstream stack, Vapor 4 + postgres-nio, with the plainest SQL. Built
// only by `bench/run.sh --peers`; never part of the root package.
import PackageDescription

let package = Package(
    name: "vapor-peer",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(url: "https://github.com/vapor/vapor.git", from: "4.122.3"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        // As Vapor's template: NIO's event loops as Swift Concurrency's executor (Peer.swift).
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.65.0"),
    ],
    targets: [
        .executableTarget(
            name: "VaporPeer",
            dependencies: [
                .product(name: "Vapor", package: "vapor"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
    ]
)
