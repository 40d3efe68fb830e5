// swift-tools-version:6.0
// A driver for callgrind: one workload of Benchmarks/ on Strata alone, at a small size, so
// that `valgrind --tool=callgrind` counts its instructions exactly (see profile.sh).
import PackageDescription

// A path dependency's identity is the name of its folder (the clone's name): find it.
let rootIdentity = Context.packageDirectory.split(separator: "/").dropLast(2).last.map { String($0).lowercased() } ?? "strata"

let package = Package(
    name: "StrataProfile",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "../..")],
    targets: [
        .executableTarget(name: "StrataProfile", dependencies: [
            .product(name: "Strata", package: rootIdentity),
            .product(name: "StrataEngine", package: rootIdentity),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
