// swift-tools-version:6.0
import PackageDescription

// StrataPostgres: the same models on PostgreSQL (and the engines that speak its protocol), as a
// custom store (`PostgresConfiguration` is a `DataStoreConfiguration`). A package of its own so
// that the root package keeps zero dependencies: this one depends on the root package by path
// and on vapor/postgres-nio.

// A path dependency's identity is the name of its folder (the clone's name), so find it
// rather than assume it.
let rootIdentity = Context.packageDirectory.split(separator: "/").dropLast().last.map { String($0).lowercased() } ?? "strata"

let package = Package(
    name: "StrataPostgres",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "StrataPostgres", targets: ["StrataPostgres"]),
    ],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/vapor/postgres-nio", exact: "1.33.2"),
    ],
    targets: [
        .target(
            name: "StrataPostgres",
            dependencies: [
                .product(name: "Strata", package: rootIdentity),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        // The models and workloads the tests and their child processes share.
        .target(
            name: "StrataPostgresTestSupport",
            dependencies: ["StrataPostgres", .product(name: "Strata", package: rootIdentity)],
            path: "Tests/Support"
        ),
        // A child process for the tests: saves to a server (many writers at once), or watches
        // it (observers across processes).
        .executableTarget(
            name: "StrataPostgresTestHelper",
            dependencies: ["StrataPostgres", "StrataPostgresTestSupport", .product(name: "Strata", package: rootIdentity)],
            path: "Tests/Helper"
        ),
        .testTarget(
            name: "StrataPostgresTests",
            dependencies: ["StrataPostgres", "StrataPostgresTestSupport", "StrataPostgresTestHelper",
                           .product(name: "Strata", package: rootIdentity),
                           .product(name: "StrataConformance", package: rootIdentity),
                           .product(name: "PostgresNIO", package: "postgres-nio")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
