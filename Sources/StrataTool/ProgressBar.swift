import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
import StrataRecords
#endif

/// A progress bar on standard error, drawn only when standard error is a terminal (so logs and
/// pipes get no control characters). Safe to update from any thread.
final class ProgressBar: @unchecked Sendable {
    /// True when standard error is a terminal.
    static var isTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    private let label: String
    /// False when standard error is not a terminal: nothing is drawn.
    let isEnabled: Bool
    private let lock = NSLock()
    private var shown = -1
    private let width = 30

    init(_ label: String, enabled: Bool = ProgressBar.isTerminal) {
        self.label = label
        self.isEnabled = enabled
    }

    /// Shows `fraction` (0...1) done; redraws only when the percentage changes.
    func update(_ fraction: Double) {
        guard isEnabled else { return }
        let percent = Int((min(max(fraction, 0), 1) * 100).rounded(.down))
        lock.withLock {
            guard percent != shown else { return }
            shown = percent
            let filled = percent * width / 100
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
            FileHandle.standardError.write(Data("\r\(label) [\(bar)] \(String(format: "%3d", percent))%".utf8))
        }
    }

    /// Clears the bar's line.
    func finish() {
        guard isEnabled else { return }
        lock.withLock {
            guard shown >= 0 else { return }
            FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8))
            shown = -1
        }
    }
}
