// swift-tools-version:6.0
import CompilerPluginSupport
import PackageDescription

// StrataData: SwiftData's macros (@Model, @Attribute, @Relationship, @Transient, #Unique,
// #Index, @ModelActor) over Strata. A package of its own so that the root package keeps zero
// dependencies: this one depends on the root package by path and on swift-syntax (macros need
// it). `import StrataData` gives Strata and the macros; on Apple platforms, where SwiftData
// exists, it gives SwiftData instead, so one source builds on both.

// A path dependency's identity is the name of its folder (the clone's name), so find it
// rather than assume it.
let rootIdentity = Context.packageDirectory.split(separator: "/").dropLast().last.map { String($0).lowercased() } ?? "strata"

// Which tests the package declares: both suites, unless STRATA_DATA_TESTS=models or =macros
// names one. A test target that depends on a macro target directly (the expansion tests do:
// they run the macros in process) makes SwiftPM build every test target of the package, and all
// they depend on, for the host as well ("-tool" modules): the root package's sources compiled a
// second time in this package's build, minutes on two cores. CI runs the two suites in two runs,
// so that the model tests build on the modules the root package's build already made.
let declaredTests = Context.environment["STRATA_DATA_TESTS"]
let modelTests = declaredTests != "macros"
let macroTests = declaredTests != "models"

let package = Package(
    name: "StrataData",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "StrataData", targets: ["StrataData"]),
    ],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/swiftlang/swift-syntax", "600.0.1"..<"604.0.0"),
    ],
    targets: [
        .macro(
            name: "StrataDataMacros",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
            ]
        ),
        .target(
            name: "StrataData",
            dependencies: [
                "StrataDataMacros",
                .product(name: "Strata", package: rootIdentity),
            ]
        ),
        // A multi-file, public model layer shaped like a real app's, in the Swift 5 language
        // mode as such packages often are (Apple's Backyard Birds sample is): it compiles only if
        // what `@Model` writes does not depend on the order in which the compiler sees the files.
        .target(
            name: "ModelLayerFixture",
            dependencies: ["StrataData"],
            path: "Tests/ModelLayerFixture",
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // W8 (open a store in a fresh process, fetch one object) with `@Model` classes, which
        // Benchmarks/run.sh runs beside the macro-free W8 (the benchmarks package does not build
        // swift-syntax). Built here, so that CI's StrataData step compiles it.
        .executableTarget(
            name: "StrataModelReopen",
            dependencies: ["StrataData"]
        ),
        // The root's conformance scenarios on models the macros wrote: the scenario files are
        // symbolic links to Sources/StrataConformance (so there is one copy of each scenario),
        // and Models.swift is this target's own, the same models spelled with @Model.
        .target(
            name: "StrataDataConformance",
            dependencies: ["StrataData", .product(name: "Strata", package: rootIdentity)]
        ),
    ],
    swiftLanguageModes: [.v6]
)

if macroTests {
    package.targets.append(
        // What each macro writes, and its diagnostics (no Strata needed).
        .testTarget(
            name: "StrataDataMacrosTests",
            dependencies: [
                "StrataDataMacros",
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
            ]
        ))
}
if modelTests {
    package.targets.append(
        // Models written as SwiftData writes them, used through Strata.
        .testTarget(
            name: "StrataDataTests",
            dependencies: ["StrataData", "ModelLayerFixture", "StrataDataConformance"]
        ))
}
