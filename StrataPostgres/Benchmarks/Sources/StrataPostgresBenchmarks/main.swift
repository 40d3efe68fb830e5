import Foundation

// StrataPostgres's benchmarks: Runner.swift runs them; Docs/Postgres.md ("Benchmarks") says how.
do {
    let options = try Options.parse(Array(CommandLine.arguments.dropFirst()))
    try await Runner(options: options).run()
} catch {
    FileHandle.standardError.write(Data("StrataPostgresBenchmarks: \(error)\n".utf8))
    exit(1)
}
