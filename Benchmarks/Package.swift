// swift-tools-version:6.0
import PackageDescription

// The benchmarks are a package of their own so that the root package keeps zero
// dependencies: this one depends on the root package by path and on GRDB (SQLite) as the
// peer to compare against. Build and run with `Benchmarks/run.sh` (release only).

// A path dependency's identity is the name of its folder (the clone's name), so find it
// rather than assume it.
let rootIdentity = Context.packageDirectory.split(separator: "/").dropLast().last.map { String($0).lowercased() } ?? "strata"

let package = Package(
    name: "StrataBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        .executableTarget(
            name: "StrataBenchmarks",
            dependencies: [
                .product(name: "StrataEngine", package: rootIdentity),
                .product(name: "Strata", package: rootIdentity),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
