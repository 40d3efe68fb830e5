import Foundation

/// Number formats for the tables and the chart.
enum Format {
    static func rate(_ perSecond: Double) -> String {
        switch perSecond {
        case 1e6...: return String(format: "%.2fM/s", perSecond / 1e6)
        case 1e4...: return String(format: "%.0fk/s", perSecond / 1e3)
        case 1e3...: return String(format: "%.1fk/s", perSecond / 1e3)
        default: return String(format: "%.0f/s", perSecond)
        }
    }

    static func time(_ seconds: Double) -> String {
        switch seconds {
        case 10...: return String(format: "%.1f s", seconds)
        case 1...: return String(format: "%.2f s", seconds)
        case 1e-3...: return String(format: "%.1f ms", seconds * 1e3)
        default: return String(format: "%.1f µs", seconds * 1e6)
        }
    }

    static func bytes(_ n: Int) -> String {
        let d = Double(n)
        switch d {
        case 1_073_741_824...: return String(format: "%.2f GiB", d / 1_073_741_824)
        case 1_048_576...: return String(format: "%.1f MiB", d / 1_048_576)
        case 1024...: return String(format: "%.1f KiB", d / 1024)
        default: return "\(n) B"
        }
    }

    static func kilobytes(_ kb: Int) -> String { bytes(kb * 1024) }

    static func ratio(_ r: Double) -> String {
        r >= 10 ? String(format: "%.0f×", r) : String(format: "%.2f×", r)
    }

    static func count(_ n: Int) -> String {
        let s = String(n)
        var out = ""
        for (i, c) in s.reversed().enumerated() {
            if i > 0 && i % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return String(out.reversed())
    }
}
