import Foundation
import Strata

/// A scenario's check that did not hold: what was expected, and where (the scenario's line).
public struct ConformanceFailure: Error, CustomStringConvertible, Sendable {
    public let message: String
    public let file: String
    public let line: Int

    public init(_ message: String, file: String, line: Int) {
        self.message = message
        self.file = file
        self.line = line
    }

    public var description: String { "\(URL(fileURLWithPath: file).lastPathComponent):\(line): \(message)" }
}

/// Throws a `ConformanceFailure` unless `condition` holds.
func check(_ condition: Bool, _ message: @autoclosure () -> String = "check failed",
           file: StaticString = #filePath, line: UInt = #line) throws {
    if !condition { throw ConformanceFailure(message(), file: "\(file)", line: Int(line)) }
}

/// Throws unless `actual == expected`, saying both.
func checkEqual<T: Equatable>(_ actual: T, _ expected: T, _ message: @autoclosure () -> String = "",
                              file: StaticString = #filePath, line: UInt = #line) throws {
    guard actual != expected else { return }
    let note = message()
    throw ConformanceFailure("expected \(String(reflecting: expected)), got \(String(reflecting: actual))" + (note.isEmpty ? "" : " (\(note))"),
                             file: "\(file)", line: Int(line))
}

/// Throws unless both are the same object (or both nil).
func checkIdentical(_ actual: AnyObject?, _ expected: AnyObject?, _ message: @autoclosure () -> String = "not the same object",
                    file: StaticString = #filePath, line: UInt = #line) throws {
    if actual !== expected { throw ConformanceFailure(message(), file: "\(file)", line: Int(line)) }
}

/// The value, or a failure saying what was missing.
func require<T>(_ value: T?, _ message: @autoclosure () -> String = "unexpected nil",
                file: StaticString = #filePath, line: UInt = #line) throws -> T {
    guard let value else { throw ConformanceFailure(message(), file: "\(file)", line: Int(line)) }
    return value
}

/// Throws unless `body` throws an error that `matches`; returns that error.
@discardableResult
func checkThrows(_ message: String = "expected an error", file: StaticString = #filePath, line: UInt = #line,
                 matching matches: (any Error) -> Bool = { _ in true }, _ body: () throws -> Void) throws -> any Error {
    do {
        try body()
    } catch {
        if matches(error) { return error }
        throw ConformanceFailure("\(message): got the wrong error: \(String(reflecting: error))", file: "\(file)", line: Int(line))
    }
    throw ConformanceFailure("\(message): nothing was thrown", file: "\(file)", line: Int(line))
}

/// Throws unless `body` throws a `StrataError` with `code`; returns it.
@discardableResult
func checkThrows(_ code: StrataError.Code, _ message: String = "", file: StaticString = #filePath, line: UInt = #line,
                 _ body: () throws -> Void) throws -> StrataError {
    let error = try checkThrows("expected StrataError .\(code)" + (message.isEmpty ? "" : " (\(message))"), file: file, line: line,
                                matching: { ($0 as? StrataError)?.code == code }, body)
    guard let strataError = error as? StrataError else {
        throw ConformanceFailure("expected StrataError .\(code): got \(String(reflecting: error))", file: "\(file)", line: Int(line))
    }
    return strataError
}

/// Object identities of a list of models, for comparing which objects two fetches gave.
func identities(_ objects: [any PersistentModel]) -> [ObjectIdentifier] { objects.map { ObjectIdentifier($0 as AnyObject) } }
