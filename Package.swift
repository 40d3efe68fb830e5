// swift-tools-version:6.0
import PackageDescription

// The root package has no package dependencies: toolchain only.
// Benchmarks/ is a package of its own so that it may depend on GRDB for comparison.
// STRATA_INTERNAL_CHECKS: build with this environment variable set (to anything but "" or "0")
// to compile the engine with its internal checks, which cost time on every change of a page in
// memory: the B+tree node's invariants (slots in range, keys ascending, its size and garbage as
// its bytes add up, Sources/StrataEngine/Tree/Node+Invariants.swift) are checked after every
// edit, and a broken one stops the program with a message naming the node and the invariant.
// The sources test `#if STRATA_INTERNAL_CHECKS`. A debug build has the checks compiled in and
// runs them when its process has the variable set, so the engine's tests run with them on the
// tests' own build (CI does):
//   STRATA_INTERNAL_CHECKS=1 swift test --skip-build --filter StrataEngineTests
// A release build without the flag compiles the checks to nothing.
let internalChecks = Context.environment["STRATA_INTERNAL_CHECKS"].map { !$0.isEmpty && $0 != "0" } ?? false
let engineSettings: [SwiftSetting] = internalChecks ? [.define("STRATA_INTERNAL_CHECKS")] : []

let package = Package(
    name: "Strata",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "StrataEngine", targets: ["StrataEngine"]),
        .library(name: "Strata", targets: ["Strata"]),
        .executable(name: "strata", targets: ["StrataTool"]),
        // Object-layer scenarios written once and run on every kind of store (the engine, custom
        // stores, PostgreSQL): the StrataPostgres package depends on it.
        .library(name: "StrataConformance", targets: ["StrataConformance"]),
    ],
    targets: [
        .target(name: "StrataEngine", swiftSettings: engineSettings),
        // Records without model classes: the stored schema, each value type's field codec, the
        // record layout and views, identifiers and errors, the history record format, and the
        // readers the `strata` tool needs. The object layer (Strata) sits on it.
        .target(name: "StrataRecords", dependencies: ["StrataEngine"]),
        .target(name: "Strata", dependencies: ["StrataRecords", "StrataEngine"]),
        .executableTarget(name: "StrataTool", dependencies: ["Strata", "StrataRecords", "StrataEngine"]),
        // The conformance suite of the object layer: public API only, no Testing (a library).
        .target(name: "StrataConformance", dependencies: ["Strata"]),
        // A simulated file system (fault seam) and the torture workload, shared by the test
        // suites and the reliability tools.
        .target(name: "StrataTestSupport", dependencies: ["StrataEngine", "StrataRecords", "Strata", "StrataConformance"]),
        // A child process for the tests: holds a store open, or saves in a loop until killed.
        .executableTarget(name: "StrataTestHelper", dependencies: ["Strata", "StrataEngine", "StrataTestSupport"]),
        .testTarget(name: "StrataEngineTests", dependencies: ["StrataEngine", "StrataTestSupport", "StrataTestHelper"]),
        .testTarget(name: "StrataTests", dependencies: ["StrataRecords", "Strata", "StrataEngine", "StrataTestSupport", "StrataConformance"]),
        // Runs the built `strata` tool as a process on real stores (clean, damaged, locked).
        .testTarget(name: "StrataToolTests", dependencies: ["StrataRecords", "StrataEngine", "Strata", "StrataTool", "StrataTestSupport"]),
        // Kill -9, power loss and I/O faults at the object level, fuzz regressions, two processes.
        .testTarget(name: "StrataReliabilityTests", dependencies: ["StrataRecords", "Strata", "StrataEngine", "StrataTestSupport", "StrataTestHelper"]),
    ],
    swiftLanguageModes: [.v6]
)
