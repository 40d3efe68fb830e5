// swift-tools-version:6.0
import PackageDescription

// StrataPostgres's benchmarks: W1, W3-W7 and W9 of shared/BENCH.md against one local
// PostgreSQL server, three ways side by side: Strata through `PostgresConfiguration`, the same
// work written by hand with postgres-nio, and Fluent (fluent-kit + fluent-postgres-driver).
// A package of its own, so that neither StrataPostgres nor CI builds Fluent. Build and run
// with `StrataPostgres/Benchmarks/run.sh` (release only). Its Course.swift is a symbolic link to
// the root benchmarks' (Benchmarks/Sources/StrataBenchmarks/Data): the same records, made alike.

// Path dependencies are identified by their folder's name: this folder's parent is the
// StrataPostgres package, and its parent the root package (the clone, whatever its name).
let folders = Context.packageDirectory.split(separator: "/").map { String($0).lowercased() }
let postgresIdentity = folders.dropLast().last ?? "stratapostgres"
let rootIdentity = folders.dropLast(2).last ?? "strata"

let package = Package(
    name: "StrataPostgresBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: "../.."),
        .package(path: ".."),
        .package(url: "https://github.com/vapor/postgres-nio", exact: "1.33.2"),
        .package(url: "https://github.com/vapor/fluent-kit", exact: "1.57.0"),
        .package(url: "https://github.com/vapor/fluent-postgres-driver", exact: "2.14.0"),
    ],
    targets: [
        .executableTarget(
            name: "StrataPostgresBenchmarks",
            dependencies: [
                .product(name: "Strata", package: rootIdentity),
                .product(name: "StrataPostgres", package: postgresIdentity),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
